//! The store's rules over an engine kept in memory (the real engines are tested against real
//! servers in the workspace's `shared_state` tests): the self-check refuses an engine that takes a
//! stale write, a held lease refuses others and names its holder, and a save needs this store's
//! lease.

use std::sync::Mutex;

use super::*;

fn target() -> StateTarget {
    StateTarget {
        api_url: "http://127.0.0.1:8080".into(),
        organization_id: "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".parse().unwrap(),
        service_id: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse().unwrap(),
    }
}

/// One service's keys in memory; with `ignores_fence`, a store that writes whatever the number
/// (what a store without conditional writes does).
#[derive(Default)]
struct Memory {
    ignores_fence: bool,
    keys: Mutex<Keys>,
}

#[derive(Default)]
struct Keys {
    fence: u64,
    lease: Option<(u64, String)>,
    state: Option<String>,
    probe: Option<String>,
}

impl Engine for Memory {
    fn acquire(&self, holder: &str, _ttl: Duration) -> Result<Taken, String> {
        let mut keys = self.keys.lock().unwrap();
        if let Some((_, who)) = &keys.lease {
            return Ok(Taken::Held(LeaseHolder {
                holder: who.clone(),
                since: 0,
                expires_in: Duration::from_secs(30),
            }));
        }
        keys.fence += 1;
        keys.lease = Some((keys.fence, holder.to_string()));
        Ok(Taken::Lease(keys.fence))
    }

    fn renew(&self, fence: u64, _holder: &str, _ttl: Duration) -> Result<bool, String> {
        Ok(self.keys.lock().unwrap().fence == fence)
    }

    fn release(&self, fence: u64) -> Result<(), String> {
        let mut keys = self.keys.lock().unwrap();
        if keys.fence == fence {
            keys.lease = None;
        }
        Ok(())
    }

    fn force_release(&self) -> Result<Option<LeaseHolder>, String> {
        let mut keys = self.keys.lock().unwrap();
        keys.fence += 1;
        Ok(keys.lease.take().map(|(_, holder)| LeaseHolder {
            holder,
            since: 0,
            expires_in: Duration::ZERO,
        }))
    }

    fn holder(&self) -> Result<Option<LeaseHolder>, String> {
        Ok(self
            .keys
            .lock()
            .unwrap()
            .lease
            .as_ref()
            .map(|(_, holder)| LeaseHolder {
                holder: holder.clone(),
                since: 0,
                expires_in: Duration::from_secs(30),
            }))
    }

    fn read(&self, slot: Slot) -> Result<Option<String>, String> {
        let keys = self.keys.lock().unwrap();
        Ok(match slot {
            Slot::State => keys.state.clone(),
            Slot::Probe => keys.probe.clone(),
        })
    }

    fn write(&self, fence: u64, slot: Slot, text: &str) -> Result<bool, String> {
        let mut keys = self.keys.lock().unwrap();
        if fence != keys.fence && !self.ignores_fence {
            return Ok(false);
        }
        *match slot {
            Slot::State => &mut keys.state,
            Slot::Probe => &mut keys.probe,
        } = Some(text.to_string());
        Ok(true)
    }
}

fn store(engine: Memory) -> SharedStateStore {
    SharedStateStore::with_engine(Arc::new(engine), "memory://test".into(), &target())
        .holder("the test")
}

#[test]
fn a_store_that_takes_a_stale_write_is_refused_before_anything_is_written() {
    let store = store(Memory {
        ignores_fence: true,
        ..Memory::default()
    });
    let refused = store.lock(&target()).unwrap_err();
    assert!(
        matches!(refused, StateError::UnsafeStore { .. }),
        "{refused:?}"
    );
    assert!(
        refused.to_string().contains("older than the lease's"),
        "{refused}"
    );
    assert_eq!(store.load().unwrap(), None, "no state was written");
    assert_eq!(
        store.lease_holder().unwrap(),
        None,
        "the lease taken for the check is given back"
    );
}

#[test]
fn a_store_that_fences_passes_and_its_lease_refuses_the_next_holder() {
    let store = store(Memory::default());
    let lock = store.lock(&target()).unwrap();
    assert_eq!(lock.fence(), Some(1));
    let refused = store.lock(&target()).unwrap_err();
    let StateError::Leased {
        holder,
        store: name,
        ..
    } = &refused
    else {
        panic!("{refused:?}");
    };
    assert_eq!(holder.holder, "the test");
    assert_eq!(name, "memory://test");
    let state = RecordedState::new(target());
    store.save(&lock, &state).unwrap();
    assert_eq!(store.load().unwrap(), Some(state));
    drop(lock);
    assert_eq!(
        store.lease_holder().unwrap(),
        None,
        "dropping the lock ends the lease"
    );
    assert_eq!(store.lock(&target()).unwrap().fence(), Some(2));
}

#[test]
fn a_lock_taken_over_writes_nothing_and_a_foreign_lock_is_refused() {
    let store = store(Memory::default());
    let first = store.lock(&target()).unwrap();
    let before = RecordedState::new(target());
    store.save(&first, &before).unwrap();
    assert_eq!(
        store.force_unlock().unwrap().map(|h| h.holder).as_deref(),
        Some("the test")
    );
    let second = store.lock(&target()).unwrap();
    let mut after = before.clone();
    after.pending.clear();
    after.version = before.version;
    assert!(matches!(
        store.check_held(&first),
        Err(StateError::Fenced { .. })
    ));
    store.check_held(&second).unwrap();
    let fenced = store.save(&first, &after).unwrap_err();
    assert!(matches!(fenced, StateError::Fenced { .. }), "{fenced:?}");
    store.save(&second, &after).unwrap();
    let unfenced = StateLock::new(target(), ());
    assert!(matches!(
        store.save(&unfenced, &after),
        Err(StateError::Refused(_))
    ));
    let mut other = target();
    other.service_id = "b1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse().unwrap();
    assert!(matches!(
        store.lock(&other),
        Err(StateError::OtherTarget { .. })
    ));
}

#[test]
fn only_store_urls_are_taken_for_stores() {
    for url in [
        "redis://h:6379",
        "REDISS://h",
        "valkey://h",
        "valkeys://h/0",
    ] {
        assert!(is_store_url(url), "{url}");
    }
    for path in ["state.json", "./redis://x", "/tmp/redis", "", "postgres"] {
        assert!(!is_store_url(path), "{path}");
    }
    let refused = SharedStateStore::open("memcached://:pw@h", &target()).unwrap_err();
    assert!(!refused.to_string().contains("pw"), "{refused}");
}

#[test]
fn a_store_is_described_without_its_user_part_however_written() {
    for (url, shown) in [
        ("redis://:ab/cd+ef@h:6379/0", "redis://[REDACTED]@h:6379/0"),
        ("rediss://user:p@ss@h", "rediss://[REDACTED]@h"),
        ("redis://:pw%2Fx@h/1", "redis://[REDACTED]@h/1"),
        ("redis://h:6379", "redis://h:6379"),
    ] {
        assert_eq!(describe(url), shown, "{url}");
    }
    assert_eq!(password("redis://u:ab/cd@h"), Some("ab/cd"));
    assert_eq!(password("redis://u@h"), None);
    assert_eq!(password("redis://h"), None);
}
