//! The plan's reads: each recorded pipe it covers (or what it was last seen as, without a
//! refresh), and the service when its state is declared. Nothing is written.

use std::collections::BTreeMap;

use api_core::Error;
use api_core::management::ServiceState;
use futures::StreamExt as _;
use serde_json::Value;

use super::{PlanOptions, ServiceChange};
use crate::ServiceHandle;
use crate::declared::{Declaration, DeclaredError, RecordedState, ServiceTarget};

/// How many recorded pipes a plan reads at once (each read still takes its slot of the rate limit).
const READS_AT_ONCE: usize = 4;

/// What a plan's read of one recorded pipe found.
pub(super) enum Read {
    /// The pipe, as the server wrote it (the generated type's JSON).
    Found(Value),
    /// 404.
    Gone,
    /// An answer that cannot be decoded, and why.
    Unreadable(String),
    /// Not read (refresh off): what it was last seen as, in its stored form.
    Assumed(Value),
}

/// Each recorded pipe `options` covers, by name, read a few at a time (or, without a refresh, as
/// last seen); and how many calls that took.
pub(super) async fn pipes(
    service: &ServiceHandle,
    recorded: &RecordedState,
    options: &PlanOptions,
) -> Result<(BTreeMap<String, Read>, u32), DeclaredError> {
    let covered = recorded
        .pipes
        .iter()
        .filter(|(name, _)| options.covers(name));
    let mut on_server = BTreeMap::new();
    if !options.refresh {
        // No read: the server is taken to answer what it answered when it was last seen.
        for (name, record) in covered {
            let seen = record.observed.as_ref().unwrap_or(&record.declared);
            on_server.insert(name.clone(), Read::Assumed(seen.clone()));
        }
        return Ok((on_server, 0));
    }
    let reads = futures::stream::iter(covered.map(|(name, record)| async move {
        // A recorded pipe may be gone: its 404 is an answer, not a failed call.
        let read = api_core::spans::expecting_not_found(service.pipe(record.id).get_wire()).await;
        (name.clone(), read)
    }))
    .buffer_unordered(READS_AT_ONCE)
    .collect::<Vec<_>>()
    .await;
    let mut calls = 0;
    for (name, read) in reads {
        calls += 1;
        let read = match read {
            Ok(pipe) => match serde_json::to_value(pipe.into_inner()) {
                Ok(json) => Read::Found(json),
                Err(e) => Read::Unreadable(format!("the answer cannot be written as JSON: {e}")),
            },
            Err(e) if e.is_not_found() => Read::Gone,
            // One answer the SDK cannot decode blocks only its own pipe.
            Err(e @ Error::Decode(_)) => Read::Unreadable(e.to_string()),
            Err(e) => return Err(DeclaredError::Api(e)),
        };
        on_server.insert(name, read);
    }
    Ok((on_server, calls))
}

/// The service's change, when the declaration has a state it is not in: read once (counted in
/// `calls`) unless there is no refresh or the server refuses the read.
pub(super) async fn service_change(
    service: &ServiceHandle,
    declaration: &Declaration,
    options: &PlanOptions,
    calls: &mut u32,
) -> Result<Option<ServiceChange>, DeclaredError> {
    let Some(target) = declaration.declared_service_state() else {
        return Ok(None);
    };
    // A server may refuse the read (400): a plan must not write, so it cannot tell the state, and
    // plans the command (which changes nothing on a service already there).
    let learned = service.client.parts().0.learned();
    let read = if !options.refresh || learned.refuses_command_less_read() {
        None
    } else {
        *calls += 1;
        match service.get().await {
            Ok(now) => now.into_inner().state,
            Err(e) if e.status() == Some(400) => {
                learned.learn_command_less_read_refused();
                None
            }
            Err(e) => return Err(DeclaredError::Api(e)),
        }
    };
    let known = read.is_some();
    let state = read.unwrap_or_else(|| ServiceState::from("unknown"));
    let reached = match target {
        ServiceTarget::Running => state == ServiceState::Running,
        ServiceTarget::Stopped => state == ServiceState::Stopped,
    };
    Ok((!reached).then_some(ServiceChange {
        from: state,
        to: target,
        known,
    }))
}
