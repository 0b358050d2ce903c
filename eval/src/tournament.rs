//! A synthetic tournament with known true ratings, and how well a rating list recovers
//! them: what `flipzero bench ratings` measures the maximum-likelihood fit on.

use crate::Rating;

/// Players, their true ratings, and games as `(x player, o player, x's points)`.
pub type Tournament = (Vec<String>, Vec<f64>, Vec<(String, String, f64)>);

/// The ratings benchmark's tournament: `players` players `p00000`, … of true ratings
/// spread uniformly over ±1000 Elo, and `games` games: first one between each player
/// and the next stronger one (so that all are connected), then each between a random
/// player and (four games in five) one of the 200 nearest in strength, as a Swiss
/// system pairs, or (one in five) anyone. A game is drawn with probability up to 0.2,
/// and otherwise won as the logistic Elo model says. Returns the names, the true
/// ratings and the games as `flipzero ratings` reads them.
pub fn synthetic_tournament(players: usize, games: usize, seed: u64) -> Tournament {
    let mut rng = engine::Rng::new(seed);
    let mut uniform = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let names: Vec<String> = (0..players).map(|i| format!("p{i:05}")).collect();
    let truth: Vec<f64> = (0..players).map(|_| 2000.0 * uniform() - 1000.0).collect();
    let mut by_strength: Vec<usize> = (0..players).collect();
    by_strength.sort_by(|&a, &b| truth[a].total_cmp(&truth[b]));
    let mut rng = engine::Rng::new(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut list = Vec::with_capacity(games);
    let mut play = |rng: &mut engine::Rng, a: usize, b: usize| {
        let s = crate::score_from_elo(truth[a] - truth[b]);
        let d = 0.2f64.min(2.0 * s.min(1.0 - s));
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let points = if u < s - d / 2.0 {
            1.0
        } else if u < s + d / 2.0 {
            0.5
        } else {
            0.0
        };
        list.push((names[a].clone(), names[b].clone(), points));
    };
    for rank in 0..players.saturating_sub(1).min(games) {
        play(&mut rng, by_strength[rank], by_strength[rank + 1]);
    }
    for _ in players.saturating_sub(1)..games {
        let rank = rng.below(players as u64) as usize;
        let other = loop {
            let o = if rng.below(5) == 0 {
                rng.below(players as u64) as usize
            } else {
                (rank + rng.below(201) as usize)
                    .saturating_sub(100)
                    .min(players - 1)
            };
            if o != rank {
                break o;
            }
        };
        play(&mut rng, by_strength[rank], by_strength[other]);
    }
    (names, truth, list)
}

/// How close a rating list is to a synthetic tournament's true ratings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitQuality {
    /// Root-mean-square error against the true ratings (relative to the anchor, player 0).
    pub rms_error: f64,
    /// The largest error.
    pub max_error: f64,
    /// The share of players whose true rating is inside their 95% interval.
    pub covered: f64,
    /// The largest |points − expected points| of a player at the fitted ratings (with one
    /// virtual draw a pair that met, as the fit counts): 0 at the exact optimum.
    pub largest_residual: f64,
}

/// The quality of `rated` (names and ratings, anchored at `names[0]`) on the tournament
/// `names`, `truth`, `list`.
pub fn fit_quality(
    names: &[String],
    truth: &[f64],
    list: &[(String, String, f64)],
    rated: &[(String, Rating)],
) -> FitQuality {
    let index: std::collections::HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let (mut sq, mut worst, mut covered) = (0.0, 0.0f64, 0usize);
    let mut elo = vec![0.0; names.len()];
    for (name, r) in rated {
        let i = index[name.as_str()];
        elo[i] = r.elo;
        if i != 0 {
            let e = r.elo - (truth[i] - truth[0]);
            sq += e * e;
            worst = worst.max(e.abs());
            covered += usize::from(e.abs() <= r.ci95);
        }
    }
    // The score equations the fit solves: each player's points, with one virtual draw
    // a pair that met, equal its expected points.
    let mut residual = vec![0.0; names.len()];
    let mut met = std::collections::HashSet::new();
    for (x, o, p) in list {
        let (a, b) = (index[x.as_str()], index[o.as_str()]);
        let mut add = |points: f64| {
            let d = points - crate::score_from_elo(elo[a] - elo[b]);
            residual[a] += d;
            residual[b] -= d;
        };
        add(*p);
        if met.insert((a.min(b), a.max(b))) {
            add(0.5);
        }
    }
    let off = residual[1..].iter().fold(0.0f64, |m, r| m.max(r.abs()));
    let others = (rated.len() - 1).max(1) as f64;
    FitQuality {
        rms_error: (sq / others).sqrt(),
        max_error: worst,
        covered: covered as f64 / others,
        largest_residual: off,
    }
}
