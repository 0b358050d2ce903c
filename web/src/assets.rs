//! The static files of the pages: the board drawing (shared with `flipzero serve`'s
//! page) and the serverless player's page, embedded so that the binary writes them.

/// Draws a position view as SVG and turns clicks into moves (both pages).
pub const BOARD_JS: &str = include_str!("../assets/board.js");
/// The board's colours (both pages).
pub const BOARD_CSS: &str = include_str!("../assets/board.css");
/// The WebAssembly player's JavaScript interface (`FlipzeroPlayer`).
pub const PLAYER_JS: &str = include_str!("../assets/flipzero.js");
/// The serverless player's page.
pub const PAGE_HTML: &str = include_str!("../assets/index.html");
/// Its script.
pub const PAGE_JS: &str = include_str!("../assets/play.js");
/// Its style.
pub const PAGE_CSS: &str = include_str!("../assets/play.css");
