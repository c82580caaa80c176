//! The mutable state: services and pipes, with state machines evaluated lazily from wall-clock times
//! (so they keep going across a restart with `--data-dir`).

use std::collections::{BTreeSet, HashMap};

use api_raw::management::types as mgmt;
use api_raw::support::{PipeState, ServiceState};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::seed::{Seed, Timing};

/// A service and what hangs off it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServiceRecord {
    /// Its organization.
    pub organization: Uuid,
    /// The Service fields; `state` is the state last set, see [`ServiceRecord::current`].
    pub service: mgmt::Service,
    /// When `state` was set.
    pub since: DateTime<Utc>,
    /// Reverse private endpoints.
    pub reverse_private_endpoints: Vec<mgmt::ReversePrivateEndpoint>,
    /// Registered private endpoints.
    #[serde(default)]
    pub private_endpoints: Vec<mgmt::PrivateEndpoint>,
}

impl ServiceRecord {
    /// The state now: a transition finishes `service_transition_ms` after it began.
    pub fn state_at(&self, now: DateTime<Utc>, timing: &Timing) -> ServiceState {
        let stored = self.service.state.clone().unwrap_or(ServiceState::Stopped);
        if now - self.since < Timing::ms(timing.service_transition_ms) {
            return stored;
        }
        match stored {
            ServiceState::Starting | ServiceState::Awaking | ServiceState::Provisioning => {
                ServiceState::Running
            }
            ServiceState::Stopping => ServiceState::Stopped,
            ServiceState::Terminating => ServiceState::Terminated,
            other => other,
        }
    }

    /// The Service as the API shows it now.
    pub fn current(&self, now: DateTime<Utc>, timing: &Timing) -> mgmt::Service {
        let mut service = self.service.clone();
        service.state = Some(self.state_at(now, timing));
        service
    }

    /// Moves to `state` now.
    pub fn set_state(&mut self, state: ServiceState, now: DateTime<Utc>) {
        self.service.state = Some(state);
        self.since = now;
    }
}

/// The kind of source of a pipe.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum SourceKind {
    /// Kafka-style.
    Kafka,
    /// Object storage.
    ObjectStorage,
    /// Kinesis-style.
    Kinesis,
    /// Postgres.
    Postgres,
}

/// Whether a deletion that began `at` has finished at `now`: `pipe_delete_ms` later.
fn deletion_finished(at: DateTime<Utc>, now: DateTime<Utc>, timing: &Timing) -> bool {
    now - at >= Timing::ms(timing.pipe_delete_ms)
}

/// A pipe and its lifecycle.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PipeRecord {
    /// Its organization.
    pub organization: Uuid,
    /// The Pipe fields as returned (no request-only member); `state` is computed.
    pub pipe: mgmt::Pipe,
    /// The source kind.
    pub kind: SourceKind,
    /// A one-shot object storage load (`isContinuous: false`).
    pub one_shot: bool,
    /// When it was created.
    pub created: DateTime<Utc>,
    /// A state forced through the control API.
    pub forced: Option<PipeState>,
    /// When it was deleted.
    pub deleted_at: Option<DateTime<Utc>>,
    /// The `validateSamples` flag it was created with (recorded, no effect).
    pub validate_samples: Option<bool>,
}

impl PipeRecord {
    /// The state now, following the lifecycle of its source kind.
    pub fn state_at(&self, now: DateTime<Utc>, timing: &Timing) -> PipeState {
        if let Some(forced) = &self.forced {
            return forced.clone();
        }
        if self.deleted_at.is_some() {
            return PipeState::Stopping;
        }
        let age = now - self.created;
        let provisioning = Timing::ms(timing.pipe_provisioning_ms);
        let phase = Timing::ms(timing.pipe_phase_ms);
        if age < provisioning {
            return PipeState::Provisioning;
        }
        match self.kind {
            SourceKind::Postgres if age < provisioning + phase => PipeState::Setup,
            SourceKind::Postgres if age < provisioning + phase + phase => PipeState::Snapshot,
            SourceKind::ObjectStorage if self.one_shot && age >= provisioning + phase => {
                PipeState::Completed
            }
            _ => PipeState::Running,
        }
    }

    /// Whether a deleted pipe has finished disappearing.
    pub fn is_gone(&self, now: DateTime<Utc>, timing: &Timing) -> bool {
        self.deleted_at
            .is_some_and(|at| deletion_finished(at, now, timing))
    }

    /// The Pipe as the API shows it now.
    pub fn current(&self, now: DateTime<Utc>, timing: &Timing) -> mgmt::Pipe {
        let mut pipe = self.pipe.clone();
        pipe.state = Some(self.state_at(now, timing));
        pipe
    }
}

/// Everything that changes. Pipes are reached through methods that keep two indexes beside them:
/// the live pipes by service and name (the uniqueness check on create; several pipes can share a
/// name, with `duplicate_names` or a console edit), and the pipes being deleted by deletion time
/// (the purge of those gone), so that neither scans every pipe.
#[derive(Debug, Default)]
pub struct World {
    /// Services by id.
    pub services: HashMap<Uuid, ServiceRecord>,
    /// Pipes by id.
    pipes: HashMap<Uuid, PipeRecord>,
    /// The live (not deleted) pipes by service and name; never an empty set.
    names: HashMap<(Uuid, String), BTreeSet<Uuid>>,
    /// The deleted pipes, by deletion time.
    deleting: BTreeSet<(DateTime<Utc>, Uuid)>,
}

