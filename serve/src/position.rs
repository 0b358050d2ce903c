//! Positions and moves from requests: the checks of `web::position` as 400 answers.
//! The views the page draws are `web::position`'s.

use engine::{Game, Move, State};

use crate::error::ApiError;
pub use web::position::{BoardCell, LegalMove, Outcome, PositionView, move_cells, view};

/// Parses a game name (400 when unknown).
pub fn parse_game(name: &str) -> Result<Game, ApiError> {
    name.parse()
        .map_err(|e: engine::UnknownGameName| ApiError::BadRequest(e.to_string()))
}

/// Parses a position of `game`; `None` or empty text is the start (400 when malformed).
pub fn parse_state(game: Game, text: Option<&str>) -> Result<State, ApiError> {
    web::position::parse_position(game, text).map_err(ApiError::BadRequest)
}

/// Parses a move that must be legal in `state` (400 otherwise, or when the game is over).
pub fn parse_legal_move(state: &State, text: &str) -> Result<Move, ApiError> {
    web::position::parse_legal_move(state, text).map_err(ApiError::BadRequest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_is_a_400() {
        let g = parse_game("othello").unwrap();
        assert_eq!(parse_game("go").unwrap_err().status(), 400);
        assert_eq!(parse_state(g, Some("nonsense")).unwrap_err().status(), 400);
        let s = g.startpos();
        assert_eq!(parse_legal_move(&s, "a1").unwrap_err().status(), 400);
        assert_eq!(parse_legal_move(&s, "zz9").unwrap_err().status(), 400);
        let legal = s.move_to_string(s.legal_moves()[0]);
        assert_eq!(parse_legal_move(&s, &legal).unwrap(), s.legal_moves()[0]);
    }
}
