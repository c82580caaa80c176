//! What the SDK's spans cost a call: `getPipe` by the facade with no subscriber and with one that
//! records every span (`tracing-opentelemetry` into OpenTelemetry's SDK, exported to memory), each
//! against the generated client in the same interleaved rounds.
//!
//! Two phases, in this order: no `tracing` dispatcher exists during the first, so the facade's
//! spans are what a program without a subscriber pays (a dispatcher alive anywhere makes every
//! callsite ask it again); the second records.

use std::sync::Arc;
use std::time::Instant;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use tracing::instrument::WithSubscriber as _;
use tracing_subscriber::layer::SubscriberExt as _;

use crate::canned::CannedServer;
use crate::clients::{Call, Clients, Failure, Variant};
use crate::rounds::median;

/// How much work each phase gets.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Interleaved rounds per phase.
    pub rounds: usize,
    /// Sequential calls per variant and round.
    pub calls: usize,
}

impl Plan {
    /// About 20 seconds on a 2-core machine.
    pub const FULL: Plan = Plan {
        rounds: 61,
        calls: 300,
    };

    /// A second: checks that everything runs.
    pub const QUICK: Plan = Plan {
        rounds: 3,
        calls: 10,
    };
}

/// One phase's figures: seconds per call (medians over rounds) and the median per-round ratio.
#[derive(Debug)]
pub struct Phase {
    /// The facade's seconds per call.
    pub facade: f64,
    /// The generated client's seconds per call.
    pub generated: f64,
    /// The median of facade / generated per round.
    pub ratio: f64,
    /// Spans recorded per facade call (0 without a subscriber).
    pub spans_per_call: f64,
}

/// The two phases: without a subscriber, then recording.
pub async fn run(plan: Plan, server_threads: usize) -> Result<(Phase, Phase), Failure> {
    let server = CannedServer::spawn(server_threads)?;
    let clients = Arc::new(Clients::new(&server.base_url())?);
    eprintln!("measuring: getPipe without a subscriber");
    let quiet = phase(&clients, plan, None).await?;
    eprintln!("measuring: getPipe with its spans recorded");
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("api-bench"));
    let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(layer));
    let recorded = phase(&clients, plan, Some((&dispatch, &exporter))).await?;
    let _ = provider.shutdown();
    Ok((quiet, recorded))
}

async fn phase(
    clients: &Clients,
    plan: Plan,
    recording: Option<(&tracing::Dispatch, &InMemorySpanExporter)>,
) -> Result<Phase, Failure> {
    let (mut facade, mut generated, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut spans = 0usize;
    for _ in 0..3 {
        clients.call(Call::GetPipe, Variant::Generated).await?;
    }
    for round in 0..plan.rounds {
        // The order rotates, so drift falls on both alike.
        let mut order = [Variant::Facade, Variant::Generated];
        if round % 2 == 1 {
            order.reverse();
        }
        let mut per_call = [0.0; 2];
        for (slot, variant) in order.into_iter().enumerate() {
            let started = Instant::now();
            for _ in 0..plan.calls {
                let call = clients.call(Call::GetPipe, variant);
                match (variant, recording) {
                    (Variant::Facade, Some((dispatch, _))) => {
                        call.with_subscriber(dispatch.clone()).await?
                    }
                    _ => call.await?,
                };
            }
            per_call[slot] = started.elapsed().as_secs_f64() / plan.calls as f64;
        }
        let (f, g) = if order[0] == Variant::Facade {
            (per_call[0], per_call[1])
        } else {
            (per_call[1], per_call[0])
        };
        facade.push(f);
        generated.push(g);
        ratios.push(f / g);
        if let Some((_, exporter)) = recording {
            spans += exporter.get_finished_spans().map_or(0, |s| s.len());
            exporter.reset();
        }
    }
    Ok(Phase {
        facade: median(facade),
        generated: median(generated),
        ratio: median(ratios),
        spans_per_call: spans as f64 / (plan.rounds * plan.calls) as f64,
    })
}
