//! The page's static files, embedded in the binary (nothing is fetched from elsewhere).

/// The file `name` and its media type, if it is one of the page's files.
pub fn get(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "index.html" => (
            include_str!("../assets/index.html"),
            "text/html; charset=utf-8",
        ),
        "app.js" => (
            include_str!("../assets/app.js"),
            "text/javascript; charset=utf-8",
        ),
        "charts.js" => (
            include_str!("../assets/charts.js"),
            "text/javascript; charset=utf-8",
        ),
        "analysis.js" => (
            include_str!("../assets/analysis.js"),
            "text/javascript; charset=utf-8",
        ),
        "app.css" => (include_str!("../assets/app.css"), "text/css; charset=utf-8"),
        // The board, shared with the serverless player (`web`).
        "board.js" => (web::assets::BOARD_JS, "text/javascript; charset=utf-8"),
        "board.css" => (web::assets::BOARD_CSS, "text/css; charset=utf-8"),
        _ => return None,
    })
}
