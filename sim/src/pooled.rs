//! Percentiles of waits pooled over seeds, with seed-bootstrap intervals.
//!
//! One run has a few hundred critical waits, so its nearest-rank p99.9 is its single worst
//! wait. Pooling every seed's waits first gives a percentile backed by all the samples. Its
//! interval resamples whole seeds (a cluster bootstrap: a seed's waits share its random draws,
//! so they are not independent), and a change against `default` resamples seeds in pairs, as
//! `crate::stats::ratio_change` does for means.

use crate::metrics::percentile;

/// Bootstrap resamples behind the intervals here.
pub const RESAMPLES: usize = 1000;

/// splitmix64: small, fixed (so the same input gives the same interval), good enough for
/// resampling indices.
struct Mix(u64);

impl Mix {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z as u128 * n as u128) >> 64) as usize
    }
}

/// The `q` percentile (nearest rank) of the seeds' waits pooled, in the waits' unit. Each
/// seed's waits must be sorted.
pub fn quantile(seeds: &[Vec<u64>], q: f64) -> f64 {
    Pool::new(seeds).quantile(&vec![1; seeds.len()], q)
}

/// Sorted seeds and their union, for percentiles of resampled poolings without re-pooling:
/// with seed *i* taken `m[i]` times, the count of pooled waits ≤ v is Σ m[i] × (seed *i*'s
/// waits ≤ v), so the nearest-rank percentile is found by bisecting the union.
struct Pool<'a> {
    seeds: &'a [Vec<u64>],
    all: Vec<u64>,
}

impl<'a> Pool<'a> {
    fn new(seeds: &'a [Vec<u64>]) -> Self {
        debug_assert!(seeds.iter().all(|v| v.is_sorted()));
        let mut all: Vec<u64> = seeds.iter().flatten().copied().collect();
        all.sort_unstable();
        all.dedup();
        Pool { seeds, all }
    }

    fn quantile(&self, mult: &[u64], q: f64) -> f64 {
        let total: u64 = self
            .seeds
            .iter()
            .zip(mult)
            .map(|(v, &m)| m * v.len() as u64)
            .sum();
        if total == 0 {
            return 0.0;
        }
        let rank = ((q * total as f64).ceil().max(1.0) as u64).min(total);
        let at_most = |x: u64| -> u64 {
            self.seeds
                .iter()
                .zip(mult)
                .filter(|(_, &m)| m > 0)
                .map(|(v, &m)| m * v.partition_point(|&y| y <= x) as u64)
                .sum()
        };
        // The smallest value with at least `rank` pooled waits at or below it.
        let i = self.all.partition_point(|&x| at_most(x) < rank);
        self.all[i.min(self.all.len() - 1)] as f64
    }
}

fn resample(m: &mut Mix, mult: &mut [u64]) {
    mult.iter_mut().for_each(|x| *x = 0);
    let n = mult.len();
    for _ in 0..n {
        mult[m.below(n)] += 1;
    }
}

/// Total samples pooled.
pub fn samples(seeds: &[Vec<u64>]) -> usize {
    seeds.iter().map(Vec::len).sum()
}

/// A 95% interval of the pooled `q` percentile (seeds resampled with replacement); `None`
/// with fewer than two seeds.
pub fn interval(seeds: &[Vec<u64>], q: f64) -> Option<(f64, f64)> {
    let n = seeds.len();
    if n < 2 {
        return None;
    }
    let mut m = Mix(0x005e_ed0f_b007);
    let pool = Pool::new(seeds);
    let mut mult = vec![0; n];
    let mut rs: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            resample(&mut m, &mut mult);
            pool.quantile(&mult, q)
        })
        .collect();
    rs.sort_by(f64::total_cmp);
    Some(ends(&rs))
}

/// The relative change of the pooled `q` percentile of `x` against `y` (seed *i* of each
/// paired), in %, with a 95% paired-bootstrap interval; `None` when `y`'s is 0.
pub fn change(x: &[Vec<u64>], y: &[Vec<u64>], q: f64) -> Option<(f64, Option<(f64, f64)>)> {
    let n = x.len().min(y.len());
    let (px, py) = (quantile(&x[..n], q), quantile(&y[..n], q));
    if py == 0.0 {
        return None;
    }
    let point = 100.0 * (px - py) / py;
    if n < 2 {
        return Some((point, None));
    }
    let mut m = Mix(0x005e_ed0f_c4a6);
    let (px_pool, py_pool) = (Pool::new(&x[..n]), Pool::new(&y[..n]));
    let mut mult = vec![0; n];
    let mut rs = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        resample(&mut m, &mut mult);
        let by = py_pool.quantile(&mult, q);
        if by != 0.0 {
            rs.push(100.0 * (px_pool.quantile(&mult, q) - by) / by);
        }
    }
    if rs.len() < RESAMPLES * 95 / 100 {
        return Some((point, None));
    }
    rs.sort_by(f64::total_cmp);
    Some((point, Some(ends(&rs))))
}

fn ends(sorted: &[f64]) -> (f64, f64) {
    let q = |p: f64| sorted[((p * sorted.len() as f64) as usize).min(sorted.len() - 1)];
    (q(0.025), q(0.975))
}

/// Same as [`crate::metrics::percentile`] on one sorted run, for tests.
pub fn single(sorted: &[u64], q: f64) -> f64 {
    percentile(sorted, q) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bisection_matches_concatenation() {
        let mut m = Mix(7);
        let seeds: Vec<Vec<u64>> = (0..6)
            .map(|i| {
                let mut v: Vec<u64> = (0..50 + i * 37).map(|_| m.below(5000) as u64).collect();
                v.sort_unstable();
                v
            })
            .collect();
        let mut mult = vec![0; seeds.len()];
        let pool = Pool::new(&seeds);
        for _ in 0..200 {
            resample(&mut m, &mut mult);
            let mut cat: Vec<u64> = Vec::new();
            for (v, &k) in seeds.iter().zip(&mult) {
                for _ in 0..k {
                    cat.extend_from_slice(v);
                }
            }
            cat.sort_unstable();
            for q in [0.0, 0.5, 0.99, 0.999, 1.0] {
                assert_eq!(pool.quantile(&mult, q), single(&cat, q), "q {q}");
            }
        }
    }

    #[test]
    fn pooling_uses_every_seeds_samples() {
        // Two seeds of 1000 waits each: 1..=1000 and 1001..=2000. Pooled, the p99.9 is the
        // 1998th smallest, not either seed's maximum.
        let a: Vec<u64> = (1..=1000).collect();
        let b: Vec<u64> = (1001..=2000).collect();
        let p = quantile(&[a.clone(), b.clone()], 0.999);
        assert_eq!(p, 1998.0);
        assert_eq!(single(&a, 0.999), 999.0);
        assert_eq!(samples(&[a.clone(), b.clone()]), 2000);
        let (lo, hi) = interval(&[a.clone(), b.clone()], 0.999).unwrap();
        assert!(lo <= p && p <= hi, "{lo} {p} {hi}");
        let (c, _) = change(&[a.clone(), a.clone()], &[b.clone(), b], 0.5).unwrap();
        assert!((c - 100.0 * (500.0 - 1500.0) / 1500.0).abs() < 1e-9);
        assert!(change(std::slice::from_ref(&a), &[vec![]], 0.5).is_none());
    }
}
