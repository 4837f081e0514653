//! Means and 95% confidence intervals across seeds (Student's t), and the relative change of
//! two paired means with a paired-bootstrap interval.

/// Two-sided 97.5% quantiles of Student's t for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The t quantile for a 95% two-sided interval with `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T975[df - 1],
        _ => 1.96 + 2.4 / df as f64,
    }
}

/// Mean and 95% CI half-width of a sample (half-width NaN for fewer than two values).
pub fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let m = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (m, f64::NAN);
    }
    let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
    (m, t975(n - 1) * (var / n as f64).sqrt())
}

/// Bootstrap resamples behind [`ratio_change`]'s interval.
pub const BOOTSTRAP_RESAMPLES: usize = 4000;

/// Relative change of the means, `100 × (mean(x) − mean(y)) / mean(y)`, for paired samples
/// (`x[i]` and `y[i]` share seed *i*), with a 95% percentile interval from a paired bootstrap
/// (seeds resampled with replacement, pairs kept together; a fixed generator, so the same
/// input always gives the same interval). `None` when `mean(y)` is 0 (the change is
/// undefined); the interval is `None` with fewer than two pairs or when more than 5% of the
/// resamples have a zero baseline mean.
pub fn ratio_change(x: &[f64], y: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    let n = x.len().min(y.len());
    if n == 0 {
        return None;
    }
    let (sx, sy) = (x[..n].iter().sum::<f64>(), y[..n].iter().sum::<f64>());
    if sy == 0.0 {
        return None;
    }
    let point = 100.0 * (sx - sy) / sy;
    if n < 2 {
        return Some((point, None));
    }
    // splitmix64: small, fixed, good enough for resampling indices.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut rs = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        let (mut bx, mut by) = (0.0, 0.0);
        for _ in 0..n {
            let i = ((next() as u128 * n as u128) >> 64) as usize;
            bx += x[i];
            by += y[i];
        }
        if by != 0.0 {
            rs.push(100.0 * (bx - by) / by);
        }
    }
    if rs.len() < BOOTSTRAP_RESAMPLES * 95 / 100 {
        return Some((point, None));
    }
    rs.sort_by(f64::total_cmp);
    let q = |p: f64| rs[((p * rs.len() as f64) as usize).min(rs.len() - 1)];
    Some((point, Some((q(0.025), q(0.975)))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_change_of_means() {
        // Per-seed ratios would be -100% and +100%; the change of the means is -25%.
        let (c, ci) = ratio_change(&[0.0, 6.0], &[4.0, 4.0]).unwrap();
        assert!((c + 25.0).abs() < 1e-12);
        let (lo, hi) = ci.unwrap();
        assert!(lo <= c && c <= hi);
        assert!(ratio_change(&[1.0, 2.0], &[0.0, 0.0]).is_none());
        let (c, _) = ratio_change(&[3.0, 3.0, 3.0], &[3.0, 3.0, 3.0]).unwrap();
        assert_eq!(c, 0.0);
    }

    #[test]
    fn ci_of_known_sample() {
        let (m, h) = mean_ci(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert!((m - 3.0).abs() < 1e-12);
        // sd = 1.5811, se = 0.7071, t(4) = 2.776
        assert!((h - 2.776 * std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-4);
    }
}
