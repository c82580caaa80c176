//! `PATCH .../state`: start and stop a service.

use api_raw::support::ServiceState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::{Admitted, ServiceStateChange, ValidJson, errors, storage_failed};
use crate::app::Shared;
use crate::store::Write;

/// The command of a state change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Start,
    Stop,
}

/// What a command does to a service in `state`: `Ok(Some(next))`, `Ok(None)` for no change, or
/// `Err(())` when the state does not allow it (409).
fn transition(command: Command, state: &ServiceState) -> Result<Option<ServiceState>, ()> {
    use ServiceState as S;
    match (command, state) {
        (Command::Start, S::Stopped) => Ok(Some(S::Starting)),
        (Command::Start, S::Idle) => Ok(Some(S::Awaking)),
        (
            Command::Start,
            S::Running | S::Starting | S::Awaking | S::PartiallyRunning | S::Degraded,
        ) => Ok(None),
        (Command::Stop, S::Running | S::Idle | S::Degraded | S::PartiallyRunning) => {
            Ok(Some(S::Stopping))
        }
        (Command::Stop, S::Stopped | S::Stopping) => Ok(None),
        _ => Err(()),
    }
}

/// Handles `updateServiceState`.
pub async fn update_state(
    State(app): State<Shared>,
    admitted: Admitted,
    ValidJson(body, _): ValidJson<ServiceStateChange>,
) -> Response {
    let rid = admitted.request_id.as_str();
    // `command` is optional in the body shape: without one, the service is answered as it is.
    let command = match body.get("command").and_then(|c| c.as_str()) {
        Some("start") => Some(Command::Start),
        Some("stop") => Some(Command::Stop),
        _ => None,
    };
    let now = app.clock.now();
    let timing = app.seed.timing;
    let mut world = app.world();
    let Some(record) = world.services.get_mut(&admitted.service) else {
        return errors::error(
            rid,
            StatusCode::NOT_FOUND,
            format!("service {} not found", admitted.service),
        );
    };
    let current = record.state_at(now, &timing);
    let Some(command) = command else {
        if !app.seed.server.state_read_without_command {
            return errors::error(
                rid,
                StatusCode::BAD_REQUEST,
                "command must be start or stop",
            );
        }
        return errors::ok(rid, record.current(now, &timing));
    };
    match transition(command, &current) {
        Ok(Some(next)) => {
            // Stored first, then applied: a failed write changes nothing.
            let mut snapshot = record.clone();
            snapshot.set_state(next, now);
            if let Err(e) = app.persist(Write::Service(admitted.service, &snapshot)) {
                return storage_failed(rid, e);
            }
            *record = snapshot.clone();
            // The answer is the service as it is at the instant of the command: the transition has
            // just begun, whatever the configured delay.
            errors::ok(rid, &snapshot.service)
        }
        Ok(None) => errors::ok(rid, record.current(now, &timing)),
        Err(()) => errors::error(
            rid,
            StatusCode::CONFLICT,
            format!(
                "service {} is {current}; cannot {}",
                admitted.service,
                if command == Command::Start {
                    "start"
                } else {
                    "stop"
                }
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_and_stop_follow_the_documented_transitions() {
        assert_eq!(
            transition(Command::Start, &ServiceState::Stopped),
            Ok(Some(ServiceState::Starting))
        );
        assert_eq!(transition(Command::Start, &ServiceState::Running), Ok(None));
        assert_eq!(
            transition(Command::Stop, &ServiceState::Running),
            Ok(Some(ServiceState::Stopping))
        );
        assert_eq!(transition(Command::Stop, &ServiceState::Stopped), Ok(None));
        assert_eq!(transition(Command::Start, &ServiceState::Stopping), Err(()));
        assert_eq!(transition(Command::Stop, &ServiceState::Starting), Err(()));
        assert_eq!(
            transition(Command::Start, &ServiceState::Terminated),
            Err(())
        );
    }
}
