//! The Gumbel root's Sequential Halving schedule.

use std::collections::VecDeque;

pub(super) struct Gumbel {
    /// Per root edge: Gumbel noise and log-prior.
    pub(super) g: Vec<f32>,
    pub(super) logits: Vec<f32>,
    pub(super) remaining: Vec<usize>,
    pub(super) queue: VecDeque<usize>,
    pub(super) phases_left: u32,
    pub(super) budget: u32,
    pub(super) scheduled: u32,
}

impl Gumbel {
    /// Schedules the next phase of Sequential Halving so that the whole search spends
    /// exactly the budget: each remaining action gets ⌊n / (phases · |S|)⌋ visits (at
    /// least one), and the last phase shares out whatever is left.
    pub(super) fn plan_phase(&mut self) {
        let left = self.budget - self.scheduled;
        if left == 0 {
            return;
        }
        let s = self.remaining.len() as u32;
        let per = if self.phases_left <= 1 || s == 1 {
            0 // last phase: everything left, round-robin
        } else {
            (self.budget / (self.phases_left * s)).max(1)
        };
        let count = if per == 0 { left } else { (per * s).min(left) };
        for k in 0..count {
            self.queue.push_back(self.remaining[(k % s) as usize]);
        }
        self.scheduled += count;
    }
}