impl World {
    /// The services of a seed, as of `now`.
    pub fn from_seed(seed: &Seed, now: DateTime<Utc>) -> Self {
        let services = seed
            .services
            .iter()
            .filter_map(|s| {
                let id = s.service.id?;
                let endpoints = s
                    .reverse_private_endpoints
                    .iter()
                    .cloned()
                    .map(|mut e| {
                        e.service_id = Some(id);
                        e
                    })
                    .collect();
                let record = ServiceRecord {
                    organization: s.organization,
                    service: s.service.clone(),
                    since: now - chrono::Duration::days(1),
                    reverse_private_endpoints: endpoints,
                    private_endpoints: Vec::new(),
                };
                Some((id, record))
            })
            .collect();
        Self {
            services,
            ..Self::default()
        }
    }

    /// Every pipe, deleted ones included until they are purged.
    pub fn pipes(&self) -> impl Iterator<Item = (&Uuid, &PipeRecord)> {
        self.pipes.iter()
    }

    /// One pipe.
    pub fn pipe(&self, id: &Uuid) -> Option<&PipeRecord> {
        self.pipes.get(id)
    }

    /// A live pipe of `service` called `name` (the one with the lowest id, when several are).
    pub fn pipe_named(&self, service: Uuid, name: &str) -> Option<Uuid> {
        self.pipes_named(service, name).next()
    }

    /// Whether a pipe of `service` called `name` is being deleted at `now` (its deletion not
    /// finished): where a delete is acknowledged before the teardown, it still holds its name.
    pub fn deleting_named(
        &self,
        service: Uuid,
        name: &str,
        now: DateTime<Utc>,
        timing: &Timing,
    ) -> bool {
        self.deleting
            .iter()
            .skip_while(|(at, _)| deletion_finished(*at, now, timing))
            .filter_map(|(_, id)| self.pipes.get(id))
            .any(|record| {
                record.pipe.service_id == Some(service) && record.pipe.name.as_deref() == Some(name)
            })
    }

