//! Interleaved rounds: each round runs every variant of the call once, in an order that rotates from
//! round to round, so drift of the machine (other load, frequency, caches) falls on all variants
//! alike. A figure is the median over rounds; a ratio is the median of the per-round ratios against
//! another variant (the floor, or the vendor's crate). Each round also records the CPU time of the
//! process per call (client and server threads).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clients::{Call, Clients, Failure, VARIANTS, Variant};
use crate::cpu::process_cpu;

/// One sample per round and variant.
#[derive(Debug, Default)]
pub struct Samples {
    /// `per_variant[v][round]`: seconds per call (sequential) or calls per second (concurrent);
    /// empty for a variant that does not make the call.
    pub per_variant: [Vec<f64>; VARIANTS],
    /// `cpu[v][round]`: CPU seconds of the client's process per call (empty without `/proc`).
    pub cpu: [Vec<f64>; VARIANTS],
}

impl Samples {
    /// The median of variant `v`.
    pub fn median(&self, v: Variant) -> f64 {
        median(self.per_variant[v.index()].clone())
    }

    /// Whether `v` made the call.
    pub fn has(&self, v: Variant) -> bool {
        !self.per_variant[v.index()].is_empty()
    }

    /// The median over rounds of `v`'s sample divided by the floor's in the same round.
    pub fn ratio(&self, v: Variant) -> f64 {
        ratio_of(&self.per_variant, v, Variant::Floor)
    }

    /// The median over rounds of `v`'s sample divided by `base`'s in the same round.
    pub fn ratio_to(&self, v: Variant, base: Variant) -> f64 {
        ratio_of(&self.per_variant, v, base)
    }

    /// The median CPU time per call of `v`, when measured.
    pub fn cpu_median(&self, v: Variant) -> Option<f64> {
        let cpu = &self.cpu[v.index()];
        (!cpu.is_empty()).then(|| median(cpu.clone()))
    }

    /// Like [`ratio`](Self::ratio), of the CPU time per call.
    pub fn cpu_ratio(&self, v: Variant) -> Option<f64> {
        (!self.cpu[v.index()].is_empty()).then(|| ratio_of(&self.cpu, v, Variant::Floor))
    }

    fn push(&mut self, v: Variant, sample: f64, cpu: Option<f64>) {
        self.per_variant[v.index()].push(sample);
        if let Some(cpu) = cpu {
            self.cpu[v.index()].push(cpu);
        }
    }
}

/// The median over rounds of `v`'s sample divided by `base`'s in the same round.
fn ratio_of(samples: &[Vec<f64>; VARIANTS], v: Variant, base: Variant) -> f64 {
    let base = &samples[base.index()];
    let ratios = samples[v.index()]
        .iter()
        .zip(base)
        .map(|(x, b)| x / b)
        .collect();
    median(ratios)
}

/// CPU seconds per call between two readings of [`process_cpu`].
fn cpu_per_call(before: Option<Duration>, calls: usize) -> Option<f64> {
    let spent = process_cpu()?.checked_sub(before?)?;
    Some(spent.as_secs_f64() / calls as f64)
}

/// The order of `call`'s variants in round `round`.
fn order(call: Call, round: usize) -> Vec<Variant> {
    let mut order = call.variants().to_vec();
    let n = order.len();
    order.rotate_left(round % n);
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
        for v in order(call, round) {
            let cpu = process_cpu();
            let started = Instant::now();
            for _ in 0..calls {
                clients.call(call, v).await?;
            }
            let elapsed = started.elapsed();
            if round > 0 {
                let cpu = cpu_per_call(cpu, calls);
                samples.push(v, elapsed.as_secs_f64() / calls as f64, cpu);
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
        for v in order(call, round) {
            let cpu = process_cpu();
            let elapsed = burst(clients, call, v, callers, calls).await?;
            if round > 0 {
                let cpu = cpu_per_call(cpu, callers * calls);
                samples.push(v, (callers * calls) as f64 / elapsed.as_secs_f64(), cpu);
            }
        }
    }
    Ok(samples)
}

/// Runs `callers` tasks of `calls` calls each; how long until the last one finished.
pub async fn burst(
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
        for call in [Call::GetPipe, Call::StartService] {
            let n = call.variants().len();
            let firsts: Vec<Variant> = (0..n).map(|r| order(call, r)[0]).collect();
            assert_eq!(firsts, call.variants());
        }
    }

    #[test]
    fn ratios_are_taken_round_by_round() {
        let samples = Samples {
            per_variant: [
                vec![2.0, 4.0, 6.0],
                vec![1.0, 2.0, 3.0],
                vec![1.0, 2.0, 3.0],
                vec![4.0, 4.0, 4.0],
            ],
            cpu: [vec![3.0], vec![], vec![2.0], vec![]],
        };
        assert_eq!(samples.ratio(Variant::Facade), 2.0);
        assert_eq!(samples.ratio_to(Variant::Facade, Variant::Peer), 1.0);
        assert!(samples.has(Variant::Peer));
        assert_eq!(samples.ratio(Variant::Floor), 1.0);
        assert_eq!(samples.cpu_ratio(Variant::Facade), Some(1.5));
        assert_eq!(samples.cpu_ratio(Variant::Generated), None);
    }
}
