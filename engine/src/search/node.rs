//! One node of the search: principal-variation search with the transposition table,
//! reverse futility pruning, null-move pruning, internal iterative reduction, late move
//! pruning, futility pruning, singular extensions, late move reductions, and the move
//! order's killers and history. Each technique is off when its parameter says so; with
//! [`super::Params::FULL_WIDTH`] this is plain alpha-beta, whose fixed-depth value is the
//! minimax value.

use std::sync::atomic::AtomicBool;

use super::order::{self, Picker, history_index};
use super::searcher::{INF, MATE, MAX_PLY, Searcher, from_tt, terminal_score, to_tt, tt_key};
use super::tt::Bound;
use crate::isa::{Level, Task};
use crate::{Move, MoveKind, State};

/// Positions where a side has at most this many pieces are searched without static
/// pruning (reverse futility, null move, futility): a wipe-out may be a move away.
const FEW_PIECES: u32 = 8;

/// Scores beyond this are forced results.
const MATE_BOUND: i32 = MATE - MAX_PLY as i32;

/// Where a node's scores come from and go to.
#[derive(Clone, Copy)]
pub(super) struct Window {
    pub alpha: i32,
    pub beta: i32,
}

impl Searcher {
    /// Searches `s` to `depth` at `ply` within `w`; fail-soft. `cut_node`: the parent
    /// expects this node to fail high (a zero-window child after the first move).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn negamax<L: Level>(
        &mut self,
        l: L,
        s: &State,
        mut depth: i32,
        ply: usize,
        w: Window,
        cut_node: bool,
        stop: &AtomicBool,
    ) -> i32 {
        let Window { mut alpha, beta } = w;
        self.pv[ply].clear();
        if self.aborted || self.out_of_budget(stop) {
            self.aborted = true;
            return 0;
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply as u32);
        let root = ply == 0;
        if depth <= 0 || ply + 1 >= MAX_PLY {
            if s.is_game_over() {
                return terminal_score(s, ply);
            }
            return self.static_eval(s);
        }
        if s.is_game_over() {
            return terminal_score(s, ply);
        }
        let key = tt_key(s);
        let hit = self.tt.probe(key);
        let p = &self.params;
        let pv_node = beta - alpha > 1;
        let excluded = self.excluded[ply];
        let tt_move = hit.and_then(|h| h.mv);
        if let Some(h) = hit
            && !pv_node
            && excluded.is_none()
            && (h.depth == depth || (p.tt_deeper != 0 && h.depth > depth))
        {
            let score = from_tt(h.score, ply);
            let cut = match h.bound {
                Bound::Exact => true,
                Bound::Lower => score >= beta,
                Bound::Upper => score <= alpha,
                Bound::None => false,
            };
            if cut {
                return score;
            }
        }

        // The static evaluation, where a technique reads it (the full-width search never
        // does); a singular search keeps its node's.
        let uses_eval = p.rfp_depth > 0 || p.nmp_depth > 0 || p.fp_depth > 0 || p.lmr_depth > 0;
        let eval = if !uses_eval {
            0
        } else if excluded.is_some() {
            self.evals[ply]
        } else {
            match hit {
                Some(h) if h.eval != super::tt::NO_EVAL => h.eval,
                _ => self.static_eval(s),
            }
        };
        self.evals[ply] = eval;
        let improving = ply >= 2 && eval > self.evals[ply - 2];
        let p = &self.params;

        // With few pieces on either side a wipe-out may be a move away: no static guess
        // prunes then.
        let [x, o] = s.counts();
        let tactical = x.min(o) <= FEW_PIECES;
        if !pv_node && !root && excluded.is_none() && !tactical && eval.abs() < MATE_BOUND {
            // Reverse futility pruning: far enough above beta that no move will fall below.
            if depth <= p.rfp_depth && eval - p.rfp_margin * (depth - i32::from(improving)) >= beta
            {
                return eval;
            }
            // Null-move pruning: still above beta after passing, so a move would be too.
            if p.nmp_depth > 0
                && depth >= p.nmp_depth
                && eval >= beta
                && !self.after_null[ply]
                && null_move_allowed(s, p.nmp_fill)
            {
                let r = p.nmp_base + depth / p.nmp_div;
                let mut child = *s;
                if let State::Ataxx(p) = &mut child {
                    p.null_move();
                }
                self.after_null[ply + 1] = true;
                let score = -self.child(
                    l,
                    &child,
                    depth - 1 - r,
                    ply + 1,
                    Window {
                        alpha: -beta,
                        beta: -beta + 1,
                    },
                    !cut_node,
                    stop,
                );
                self.after_null[ply + 1] = false;
                if self.aborted {
                    return 0;
                }
                if score >= beta {
                    return if score >= MATE_BOUND { beta } else { score };
                }
            }
        }
        let p = &self.params;
        // Internal iterative reduction: without a hash move the order is a guess.
        if p.iir_depth > 0 && depth >= p.iir_depth && tt_move.is_none() && excluded.is_none() {
            depth -= 1;
        }

        let side = s.side_to_move().index();
        let killers = if p.killers != 0 {
            self.killers[ply]
        } else {
            [None; 2]
        };
        let mut moves = std::mem::take(&mut self.moves[ply]);
        let mut ordered = std::mem::take(&mut self.ordered[ply]);
        moves.clear();
        ordered.clear();
        let mut picker = Picker::new(tt_move.filter(|&m| s.is_legal(m)));
        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_move = None;
        let mut searched = 0i32;
        let mut tried = arrayvec::ArrayVec::<Move, 64>::new();
        // A move comes with its child position. The hash move's is made (and its table
        // entry fetched) at once; a generated move's while the one before it is searched,
        // so that its entry's cache miss overlaps that search. The hash move's successor
        // is not looked at before the hash move has been searched: most nodes cut on it,
        // and then no other move is generated.
        let made = |tt: &super::tt::Table, m: Move| {
            let child = s.after(m);
            if depth >= 2 {
                tt.prefetch(tt_key(&child));
            }
            child
        };
        let mut pending = None;
        while let Some((mv, key, child)) = pending.take().or_else(|| {
            picker
                .next(s, &mut moves, &mut ordered, killers, &self.history)
                .map(|(m, k)| (m, k, made(&self.tt, m)))
        }) {
            if key != order::TT_MOVE_KEY {
                pending = picker
                    .next(s, &mut moves, &mut ordered, killers, &self.history)
                    .map(|(m, k)| (m, k, made(&self.tt, m)));
            }
            if Some(mv) == excluded {
                continue;
            }
            let p = &self.params;
            let flips = order::flips(s, mv, key);
            let quiet_jump = flips == 0 && matches!(mv.kind(), MoveKind::Jump { .. });
            if !root && best > -MATE_BOUND {
                // Late move pruning: quiet jumps come last in the order; past the first
                // few moves they are not tried.
                if quiet_jump
                    && depth <= p.lmp_depth
                    && searched >= p.lmp_base + p.lmp_mult * depth * depth
                {
                    break;
                }
                // Futility pruning: what is left cannot lift a hopeless node to alpha.
                if depth <= p.fp_depth
                    && !pv_node
                    && searched >= p.fp_moves
                    && alpha.abs() < MATE_BOUND
                    && !tactical
                    && eval + p.fp_base + p.fp_mult * depth <= alpha
                {
                    break;
                }
            }
            let mut extension = 0;
            if let Some(h) = hit
                && p.se_depth > 0
                && Some(mv) == tt_move
                && !root
                && excluded.is_none()
                && depth >= p.se_depth
                && h.depth >= depth - p.se_tt_margin
                && h.bound != Bound::Upper
                && h.score.abs() < MATE_BOUND
            {
                // Singular extension: is the hash move the only good one?
                let singular_beta = h.score - depth;
                self.excluded[ply] = Some(mv);
                let score = self.child(
                    l,
                    s,
                    (depth - 1) / 2,
                    ply,
                    Window {
                        alpha: singular_beta - 1,
                        beta: singular_beta,
                    },
                    cut_node,
                    stop,
                );
                self.excluded[ply] = None;
                if self.aborted {
                    return self.unwind(ply, moves, ordered);
                }
                if score < singular_beta {
                    extension = 1;
                } else if singular_beta >= beta {
                    // Multi-cut: another move also beats beta.
                    self.ordered[ply] = ordered;
                    self.moves[ply] = moves;
                    return singular_beta;
                } else if h.score >= beta {
                    extension = -1;
                }
            }
            let nodes_before = self.nodes;
            let new_depth = depth - 1 + extension;
            self.after_null[ply + 1] = false;
            let full = Window {
                alpha: -beta,
                beta: -alpha,
            };
            let zero = Window {
                alpha: -alpha - 1,
                beta: -alpha,
            };
            let score = if searched == 0 {
                -self.child(l, &child, new_depth, ply + 1, full, false, stop)
            } else {
                let r = self.reduction(depth, searched, pv_node, improving, side, mv);
                let r = r.clamp(0, (new_depth - 1).max(0));
                let mut sc = -self.child(l, &child, new_depth - r, ply + 1, zero, true, stop);
                if sc > alpha && r > 0 && !self.aborted {
                    sc = -self.child(l, &child, new_depth, ply + 1, zero, !cut_node, stop);
                }
                if sc > alpha && sc < beta && !self.aborted {
                    sc = -self.child(l, &child, new_depth, ply + 1, full, false, stop);
                }
                sc
            };
            searched += 1;
            if root {
                self.count_root_nodes(mv, self.nodes - nodes_before);
            }
            if self.aborted {
                return self.unwind(ply, moves, ordered);
            }
            if score > best {
                best = score;
                best_move = Some(mv);
                if score > alpha {
                    alpha = score;
                    let (head, tail) = self.pv.split_at_mut(ply + 1);
                    head[ply].clear();
                    head[ply].push(mv);
                    head[ply].extend_from_slice(&tail[0]);
                    if alpha >= beta {
                        self.on_cutoff(ply, side, depth, mv, flips, &tried);
                        break;
                    }
                }
            }
            if !tried.is_full() {
                tried.push(mv);
            }
        }
        self.ordered[ply] = ordered;
        self.moves[ply] = moves;
        if excluded.is_none() {
            let bound = if best >= beta {
                Bound::Lower
            } else if best > alpha0 {
                Bound::Exact
            } else {
                Bound::Upper
            };
            let stored_eval = if uses_eval { eval } else { super::tt::NO_EVAL };
            self.tt
                .store(key, best_move, to_tt(best, ply), stored_eval, depth, bound);
        }
        best
    }

    /// Hands the ply's buffers back after an aborted search; its score is meaningless.
    fn unwind(&mut self, ply: usize, moves: Vec<Move>, ordered: Vec<u64>) -> i32 {
        self.ordered[ply] = ordered;
        self.moves[ply] = moves;
        0
    }

    /// Late move reduction of the `searched`-th move (from 0) at `depth`, before clamping.
    #[inline(always)]
    fn reduction(
        &self,
        depth: i32,
        searched: i32,
        pv_node: bool,
        improving: bool,
        side: usize,
        mv: Move,
    ) -> i32 {
        let p = &self.params;
        if p.lmr_depth == 0 || depth < p.lmr_depth || searched < p.lmr_moves {
            return 0;
        }
        let mut r = i32::from(self.lmr[(depth as usize).min(63)][(searched as usize + 1).min(63)]);
        r -= i32::from(pv_node);
        r += i32::from(!improving);
        if p.lmr_history > 0 {
            r -= self.history[history_index(side, mv)] / p.lmr_history;
        }
        r
    }

    /// A move cut: it becomes a killer (when it flips nothing) and gains history; the
    /// moves tried before it lose some.
    fn on_cutoff(
        &mut self,
        ply: usize,
        side: usize,
        depth: i32,
        mv: Move,
        flips: u32,
        tried: &[Move],
    ) {
        let p = self.params;
        if flips == 0 {
            let k = &mut self.killers[ply];
            if k[0] != Some(mv) {
                k[1] = k[0];
                k[0] = Some(mv);
            }
        }
        let bonus = (p.hist_bonus * depth).min(p.hist_bonus_max);
        let h = &mut self.history[history_index(side, mv)];
        *h += bonus - *h * bonus / p.hist_max;
        if p.hist_malus > 0 {
            let malus = (p.hist_malus * depth).min(p.hist_bonus_max);
            for &m in tried {
                let h = &mut self.history[history_index(side, m)];
                *h -= malus + *h * malus / p.hist_max;
            }
        }
    }

    /// A child node (or the same node, for a singular search), through the level's
    /// compiled entry.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn child<L: Level>(
        &mut self,
        l: L,
        s: &State,
        depth: i32,
        ply: usize,
        w: Window,
        cut_node: bool,
        stop: &AtomicBool,
    ) -> i32 {
        l.run(Node {
            searcher: self,
            s,
            depth,
            ply,
            w,
            cut_node,
            stop,
        })
    }
}

