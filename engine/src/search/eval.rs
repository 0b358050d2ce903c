//! The hand-written evaluation, from the side to move's view, in centi-pieces (100 = one
//! piece): its weights are search parameters (`ev_*`), tuned with the search.

use super::params::Params;
use crate::flank::{FlankPosition, Phase};
use crate::geometry::Geometry;
use crate::movegen::{Kernel, with_kernel};
use crate::{Position, State};

/// The evaluation with the original weights (those of [`Params::FULL_WIDTH`]).
#[inline(always)]
pub fn evaluate(s: &State) -> i32 {
    evaluate_with(s, &Params::FULL_WIDTH)
}

/// The evaluation with the weights of `p`.
pub fn evaluate_with(s: &State, p: &Params) -> i32 {
    Weights::of(p).evaluate(s)
}

/// The evaluation's weights, laid out for the evaluation (a search keeps them beside its
/// parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weights {
    mobility: i32,
    exposed_own: i32,
    exposed_opp: i32,
    /// Per phase (empty board, full board).
    material: [i32; 2],
    tempo: [i32; 2],
    safe: [i32; 2],
    pst: [[i32; Geometry::CLASSES]; 2],
    /// By the number of the side to move's pieces next to the hole (0 unused).
    hole: [[i32; 9]; 2],
    /// By the number of enemy pieces next to a cell the side to move can land on.
    target: [[i32; 9]; 2],
    /// Whether any piece-square or hole weight is set (else they are not computed).
    pst_on: bool,
    hole_on: bool,
}

impl Weights {
    /// The weights of `p`.
    pub fn of(p: &Params) -> Weights {
        let get = |name: String| p.get(&name).expect("an evaluation parameter");
        let pst: [[i32; Geometry::CLASSES]; 2] =
            ["mg", "eg"].map(|ph| std::array::from_fn(|c| get(format!("ev_pst{c}_{ph}"))));
        let by_count = |term: &str| -> [[i32; 9]; 2] {
            ["mg", "eg"].map(|ph| {
                std::array::from_fn(|k| {
                    if k == 0 {
                        0
                    } else {
                        get(format!("ev_{term}{k}_{ph}"))
                    }
                })
            })
        };
        let (hole, target) = (by_count("hole"), by_count("target"));
        Weights {
            mobility: p.ev_mobility,
            exposed_own: p.ev_exposed_own,
            exposed_opp: p.ev_exposed_opp,
            material: [100, p.ev_material_eg],
            tempo: [p.ev_tempo_mg, p.ev_tempo_eg],
            safe: [p.ev_safe_mg, p.ev_safe_eg],
            pst_on: pst.iter().flatten().any(|&w| w != 0),
            hole_on: hole.iter().chain(&target).flatten().any(|&w| w != 0),
            pst,
            hole,
            target,
        }
    }

    /// The evaluation of `s` (a position whose game is not over).
    #[inline(always)]
    pub fn evaluate(&self, s: &State) -> i32 {
        match s {
            State::Ataxx(pos) => with_kernel!(pos.rules().variant, K => self.ataxx::<K>(pos)),
            State::Flank(pos) => evaluate_flank(pos),
        }
    }

    /// Ataxx family: material; piece-square terms by cell class; holes (empty cells the
    /// opponent can reach, by how many of the side to move's pieces a landing there
    /// flips) and targets (the same for the side to move's landings); safe pieces
    /// (no empty cell next to them); the side to move's tempo; each blended from its
    /// empty-board to its full-board weight by the share of cells filled. Then mobility
    /// and exposure, the original evaluation's terms.
    #[inline(always)]
    fn ataxx<K: Kernel>(&self, pos: &Position) -> i32 {
        let us = pos.side_to_move();
        let own = pos.pieces(us).0;
        let opp = pos.pieces(us.other()).0;
        let empty = pos.empty().0;
        let (own_reach, opp_reach) = (K::reach(own), K::reach(opp));
        let mut ph = [0i32; 2];
        for (i, w) in ph.iter_mut().enumerate() {
            let material = own.count_ones() as i32 - opp.count_ones() as i32;
            *w = self.material[i] * material;
        }
        if self.safe[0] != 0 || self.safe[1] != 0 {
            // Cells next to an empty cell: an empty cell's clone neighbours.
            let near_empty = K::clone_targets(empty);
            let safe =
                (own & !near_empty).count_ones() as i32 - (opp & !near_empty).count_ones() as i32;
            ph[0] += self.safe[0] * safe;
            ph[1] += self.safe[1] * safe;
        }
        if self.pst_on {
            for (c, cells) in K::GEOMETRY.classes.iter().enumerate() {
                let d = (own & cells.0).count_ones() as i32 - (opp & cells.0).count_ones() as i32;
                ph[0] += self.pst[0][c] * d;
                ph[1] += self.pst[1][c] * d;
            }
        }
        if self.hole_on {
            for (side, reach, w) in [(own, opp_reach, &self.hole), (opp, own_reach, &self.target)] {
                let mut holes = K::clone_targets(side) & empty & reach;
                while holes != 0 {
                    let cell = holes.trailing_zeros() as usize;
                    let k = ((K::flip_mask(cell) & side).count_ones() as usize).min(8);
                    ph[0] += w[0][k];
                    ph[1] += w[1][k];
                    holes &= holes - 1;
                }
            }
        }
        if pos.rules().misere {
            ph = ph.map(|v| -v);
        }
        ph[0] += self.tempo[0];
        ph[1] += self.tempo[1];
        let filled = (own | opp).count_ones() as i32;
        let cells = (pos.playable().0.count_ones() as i32).max(1);
        let mut score = (ph[0] * (cells - filled) + ph[1] * filled) / cells;
        if self.mobility != 0 || self.exposed_own != 0 || self.exposed_opp != 0 {
            let (own_land, opp_land) = (own_reach & empty, opp_reach & empty);
            let own_exposed = (K::flip_targets(opp_land) & own).count_ones() as i32;
            let opp_exposed = (K::flip_targets(own_land) & opp).count_ones() as i32;
            score += self.mobility * (own_land.count_ones() as i32 - opp_land.count_ones() as i32)
                - self.exposed_own * own_exposed
                + self.exposed_opp * opp_exposed;
        }
        score
    }
}

/// Outflanking games: mobility and corners (cells no line can flip) while the board is
/// open, material as it fills.
fn evaluate_flank(p: &FlankPosition) -> i32 {
    let us = p.side_to_move();
    let (own, opp) = (p.count(us) as i32, p.count(us.other()) as i32);
    let mut material = own - opp;
    if p.rules().misere {
        material = -material;
    }
    if p.phase() == Phase::Place {
        return 0;
    }
    let empties = p.board().num_cells() as i32 - own - opp;
    let corner = p.corner_count(us) as i32 - p.corner_count(us.other()) as i32;
    let mobility = p.mobility(us) as i32 - p.mobility(us.other()) as i32;
    if empties <= 12 {
        100 * material + 20 * corner
    } else {
        10 * material + 60 * mobility + 300 * corner
    }
}
