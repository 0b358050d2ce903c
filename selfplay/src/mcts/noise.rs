//! Root noise: Gumbel and Dirichlet samples.

use engine::Rng;

pub(super) fn gumbel_noise(rng: &mut Rng) -> f32 {
    let u = rng.next_f64().clamp(1e-12, 1.0 - 1e-12);
    -(-u.ln()).ln() as f32
}

/// A Dirichlet(alpha, …, alpha) sample of `n` components.
pub(super) fn dirichlet(rng: &mut Rng, alpha: f32, n: usize) -> Vec<f32> {
    let draws: Vec<f64> = (0..n).map(|_| gamma(rng, alpha as f64)).collect();
    let sum: f64 = draws.iter().sum::<f64>().max(1e-300);
    draws.iter().map(|d| (d / sum) as f32).collect()
}

/// Gamma(alpha, 1) by Marsaglia and Tsang (with the alpha < 1 boost).
fn gamma(rng: &mut Rng, alpha: f64) -> f64 {
    if alpha < 1.0 {
        let u = rng.next_f64().max(1e-300);
        return gamma(rng, alpha + 1.0) * u.powf(1.0 / alpha);
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let (x, v) = loop {
            // Box–Muller normal.
            let u1 = rng.next_f64().max(1e-300);
            let u2 = rng.next_f64();
            let x = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            let v = 1.0 + c * x;
            if v > 0.0 {
                break (x, v * v * v);
            }
        };
        let u = rng.next_f64();
        if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}
