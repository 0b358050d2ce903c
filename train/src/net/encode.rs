//! Input planes: the one definition of how a position is fed to the network, shared by
//! training, inference, export and `flipzero infer` (and documented in model.json).
//!
//! Planes cover the game's grid (see `engine::Game::grid`), are seen from the side to
//! move, and come in this order:
//! 0. pieces of the side to move;
//! 1. pieces of the opponent;
//! 2. cells that cannot hold a piece: blocked cells and grid cells off the board;
//! 3. the half-move clock divided by 100 (Ataxx family; 0 otherwise), on every cell;
//! 4. 1 on every cell during the opening placement phase (outflanking games);
//! 5. the side to move's remaining supply divided by its initial supply (0 when
//!    unlimited);
//! 6. the same for the opponent.

use engine::flank::Phase;
use engine::{Game, Side, State};
use ndarray::{Array3, Array4};

/// Number of input planes.
pub const PLANES: usize = 7;

/// Names of the input planes, in order.
pub const PLANE_NAMES: [&str; PLANES] = [
    "own_pieces",
    "opponent_pieces",
    "blocked_or_off_board",
    "halfmove_clock_div_100",
    "placement_phase",
    "own_supply_fraction",
    "opponent_supply_fraction",
];

/// Writes the planes of `state` into `out` (length `PLANES * height * width`, layout
/// `[plane][y][x]`).
pub fn encode_into(state: &State, out: &mut [f32]) {
    let game = state.game();
    let (w, h) = game.grid();
    let area = w * h;
    debug_assert_eq!(out.len(), PLANES * area);
    out.fill(0.0);
    // Every grid cell starts as "off the board"; board cells clear it below.
    out[2 * area..3 * area].fill(1.0);
    let us = state.side_to_move();
    for cell in game.cells() {
        let (x, y) = game.grid_xy(cell);
        let i = y * w + x;
        out[2 * area + i] = if state.is_blocked(cell) { 1.0 } else { 0.0 };
        match state.piece_at(cell) {
            Some(s) if s == us => out[i] = 1.0,
            Some(_) => out[area + i] = 1.0,
            None => {}
        }
    }
    let fill = |out: &mut [f32], plane: usize, v: f32| {
        if v != 0.0 {
            out[plane * area..(plane + 1) * area].fill(v);
        }
    };
    match state {
        State::Ataxx(p) => fill(out, 3, f32::from(p.halfmove_clock()) / 100.0),
        State::Flank(p) => {
            if p.phase() == Phase::Place {
                fill(out, 4, 1.0);
            }
            if let Some(initial) = p.board().supply {
                let frac =
                    |s: Side| f32::from(p.supply(s).unwrap_or(0)) / f32::from(initial.max(1));
                fill(out, 5, frac(us));
                fill(out, 6, frac(us.other()));
            }
        }
    }
}

/// The planes of `state`, `[PLANES, height, width]`.
pub fn encode(state: &State) -> Array3<f32> {
    let (w, h) = state.game().grid();
    let mut a = Array3::zeros((PLANES, h, w));
    encode_into(
        state,
        a.as_slice_mut().expect("a new array is in standard layout"),
    );
    a
}

/// The planes of a batch of positions, `[states.len(), PLANES, height, width]`: row `i`
/// is `encode(&states[i])`. An empty batch has the shape `[0, PLANES, 0, 0]`.
///
/// # Panics
///
/// If the positions are not all of one game (their grids, hence the array's shape,
/// differ).
pub fn encode_batch(states: &[State]) -> Array4<f32> {
    let Some(first) = states.first() else {
        return Array4::zeros((0, PLANES, 0, 0));
    };
    let game = first.game();
    let (w, h) = game.grid();
    let mut a = Array4::zeros((states.len(), PLANES, h, w));
    let flat = a.as_slice_mut().expect("a new array is in standard layout");
    for (s, out) in states.iter().zip(flat.chunks_exact_mut(PLANES * w * h)) {
        assert!(
            s.game() == game,
            "encode_batch: a {} position in a batch of {game}",
            s.game()
        );
        encode_into(s, out);
    }
    a
}

/// Grid size `(height, width)` of a game, as the network sees it.
pub fn grid_hw(game: Game) -> (usize, usize) {
    let (w, h) = game.grid();
    (h, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_are_side_relative() {
        let g: Game = "ataxx".parse().unwrap();
        let s = g.parse_position("x5o/7/7/7/7/7/o5x o 7 1").unwrap();
        let v = encode(&s);
        assert_eq!(v.shape(), [PLANES, 7, 7]);
        let v = v.as_slice().unwrap();
        let at = |plane: usize, x: usize, y: usize| v[plane * 49 + y * 7 + x];
        // o to move: o's pieces (g7, a1) are "own".
        assert_eq!(
            (at(0, 6, 6), at(0, 0, 0), at(1, 0, 6), at(1, 6, 0)),
            (1.0, 1.0, 1.0, 1.0)
        );
        assert_eq!(at(3, 3, 3), 0.07);
        assert_eq!(v[2 * 49..3 * 49].iter().sum::<f32>(), 0.0);
        // Hexxagon: 20 grid cells are off the board, 3 are blocked.
        let h: Game = "hexxagon".parse().unwrap();
        let v = encode(&h.startpos()).into_raw_vec_and_offset().0;
        assert_eq!(v[2 * 81..3 * 81].iter().sum::<f32>(), 23.0);
        // Annexation 64 in its placement phase, full supplies.
        let a: Game = "annexation64".parse().unwrap();
        let v = encode(&a.startpos()).into_raw_vec_and_offset().0;
        assert_eq!(v[2 * 100..3 * 100].iter().sum::<f32>(), 36.0);
        assert_eq!((v[4 * 100], v[5 * 100], v[6 * 100]), (1.0, 1.0, 1.0));
    }

    /// `encode_batch` stacks `encode`: every game family, positions after random moves
    /// (so the clock and supply planes are not all zero or all one).
    #[test]
    fn encode_batch_stacks_encode() {
        for name in ["ataxx", "hexxagon", "othello", "annexation64"] {
            let g: Game = name.parse().unwrap();
            let mut rng = engine::Rng::new(7);
            let mut states = vec![g.startpos()];
            for _ in 0..9 {
                let mut s = *states.last().unwrap();
                let moves = s.legal_moves();
                if moves.is_empty() {
                    break;
                }
                s.play(moves[rng.below(moves.len() as u64) as usize]);
                states.push(s);
            }
            let batch = encode_batch(&states);
            let (w, h) = g.grid();
            assert_eq!(batch.shape(), [states.len(), PLANES, h, w], "{name}");
            for (i, s) in states.iter().enumerate() {
                assert_eq!(
                    batch.index_axis(ndarray::Axis(0), i),
                    encode(s),
                    "{name} {i}"
                );
            }
            // The rows differ: a stacking that repeated one position would pass above
            // only if every position encoded the same.
            assert_ne!(
                batch.index_axis(ndarray::Axis(0), 0),
                batch.index_axis(ndarray::Axis(0), states.len() - 1),
                "{name}"
            );
        }
        assert_eq!(encode_batch(&[]).shape(), [0, PLANES, 0, 0]);
    }
}