    /// Every live pipe of `service` called `name`, by id.
    pub fn pipes_named(&self, service: Uuid, name: &str) -> impl Iterator<Item = Uuid> + '_ {
        self.names
            .get(&(service, name.to_string()))
            .into_iter()
            .flatten()
            .copied()
    }

    /// Adds a pipe, or replaces the one with this id.
    pub fn put_pipe(&mut self, id: Uuid, record: PipeRecord) {
        self.unindex(id);
        match record.deleted_at {
            Some(at) => {
                self.deleting.insert((at, id));
            }
            None => {
                if let (Some(service), Some(name)) = (record.pipe.service_id, &record.pipe.name) {
                    self.names
                        .entry((service, name.clone()))
                        .or_default()
                        .insert(id);
                }
            }
        }
        self.pipes.insert(id, record);
    }

    /// Forgets a pipe.
    pub fn remove_pipe(&mut self, id: Uuid) -> Option<PipeRecord> {
        self.unindex(id);
        self.pipes.remove(&id)
    }

    /// The deleted pipes that have finished disappearing at `now`, oldest deletion first; the cost
    /// is in those found, not in the number of pipes.
    pub fn gone_pipes(&self, now: DateTime<Utc>, timing: &Timing) -> Vec<Uuid> {
        self.deleting
            .iter()
            .take_while(|(at, _)| deletion_finished(*at, now, timing))
            .map(|(_, id)| *id)
            .collect()
    }

    fn unindex(&mut self, id: Uuid) {
        let Some(old) = self.pipes.get(&id) else {
            return;
        };
        if let Some(at) = old.deleted_at {
            self.deleting.remove(&(at, id));
        }
        if let (Some(service), Some(name)) = (old.pipe.service_id, &old.pipe.name) {
            let key = (service, name.clone());
            if let Some(ids) = self.names.get_mut(&key) {
                ids.remove(&id);
                if ids.is_empty() {
                    self.names.remove(&key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing() -> Timing {
        Timing {
            service_transition_ms: 1000,
            pipe_provisioning_ms: 1000,
            pipe_phase_ms: 1000,
            pipe_delete_ms: 1000,
        }
    }

    fn pipe(kind: SourceKind, one_shot: bool, created: DateTime<Utc>) -> PipeRecord {
        PipeRecord {
            organization: Uuid::nil(),
            pipe: mgmt::Pipe::default(),
            kind,
            one_shot,
            created,
            forced: None,
            deleted_at: None,
            validate_samples: None,
        }
    }

    #[test]
    fn pipes_follow_their_lifecycle() {
        let t0 = Utc::now();
        let at = |ms: i64| t0 + chrono::Duration::milliseconds(ms);
        let kafka = pipe(SourceKind::Kafka, false, t0);
        assert_eq!(kafka.state_at(at(500), &timing()), PipeState::Provisioning);
        assert_eq!(kafka.state_at(at(1500), &timing()), PipeState::Running);
        let postgres = pipe(SourceKind::Postgres, false, t0);
        let states: Vec<PipeState> = [500, 1500, 2500, 3500]
            .iter()
            .map(|ms| postgres.state_at(at(*ms), &timing()))
            .collect();
        assert_eq!(
            states,
            [
                PipeState::Provisioning,
                PipeState::Setup,
                PipeState::Snapshot,
                PipeState::Running
            ]
        );
        let one_shot = pipe(SourceKind::ObjectStorage, true, t0);
        assert_eq!(one_shot.state_at(at(1500), &timing()), PipeState::Running);
        assert_eq!(one_shot.state_at(at(2500), &timing()), PipeState::Completed);
        let mut deleted = pipe(SourceKind::Kinesis, false, t0);
        deleted.deleted_at = Some(at(2000));
        assert_eq!(deleted.state_at(at(2500), &timing()), PipeState::Stopping);
        assert!(!deleted.is_gone(at(2500), &timing()));
        assert!(deleted.is_gone(at(3000), &timing()));
    }

    fn named(service: Uuid, name: &str, created: DateTime<Utc>) -> PipeRecord {
        let mut record = pipe(SourceKind::Kafka, false, created);
        record.pipe.service_id = Some(service);
        record.pipe.name = Some(name.into());
        record
    }

    #[test]
    fn the_indexes_follow_creates_deletes_and_removals() {
        let t0 = Utc::now();
        let at = |ms: i64| t0 + chrono::Duration::milliseconds(ms);
        let (service, other) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let (a, b, c) = (
            Uuid::from_u128(10),
            Uuid::from_u128(11),
            Uuid::from_u128(12),
        );
        let mut world = World::default();
        world.put_pipe(a, named(service, "orders", t0));
        world.put_pipe(b, named(other, "orders", t0));
        assert_eq!(world.pipe_named(service, "orders"), Some(a));
        assert_eq!(world.pipe_named(other, "orders"), Some(b));
        assert_eq!(world.pipe_named(service, "events"), None);

        let mut deleted = named(service, "orders", t0);
        deleted.deleted_at = Some(at(100));
        world.put_pipe(a, deleted);
        assert_eq!(
            world.pipe_named(service, "orders"),
            None,
            "a deleted pipe frees its name"
        );
        world.put_pipe(c, named(service, "orders", at(200)));
        assert_eq!(world.pipe_named(service, "orders"), Some(c));

        assert!(world.gone_pipes(at(1099), &timing()).is_empty());
        assert_eq!(world.gone_pipes(at(1100), &timing()), [a]);
        world.remove_pipe(a);
        assert!(world.gone_pipes(at(5000), &timing()).is_empty());
        assert_eq!(
            world.pipe_named(service, "orders"),
            Some(c),
            "the new pipe keeps the name"
        );
        assert_eq!(world.pipes().count(), 2);
        world.remove_pipe(c);
        assert_eq!(world.pipe_named(service, "orders"), None);
    }

    #[test]
    fn two_live_pipes_can_share_a_name_and_each_keeps_it_until_deleted() {
        let t0 = Utc::now();
        let service = Uuid::from_u128(1);
        let (a, b) = (Uuid::from_u128(10), Uuid::from_u128(11));
        let mut world = World::default();
        world.put_pipe(b, named(service, "orders", t0));
        world.put_pipe(a, named(service, "orders", t0));
        assert_eq!(
            world.pipes_named(service, "orders").collect::<Vec<_>>(),
            [a, b]
        );
        assert_eq!(world.pipe_named(service, "orders"), Some(a));

        let mut deleted = named(service, "orders", t0);
        deleted.deleted_at = Some(t0);
        world.put_pipe(a, deleted);
        assert_eq!(
            world.pipe_named(service, "orders"),
            Some(b),
            "deleting one leaves the other's name taken"
        );
        world.put_pipe(b, named(service, "orders", t0));
        assert_eq!(
            world.pipes_named(service, "orders").collect::<Vec<_>>(),
            [b]
        );
        world.remove_pipe(b);
        assert_eq!(world.pipe_named(service, "orders"), None);
        assert_eq!(
            world.pipes().count(),
            1,
            "the deleted one is listed until purged"
        );
    }

    #[test]
    fn services_finish_transitions_after_the_delay() {
        let t0 = Utc::now();
        let mut record = ServiceRecord {
            organization: Uuid::nil(),
            service: mgmt::Service::default(),
            since: t0,
            reverse_private_endpoints: Vec::new(),
            private_endpoints: Vec::new(),
        };
        record.set_state(ServiceState::Starting, t0);
        assert_eq!(record.state_at(t0, &timing()), ServiceState::Starting);
        assert_eq!(
            record.state_at(t0 + chrono::Duration::seconds(1), &timing()),
            ServiceState::Running
        );
        record.set_state(ServiceState::Stopping, t0);
        assert_eq!(
            record.state_at(t0 + chrono::Duration::seconds(2), &timing()),
            ServiceState::Stopped
        );
    }
}
