//! Times as a median with its spread. A time is never one sample: a read
//! runs [`super::SAMPLES`] times (more when they spread widely) and the
//! report shows the median with the lowest and highest sample. One design
//! is faster than another only when their spreads do not overlap
//! ([`Timing::clearly_below`]); the report stars nothing else.

use serde::{Deserialize, Serialize};

/// Fewer samples than this cannot show a spread: never starred.
pub const MIN_SAMPLES_TO_COMPARE: usize = super::SAMPLES;

/// Timed samples of one operation, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub median: f64,
    /// The fastest sample.
    pub low: f64,
    /// The slowest sample.
    pub high: f64,
    /// Every sample, in the order taken.
    pub samples: Vec<f64>,
}

impl Timing {
    /// The median and spread of `samples` (at least one).
    pub fn of(samples: Vec<f64>) -> Timing {
        let mut sorted = samples.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n {
            0 => 0.0,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        Timing {
            median,
            low: sorted.first().copied().unwrap_or(0.0),
            high: sorted.last().copied().unwrap_or(0.0),
            samples,
        }
    }

    /// Whether the samples spread so widely (the slowest more than twice
    /// the fastest) that more are worth taking.
    pub fn is_wide(&self) -> bool {
        self.high > 2.0 * self.low
    }

    /// Whether both have enough samples and every one of this timing's is
    /// faster than every one of `other`'s.
    pub fn clearly_below(&self, other: &Timing) -> bool {
        self.samples.len() >= MIN_SAMPLES_TO_COMPARE
            && other.samples.len() >= MIN_SAMPLES_TO_COMPARE
            && self.high < other.low
    }

    /// The time of a mix of operations, each with its weight: medians,
    /// fastest and slowest add up (the slowest mix is every operation at
    /// its slowest); sample `i` of the mix is sample `i` of each, so the
    /// mix has as many samples as its most sparsely sampled operation.
    /// `None` when a part is missing.
    pub fn weighted_sum(parts: &[(f64, Option<&Timing>)]) -> Option<Timing> {
        let mut median = 0.0;
        let mut low = 0.0;
        let mut high = 0.0;
        let mut n = usize::MAX;
        for (w, t) in parts {
            let t = (*t)?;
            median += w * t.median;
            low += w * t.low;
            high += w * t.high;
            n = n.min(t.samples.len());
        }
        if n == usize::MAX {
            return None;
        }
        let samples = (0..n)
            .map(|i| {
                parts
                    .iter()
                    .filter_map(|(w, t)| t.map(|t| w * t.samples[i]))
                    .sum()
            })
            .collect();
        Some(Timing {
            median,
            low,
            high,
            samples,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_and_spread_of_samples() {
        let t = Timing::of(vec![5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!((t.median, t.low, t.high), (3.0, 1.0, 5.0));
        assert_eq!(Timing::of(vec![1.0, 2.0, 3.0, 10.0]).median, 2.5);
        assert_eq!(t.samples, vec![5.0, 1.0, 3.0, 2.0, 4.0]);
    }

    #[test]
    fn only_separated_spreads_compare() {
        let fast = Timing::of(vec![1.0, 1.1, 1.2, 1.1, 1.0]);
        let slow = Timing::of(vec![2.0, 2.5, 2.2, 2.1, 2.3]);
        let overlapping = Timing::of(vec![1.15, 2.5, 2.2, 2.1, 2.3]);
        assert!(fast.clearly_below(&slow));
        assert!(!slow.clearly_below(&fast));
        assert!(!fast.clearly_below(&overlapping));
        // One sample each: no spread, no comparison.
        assert!(!Timing::of(vec![1.0]).clearly_below(&Timing::of(vec![9.0])));
    }

    #[test]
    fn a_weighted_mix_adds_medians_and_extremes() {
        let a = Timing::of(vec![1.0, 2.0, 3.0]);
        let b = Timing::of(vec![10.0]);
        let mix = Timing::weighted_sum(&[(2.0, Some(&a)), (0.5, Some(&b))]).unwrap();
        assert_eq!((mix.median, mix.low, mix.high), (9.0, 7.0, 11.0));
        // As many samples as the sparsest part: one.
        assert_eq!(mix.samples, vec![7.0]);
        assert!(Timing::weighted_sum(&[(1.0, Some(&a)), (1.0, None)]).is_none());
    }
}
