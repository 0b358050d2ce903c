//! Perft of the outflanking games.

use std::marker::PhantomData;

use super::boards::FlankBoard;
use super::grid8::Grid8;
use super::position::{Cells, Core, FlankPosition, Phase, Repr, UNLIMITED, with_core};
use crate::Isa;
use crate::isa::{Level, Task, with_level};

/// Perft for outflanking games (pass = one move, finished game = no children; bulk
/// counting at the last ply).
pub fn flank_perft(pos: &FlankPosition, depth: u32) -> u64 {
    flank_perft_with(pos, depth, Isa::current())
}

/// [`flank_perft`] run by the kernels of instruction-set level `isa` (the portable ones
/// where this CPU lacks it): every level counts the same.
pub fn flank_perft_with(pos: &FlankPosition, depth: u32, isa: Isa) -> u64 {
    let b = pos.board();
    with_core!(pos, C, c => with_level!(isa, L, l => {
        l.run(Perft::<C> { core: c, board: b, depth, cells: PhantomData })
    }))
}

/// Perft of a position in layout `C`, as a [`Task`] of any level.
struct Perft<'a, C> {
    core: &'a Core<C>,
    board: &'static FlankBoard,
    depth: u32,
    cells: PhantomData<C>,
}

impl<C: Cells, L: Grid8> Task<L> for Perft<'_, C> {
    type Output = u64;

    #[inline(always)]
    fn run(self, l: L) -> u64 {
        let Perft {
            core, board, depth, ..
        } = self;
        let shape = C::shape(board);
        if depth <= 1 {
            return if depth == 0 {
                1
            } else {
                core.count_moves(l, &shape)
            };
        }
        if core.phase == Phase::Play && core.supply == [UNLIMITED; 2] {
            let s = core.side.index();
            return pieces_perft::<C, L>(l, core.pieces[s], core.pieces[s ^ 1], shape[0], depth);
        }
        let mut own = core.placements(l, &shape, core.side);
        let mut child = *core;
        if own.none() {
            if core.empty(shape[0]).none() || core.placements(l, &shape, core.side.other()).none() {
                return 0;
            }
            child.play::<false, L>(l, &shape, None);
            return l.run(Perft::<C> {
                core: &child,
                board,
                depth: depth - 1,
                cells: PhantomData,
            });
        }
        let mut total = 0;
        while let Some(i) = own.pop() {
            child = *core;
            child.play::<false, L>(l, &shape, Some(i));
            total += l.run(Perft::<C> {
                core: &child,
                board,
                depth: depth - 1,
                cells: PhantomData,
            });
        }
        total
    }
}

/// Perft of depth ≥ 2 in the play phase with unlimited supplies (Othello, Reversi after
/// its opening placements), where a position is its two piece sets: the mover's `own`
/// and the opponent's `opp` on the board's `cells`.
struct PiecesPerft<C> {
    own: C,
    opp: C,
    cells: C,
    depth: u32,
}

impl<C: Cells, L: Grid8> Task<L> for PiecesPerft<C> {
    type Output = u64;

    #[inline(always)]
    fn run(self, l: L) -> u64 {
        let PiecesPerft {
            own,
            opp,
            cells,
            depth,
        } = self;
        let empty = cells & !(own | opp);
        let mut moves = C::moves(l, own, opp, empty);
        if moves.none() {
            if empty.none() || C::moves(l, opp, own, empty).none() {
                return 0;
            }
            return pieces_perft::<C, L>(l, opp, own, cells, depth - 1);
        }
        let mut total = 0;
        if depth == 2 {
            // The children's moves, counted from their piece sets.
            while let Some(i) = moves.pop() {
                let f = C::flips(l, i, own, opp);
                let (mover, other) = (opp ^ f, own | f | C::single(i));
                let empty = empty ^ C::single(i);
                let n = C::moves(l, mover, other, empty).count();
                total += if n > 0 {
                    u64::from(n)
                } else {
                    u64::from(!empty.none() && !C::moves(l, other, mover, empty).none())
                };
            }
            return total;
        }
        while let Some(i) = moves.pop() {
            let f = C::flips(l, i, own, opp);
            total += l.run(PiecesPerft {
                own: opp ^ f,
                opp: own | f | C::single(i),
                cells,
                depth: depth - 1,
            });
        }
        total
    }
}

/// [`PiecesPerft`] of any depth.
#[inline(always)]
fn pieces_perft<C: Cells, L: Grid8>(l: L, own: C, opp: C, cells: C, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => {
            let empty = cells & !(own | opp);
            let n = C::moves(l, own, opp, empty).count();
            if n > 0 {
                u64::from(n)
            } else {
                u64::from(!empty.none() && !C::moves(l, opp, own, empty).none())
            }
        }
        _ => l.run(PiecesPerft {
            own,
            opp,
            cells,
            depth,
        }),
    }
}
