//! Time management for sudden death with an increment, written as a pure function of the
//! clock so that it can be tested on a simulated clock.
//!
//! The budget of a move is a share of what is left, spread over the moves the game is
//! expected to last, plus most of the increment: a soft limit, where the search stops
//! unless its best move is still in doubt, and a hard limit, never passed. What is left
//! is first reduced by the move overhead (process and pipe latency, the evaluator batch
//! that is still running when the limit comes), so that a player who thinks up to its
//! hard limit and then loses up to the overhead before its move arrives never runs its
//! clock below zero, as long as what it loses a move is also at most the increment (with
//! a latency above the increment every move, any clock runs out in a long enough game).

use std::time::Duration;

use engine::State;

/// The clock of the player to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockState {
    /// Time left on the clock before this move.
    pub remaining: Duration,
    /// Time added to the clock after each move.
    pub increment: Duration,
    /// Moves until the clock is next refilled (UAI `movestogo`); `None` for sudden death.
    pub moves_to_go: Option<u32>,
}

/// How long to think on one move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    /// Stop here unless the best move is still in doubt.
    pub soft: Duration,
    /// Never think beyond this.
    pub hard: Duration,
}

impl TimeBudget {
    /// A fixed time per move: soft and hard limits both `t`.
    pub fn fixed(t: Duration) -> TimeBudget {
        TimeBudget { soft: t, hard: t }
    }
}

/// The default reserve for latency between the end of a search and the arrival of its
/// move on the opponent's clock.
pub const DEFAULT_MOVE_OVERHEAD: Duration = Duration::from_millis(30);

/// Splits a clock into per-move budgets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeManager {
    /// Kept off every budget for latency: a move that arrives up to this late after
    /// its hard limit still arrives in time.
    pub move_overhead: Duration,
}

impl Default for TimeManager {
    fn default() -> Self {
        TimeManager {
            move_overhead: DEFAULT_MOVE_OVERHEAD,
        }
    }
}

impl TimeManager {
    /// The budget of a move with `clock`, in a game expected to last `moves_left` more
    /// moves of this player (see [`expected_moves_left`]). The hard limit is at most
    /// what is left minus the move overhead, so it never exceeds the clock; the soft
    /// limit is a share of that plus three quarters of the increment, at most half of
    /// what is usable unless this is the last move before the clock is refilled.
    pub fn budget(&self, clock: &ClockState, moves_left: u32) -> TimeBudget {
        let usable = clock.remaining.saturating_sub(self.move_overhead);
        let moves = clock
            .moves_to_go
            .map_or(moves_left, |m| m.min(moves_left.max(1)))
            .max(1);
        let last = clock.moves_to_go == Some(1);
        let share = usable / moves + clock.increment * 3 / 4;
        let soft_cap = if last { usable } else { usable / 2 };
        let soft = share.min(soft_cap);
        let hard_cap = if last { usable } else { usable * 3 / 4 };
        let hard = (soft * 3).min(hard_cap).max(soft);
        TimeBudget { soft, hard }
    }
}

/// How many more moves the player to move is expected to make: the game ends when no
/// cell is left to fill ([`State::cells_to_fill`]: the board full, or Annexation's
/// supplies spent), and about three plies in five fill a cell (Ataxx jumps do not), so a
/// player has about 0.6 moves per cell left to fill; at least 8, at most 60.
pub fn expected_moves_left(state: &State) -> u32 {
    (state.cells_to_fill() * 3 / 5 + 4).clamp(8, 60)
}