/// Whether a null move may be tried: in the Ataxx family only, when the side to move has
/// a move (else passing is its move), while at most `fill` percent of the board is
/// covered (late in a game zugzwang is common: passing would often be the best move). The
/// outflanking games never.
fn null_move_allowed(s: &State, fill: i32) -> bool {
    match s {
        State::Ataxx(p) => {
            let [x, o] = s.counts();
            p.can_move(p.side_to_move())
                && ((x + o) * 100) as i32 <= fill * s.playable_cells() as i32
        }
        State::Flank(_) => false,
    }
}

/// A node of the search as a [`Task`], so that the whole search runs compiled for the
/// CPU's instruction-set level.
pub(super) struct Node<'a> {
    pub searcher: &'a mut Searcher,
    pub s: &'a State,
    pub depth: i32,
    pub ply: usize,
    pub w: Window,
    pub cut_node: bool,
    pub stop: &'a AtomicBool,
}

impl<L: Level> Task<L> for Node<'_> {
    type Output = i32;

    #[inline(always)]
    fn run(self, l: L) -> i32 {
        let Node {
            searcher,
            s,
            depth,
            ply,
            w,
            cut_node,
            stop,
        } = self;
        searcher.negamax(l, s, depth, ply, w, cut_node, stop)
    }
}
