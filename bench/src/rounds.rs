//! Interleaved rounds: each round runs every variant once, in an order that rotates from round to
//! round, so drift of the machine (other load, frequency, caches) falls on all variants alike. A figure
//! is the median over rounds; a ratio is the median of the per-round ratios against the floor.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clients::{Call, Clients, Failure, Variant};

/// One sample per round and variant.
#[derive(Debug, Default)]
pub struct Samples {
    /// `per_variant[v][round]`: seconds per call (sequential) or calls per second (concurrent).
    pub per_variant: [Vec<f64>; 3],
}

impl Samples {
    /// The median of variant `v`.
    pub fn median(&self, v: Variant) -> f64 {
        median(self.per_variant[v.index()].clone())
    }

    /// The median over rounds of `v`'s sample divided by the floor's in the same round.
    pub fn ratio(&self, v: Variant) -> f64 {
        let floor = &self.per_variant[Variant::Floor.index()];
        let ratios = self.per_variant[v.index()]
            .iter()
            .zip(floor)
            .map(|(x, f)| x / f)
            .collect();
        median(ratios)
    }

    fn push(&mut self, v: Variant, sample: f64) {
        self.per_variant[v.index()].push(sample);
    }
}

/// The order of the variants in round `round`.
fn order(round: usize) -> [Variant; 3] {
    let mut order = Variant::ALL;
    order.rotate_left(round % 3);
    order
}

/// The median of `values` (0 when empty).
pub fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// `calls` sequential calls per variant and round, after one warm-up round; seconds per call.
pub async fn sequential(
    clients: &Clients,
    call: Call,
    rounds: usize,
    calls: usize,
) -> Result<Samples, Failure> {
    let mut samples = Samples::default();
    for round in 0..=rounds {
        for v in order(round) {
            let started = Instant::now();
            for _ in 0..calls {
                clients.call(call, v).await?;
            }
            if round > 0 {
                samples.push(v, started.elapsed().as_secs_f64() / calls as f64);
            }
        }
    }
    Ok(samples)
}

/// `callers` concurrent tasks making `calls` calls each per variant and round, after one warm-up
/// round; calls per second.
pub async fn concurrent(
    clients: &Arc<Clients>,
    call: Call,
    rounds: usize,
    callers: usize,
    calls: usize,
) -> Result<Samples, Failure> {
    let mut samples = Samples::default();
    for round in 0..=rounds {
        for v in order(round) {
            let elapsed = burst(clients, call, v, callers, calls).await?;
            if round > 0 {
                samples.push(v, (callers * calls) as f64 / elapsed.as_secs_f64());
            }
        }
    }
    Ok(samples)
}

/// Runs `callers` tasks of `calls` calls each; how long until the last one finished.
async fn burst(
    clients: &Arc<Clients>,
    call: Call,
    v: Variant,
    callers: usize,
    calls: usize,
) -> Result<Duration, Failure> {
    let started = Instant::now();
    let tasks: Vec<_> = (0..callers)
        .map(|_| {
            let clients = clients.clone();
            tokio::spawn(async move {
                for _ in 0..calls {
                    clients.call(call, v).await?;
                }
                Ok::<_, Failure>(())
            })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    Ok(started.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(vec![]), 0.0);
    }

    #[test]
    fn every_variant_runs_first_in_turn() {
        let firsts: Vec<Variant> = (0..3).map(|r| order(r)[0]).collect();
        assert_eq!(firsts, Variant::ALL);
    }

    #[test]
    fn ratios_are_taken_round_by_round() {
        let samples = Samples {
            per_variant: [
                vec![2.0, 4.0, 6.0],
                vec![1.0, 2.0, 3.0],
                vec![1.0, 2.0, 3.0],
            ],
        };
        assert_eq!(samples.ratio(Variant::Facade), 2.0);
        assert_eq!(samples.ratio(Variant::Floor), 1.0);
    }
}