/// The largest and second-largest of the root moves' visit counts: the play loop's stop
/// rule (the soft limit's doubt, smart pruning) reads them.
pub(super) fn leaders(visits: impl Iterator<Item = u32>) -> (u32, u32) {
    let mut top = (0, 0);
    for v in visits {
        if v > top.0 {
            top = (v, top.0);
        } else if v > top.1 {
            top.1 = v;
        }
    }
    top
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn leaders_are_the_two_largest() {
        assert_eq!(leaders([3, 9, 9, 1].into_iter()), (9, 9));
        assert_eq!(leaders([3, 9, 4].into_iter()), (9, 4));
        assert_eq!(leaders([5].into_iter()), (5, 0));
    }

    #[test]
    fn budgets_stay_within_the_clock() {
        let tm = TimeManager::default();
        for remaining in [0, 1, 29, 30, 31, 100, 1000, 60_000] {
            for inc in [0, 10, 1000] {
                for mtg in [None, Some(1), Some(5)] {
                    let clock = ClockState {
                        remaining: ms(remaining),
                        increment: ms(inc),
                        moves_to_go: mtg,
                    };
                    let b = tm.budget(&clock, 20);
                    assert!(b.soft <= b.hard, "{clock:?}: {b:?}");
                    assert!(
                        b.hard + tm.move_overhead <= clock.remaining.max(tm.move_overhead),
                        "{clock:?}: {b:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_last_move_before_a_refill_may_use_everything() {
        let tm = TimeManager::default();
        let clock = ClockState {
            remaining: ms(100),
            increment: ms(0),
            moves_to_go: Some(1),
        };
        assert_eq!(tm.budget(&clock, 30), TimeBudget::fixed(ms(70)));
    }

    #[test]
    fn a_share_of_the_clock_plus_most_of_the_increment() {
        let tm = TimeManager::default();
        let clock = ClockState {
            remaining: ms(1030),
            increment: ms(20),
            moves_to_go: None,
        };
        // 1000 ms usable over 25 moves, plus 15 ms of the increment.
        let b = tm.budget(&clock, 25);
        assert_eq!(b.soft, ms(55));
        assert_eq!(b.hard, ms(165));
    }

    /// A game at 1 s + 10 ms where a player always thinks to its hard limit (or its
    /// soft one) and then loses up to the increment to latency: its clock never goes negative, and it
    /// still gets real thinking time while the clock is healthy.
    #[test]
    fn a_simulated_clock_never_goes_negative_at_1s_plus_10ms() {
        let game: engine::Game = "ataxx".parse().unwrap();
        let tm = TimeManager::default();
        let inc = ms(10);
        for latency in [ms(0), ms(5), inc] {
            for play_hard in [true, false] {
                let mut rng = engine::Rng::new(7);
                let mut s = game.startpos();
                let mut clocks = [ms(1000), ms(1000)];
                let mut plies = 0;
                while !s.is_game_over() && plies < 400 {
                    let side = s.side_to_move().index();
                    let clock = ClockState {
                        remaining: clocks[side],
                        increment: inc,
                        moves_to_go: None,
                    };
                    let b = tm.budget(&clock, expected_moves_left(&s));
                    if plies < 2 {
                        // The first move thinks for about 1/30 of the clock or more.
                        assert!(b.soft >= ms(25), "{b:?}");
                    }
                    let used = if play_hard { b.hard } else { b.soft } + latency;
                    assert!(
                        used <= clocks[side],
                        "ply {plies}: used {used:?} of {:?} ({b:?})",
                        clocks[side]
                    );
                    clocks[side] = clocks[side] - used + inc;
                    let moves = s.legal_moves();
                    s.play(moves[rng.below(moves.len() as u64) as usize]);
                    plies += 1;
                }
                assert!(plies >= 40, "a full game: {plies} plies");
            }
        }
    }

    #[test]
    fn moves_left_shrink_as_the_board_fills() {
        let game: engine::Game = "ataxx".parse().unwrap();
        let start = expected_moves_left(&game.startpos());
        assert_eq!(start, 45 * 3 / 5 + 4);
        let late = game
            .parse_position("xxxoooo/xxxoooo/xxxoooo/xxxoooo/xxxoooo/xxxoooo/xxxooo1 x 0 1")
            .unwrap();
        assert_eq!(expected_moves_left(&late), 8);
    }
}
