//! The SDK figures: the facade, the generated client, the floor and (feature `peer`) the vendor's
//! crate against one canned server.

use std::sync::Arc;

use crate::canned::CannedServer;
use crate::clients::{Call, Clients, Failure, Variant};
use crate::rounds::{self, Samples};

/// How a figure is measured, and which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Seconds per call, one caller: lower is better.
    PerCall,
    /// Calls per second, many callers: higher is better.
    Throughput,
}

/// One line of the table.
#[derive(Debug)]
pub struct Figure {
    /// What was measured.
    pub name: &'static str,
    /// Per call or throughput.
    pub measure: Measure,
    /// The samples of every variant.
    pub samples: Samples,
    /// The target for the facade's ratio against [`against`](Self::against).
    pub target: f64,
    /// What the target compares the facade with: the floor, the generated client, or the vendor's
    /// crate.
    pub against: Variant,
}

impl Figure {
    /// The facade's ratio against what the target compares it with, when that variant ran.
    pub fn target_ratio(&self) -> Option<f64> {
        self.samples
            .has(self.against)
            .then(|| self.samples.ratio_to(Variant::Facade, self.against))
    }

    /// Whether the facade meets its target in this run (`None`: the variant it is compared with
    /// was not built, see the `peer` feature).
    pub fn met(&self) -> Option<bool> {
        let ratio = self.target_ratio()?;
        Some(match self.measure {
            Measure::PerCall => ratio <= self.target,
            Measure::Throughput => ratio >= self.target,
        })
    }
}

/// How much work each figure gets.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Rounds of every figure (each round runs every variant once).
    pub rounds: usize,
    /// Sequential `getPipe` calls per variant and round.
    pub pipe_calls: usize,
    /// Sequential list calls per variant and round.
    pub list_calls: usize,
    /// Concurrent callers.
    pub callers: usize,
    /// Calls per caller, per variant and round.
    pub calls_per_caller: usize,
}

impl Plan {
    /// About 40 seconds on a 2-core machine.
    pub const FULL: Plan = Plan {
        rounds: 91,
        pipe_calls: 400,
        list_calls: 8,
        callers: 32,
        calls_per_caller: 50,
    };

    /// A few seconds: checks that everything runs, figures not to be trusted.
    pub const QUICK: Plan = Plan {
        rounds: 3,
        pipe_calls: 20,
        list_calls: 2,
        callers: 32,
        calls_per_caller: 2,
    };
}

/// Runs every SDK figure against a fresh canned server on `server_threads` threads of its own.
pub async fn run(plan: Plan, server_threads: usize) -> Result<Vec<Figure>, Failure> {
    let server = CannedServer::spawn(server_threads)?;
    let clients = Arc::new(Clients::new(&server.base_url())?);
    check_counts(&clients).await?;
    let mut figures = Vec::new();
    let sequential = [
        (
            "start a service (state command), sequential",
            Call::StartService,
            plan.pipe_calls,
            1.00,
            Variant::Peer,
        ),
        (
            "get one pipe, sequential",
            Call::GetPipe,
            plan.pipe_calls,
            1.05,
            Variant::Generated,
        ),
        (
            "list 1000 reverse private endpoints",
            Call::ListEndpoints,
            plan.list_calls,
            1.00,
            Variant::Floor,
        ),
        (
            "list 500 dashboards (1 MB)",
            Call::ListDashboards,
            plan.list_calls,
            1.00,
            Variant::Floor,
        ),
    ];
    for (name, call, calls, target, against) in sequential {
        eprintln!("measuring: {name}");
        figures.push(Figure {
            name,
            measure: Measure::PerCall,
            samples: rounds::sequential(&clients, call, plan.rounds, calls).await?,
            target,
            against,
        });
    }
    let concurrent = [
        (
            "start a service, 32 concurrent, throughput",
            Call::StartService,
            1.00,
            Variant::Peer,
        ),
        (
            "get one pipe, 32 concurrent, throughput",
            Call::GetPipe,
            0.95,
            Variant::Floor,
        ),
    ];
    for (name, call, target, against) in concurrent {
        eprintln!("measuring: {name}");
        figures.push(Figure {
            name,
            measure: Measure::Throughput,
            samples: rounds::concurrent(
                &clients,
                call,
                plan.rounds,
                plan.callers,
                plan.calls_per_caller,
            )
            .await?,
            target,
            against,
        });
    }
    drop(clients);
    drop(server);
    Ok(figures)
}

/// `calls` calls of `call` by `variant` alone, made by `callers` concurrent tasks, after 10 to warm up:
/// what a profiler watches.
pub async fn repeat(
    variant: Variant,
    call: Call,
    calls: usize,
    callers: usize,
    server_threads: usize,
) -> Result<(), Failure> {
    let server = CannedServer::spawn(server_threads)?;
    let clients = Arc::new(Clients::new(&server.base_url())?);
    for _ in 0..10 {
        clients.call(call, variant).await?;
    }
    let per_caller = calls.div_ceil(callers);
    let elapsed = rounds::burst(&clients, call, variant, callers, per_caller).await?;
    let made = per_caller * callers;
    let per_call = elapsed.as_secs_f64() / made.max(1) as f64;
    println!(
        "{variant:?} {call:?}: {made} calls by {callers} {}, {:.1} µs a call",
        if callers == 1 { "caller" } else { "callers" },
        per_call * 1e6
    );
    Ok(())
}

/// Every variant sees the same answer: one service, one pipe, 1000 endpoints, 500 dashboards.
async fn check_counts(clients: &Clients) -> Result<(), Failure> {
    for (call, expected) in [
        (Call::StartService, 1),
        (Call::GetPipe, 1),
        (Call::ListEndpoints, crate::fixtures::ENDPOINTS),
        (Call::ListDashboards, crate::fixtures::DASHBOARDS),
    ] {
        for &v in call.variants() {
            let count = clients.call(call, v).await?;
            if count != expected {
                return Err(
                    format!("{call:?} by {v:?}: {count} items, expected {expected}").into(),
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Not timed: every client reads every canned answer, so the figures compare like with like.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_client_reads_every_canned_answer() {
        let server = CannedServer::start(1).unwrap();
        let clients = Clients::new(&server.base_url()).unwrap();
        check_counts(&clients).await.unwrap();
    }
}
