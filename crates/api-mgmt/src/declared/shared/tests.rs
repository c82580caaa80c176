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
/// (what a store without conditional writes does); with `ignores_lease_id`, one that compares the
/// number alone (as layout 1 did); with `failing_renewals`, one whose renewals fail (a store cut
/// off), `renewals` counting them; `layout`, the layout its keys are of.
#[derive(Default)]
struct Memory {
    ignores_fence: bool,
    ignores_lease_id: bool,
    failing_renewals: std::sync::atomic::AtomicBool,
    renewals: std::sync::atomic::AtomicUsize,
    layout: u32,
    keys: Mutex<Keys>,
}

#[derive(Default)]
struct Keys {
    fence: u64,
    lease_id: String,
    lease: Option<(u64, String)>,
    state: Option<String>,
    probe: Option<String>,
}

impl Memory {
    fn is_latest(&self, keys: &Keys, fence: u64, lease: &str) -> bool {
        self.ignores_fence
            || (fence == keys.fence && (self.ignores_lease_id || lease == keys.lease_id))
    }
}

impl Engine for Memory {
    fn acquire(&self, holder: &str, _ttl: Duration, lease: &str) -> Result<Taken, String> {
        if self.layout > LAYOUT {
            return Ok(Taken::NewerLayout(u64::from(self.layout)));
        }
        let mut keys = self.keys.lock().unwrap();
        if let Some((_, who)) = &keys.lease {
            return Ok(Taken::Held(LeaseHolder {
                holder: who.clone(),
                since: 0,
                expires_in: Duration::from_secs(30),
            }));
        }
        keys.fence += 1;
        keys.lease_id = lease.to_string();
        keys.lease = Some((keys.fence, holder.to_string()));
        Ok(Taken::Lease(keys.fence))
    }

    fn renew(
        &self,
        fence: u64,
        lease: &str,
        _holder: &str,
        _ttl: Duration,
    ) -> Result<bool, String> {
        self.renewals
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if self
            .failing_renewals
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return Err("the store cannot be reached".into());
        }
        let keys = self.keys.lock().unwrap();
        Ok(self.is_latest(&keys, fence, lease))
    }

    fn release(&self, fence: u64, lease: &str) -> Result<(), String> {
        let mut keys = self.keys.lock().unwrap();
        if self.is_latest(&keys, fence, lease) {
            keys.lease = None;
        }
        Ok(())
    }

    fn force_release(&self) -> Result<Option<LeaseHolder>, String> {
        let mut keys = self.keys.lock().unwrap();
        keys.lease_id.clear();
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

    fn write(&self, fence: u64, lease: &str, slot: Slot, text: &str) -> Result<bool, String> {
        let mut keys = self.keys.lock().unwrap();
        if !self.is_latest(&keys, fence, lease) {
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
fn a_lease_ttl_out_of_range_is_refused_before_the_store_is_asked() {
    for ttl in [
        Duration::from_millis(999),
        MAX_LEASE_TTL + Duration::from_secs(1),
    ] {
        let refused = store(Memory::default())
            .lease_ttl(ttl)
            .lock(&target())
            .unwrap_err();
        assert!(
            refused.to_string().contains("must be from 1s to 24h"),
            "{refused}"
        );
    }
    let memory = store(Memory::default()).lease_ttl(MIN_LEASE_TTL);
    assert!(memory.lock(&target()).is_ok());
    // Each renewal attempt is bounded by a third of the TTL, and never longer than a call's limit.
    assert_eq!(
        attempt_limit(Duration::from_secs(3)),
        Duration::from_secs(1)
    );
    assert_eq!(attempt_limit(DEFAULT_LEASE_TTL), CALL_LIMIT);
}

#[test]
fn a_store_that_compares_the_number_alone_is_refused() {
    let store = store(Memory {
        ignores_lease_id: true,
        ..Memory::default()
    });
    let refused = store.lock(&target()).unwrap_err();
    assert!(
        matches!(refused, StateError::UnsafeStore { .. })
            && refused.to_string().contains("another lease's id"),
        "{refused}"
    );
}

#[test]
fn a_store_of_a_newer_layout_is_refused() {
    let store = store(Memory {
        layout: LAYOUT + 1,
        ..Memory::default()
    });
    let refused = store.lock(&target()).unwrap_err().to_string();
    assert!(
        refused.contains(&format!("layout is version {}, newer", LAYOUT + 1)),
        "{refused}"
    );
}

#[test]
fn a_number_issued_twice_lets_only_its_latest_holder_write() {
    let engine = Arc::new(Memory::default());
    let store = SharedStateStore::with_engine(engine.clone(), "memory://test".into(), &target());
    let first = store.lock(&target()).unwrap();
    // The lease lapses, and the counter goes back (a snapshot restored): the next holder is
    // given the same number.
    {
        let mut keys = engine.keys.lock().unwrap();
        keys.lease = None;
        keys.fence -= 1;
    }
    let second = store.lock(&target()).unwrap();
    assert_eq!(first.fence(), second.fence(), "the number was issued twice");
    let state = RecordedState::new(target());
    assert!(matches!(
        store.save(&first, &state),
        Err(StateError::Fenced { .. })
    ));
    store.save(&second, &state).unwrap();
}

#[test]
fn no_state_in_a_shared_store_is_missing_until_it_is_set_up() {
    let store = store(Memory::default());
    let missing = store.load_for(&target()).unwrap_err();
    assert!(
        matches!(&missing, StateError::Missing { store, .. } if store == "memory://test"),
        "{missing:?}"
    );
    assert!(missing.to_string().contains("lost its data"), "{missing}");
    let lock = store.lock(&target()).unwrap();
    let made = store.init(&lock).unwrap();
    assert_eq!(made.serial, 1);
    assert!(!made.lineage.is_empty());
    assert_eq!(store.load_for(&target()).unwrap(), made);
    let again = store.init(&lock).unwrap_err().to_string();
    assert!(
        again.contains("holds a state of this service already") && again.contains(&made.lineage),
        "{again}"
    );
    let mut state = made.clone();
    state.save_to(&store, &lock).unwrap();
    assert_eq!(
        (state.serial, &state.lineage),
        (2, &made.lineage),
        "a write counts itself and keeps the lineage"
    );
}

#[test]
fn a_lease_whose_renewals_fail_is_lost_by_the_holders_own_clock() {
    let engine = Arc::new(Memory::default());
    let store = SharedStateStore::with_engine(engine.clone(), "memory://test".into(), &target())
        .lease_ttl(Duration::from_secs(1));
    let lock = store.lock(&target()).unwrap();
    lock.check_lease().unwrap();
    let left = lock.lease_valid_for().unwrap();
    assert!(
        left <= Duration::from_millis(900) && !left.is_zero(),
        "a tenth of the TTL is not counted on: {left:?}"
    );
    // Renewals (every third of the TTL) keep it valid past its first TTL. Waited for, not slept
    // for: on a loaded machine the renewing thread can be held back past the margin (once seen in
    // CI: no renewal ran in the first 1.2 s), the lease then lapses by the holder's clock as it
    // must, and the next renewal makes it valid again. Without renewals it never is.
    let taken = Instant::now();
    while taken.elapsed() <= Duration::from_millis(1100) || lock.check_lease().is_err() {
        assert!(
            taken.elapsed() < Duration::from_secs(60),
            "not valid past its first TTL in a minute: {:?}",
            lock.check_lease()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    engine
        .failing_renewals
        .store(true, std::sync::atomic::Ordering::SeqCst);
    // The renewing thread is one: once an attempt that found the store cut has begun, the last one
    // that could succeed has ended, and nothing moves the lease's validity on any more.
    let attempts = engine.renewals.load(std::sync::atomic::Ordering::SeqCst);
    while engine.renewals.load(std::sync::atomic::Ordering::SeqCst) == attempts {
        assert!(
            taken.elapsed() < Duration::from_secs(120),
            "no renewal attempted after the cut within two minutes of the lock"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let left = lock.lease_valid_for().unwrap();
    assert!(
        left <= Duration::from_millis(900),
        "no renewal after the cut, so the lease ends within its TTL less the margin: {left:?}"
    );
    std::thread::sleep(left + Duration::from_millis(20));
    assert_eq!(
        lock.lease_valid_for(),
        Some(Duration::ZERO),
        "not extended since"
    );
    let lost = lock.check_lease().unwrap_err();
    assert!(matches!(lost, StateError::LeaseLost { .. }), "{lost:?}");
    assert!(lost.to_string().contains("no create, delete"), "{lost}");
}

#[test]
fn a_store_back_after_an_outage_gives_the_lease_back_within_a_sixth_of_its_ttl() {
    let engine = Arc::new(Memory::default());
    let ttl = Duration::from_millis(1200);
    let store = SharedStateStore::with_engine(engine.clone(), "memory://test".into(), &target())
        .lease_ttl(ttl);
    let lock = store.lock(&target()).unwrap();
    engine
        .failing_renewals
        .store(true, std::sync::atomic::Ordering::SeqCst);
    // Out for twice the TTL: the lease lapses by the holder's clock, and the failed renewals go on,
    // from 50 ms apart, doubling, at most a sixth of the TTL (200 ms): about a dozen, never a
    // tight loop against a store that is down.
    std::thread::sleep(ttl * 2);
    assert!(
        lock.check_lease().is_err(),
        "lapsed while the store was out"
    );
    let tried = engine.renewals.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        (1..=20).contains(&tried),
        "{tried} renewals in {:?} while the store was out",
        ttl * 2
    );
    engine
        .failing_renewals
        .store(false, std::sync::atomic::Ordering::SeqCst);
    std::thread::sleep(ttl / 6 + Duration::from_millis(50));
    lock.check_lease()
        .expect("renewed (the lapsed lease, untaken, taken again) within a sixth of the TTL");
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
    assert_eq!(
        api_core::redact::url_password("redis://u:ab/cd@h"),
        Some("ab/cd")
    );
    assert_eq!(api_core::redact::url_password("redis://u@h"), None);
    assert_eq!(api_core::redact::url_password("redis://h"), None);
}

#[test]
fn a_query_parameter_is_taken_out_and_the_rest_kept() {
    assert_eq!(
        take_query_parameter(
            "postgres://u@h/db?sslmode=verify-full&application_name=x",
            "sslmode"
        ),
        (
            "postgres://u@h/db?application_name=x".to_string(),
            Some("verify-full".into())
        )
    );
    assert_eq!(
        take_query_parameter(
            "postgres://u@h/db?sslrootcert=%2Fetc%2Fca.pem",
            "sslrootcert"
        ),
        ("postgres://u@h/db".to_string(), Some("/etc/ca.pem".into()))
    );
    assert_eq!(
        take_query_parameter("redis://h:6379/0", "plaintext"),
        ("redis://h:6379/0".to_string(), None)
    );
    for host in [
        "localhost",
        "127.0.0.1",
        "127.8.9.1",
        "::1",
        "[::1]",
        "LOCALHOST",
    ] {
        assert!(is_loopback(host), "{host}");
    }
    for host in ["db.internal", "10.0.0.5", "localhost.example.com", "::2"] {
        assert!(!is_loopback(host), "{host}");
    }
}

#[cfg(feature = "state-redis")]
#[test]
fn a_plain_redis_url_to_another_machine_is_refused_before_any_connection() {
    let refused = SharedStateStore::open("redis://:hunter2-pw@db.internal:6379/0", &target())
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("plain redis:// connection to db.internal")
            && refused.contains("rediss://"),
        "{refused}"
    );
    assert!(!refused.contains("hunter2"), "{refused}");
}

#[cfg(feature = "state-postgres")]
#[test]
fn postgres_tls_is_verified_unless_the_url_says_otherwise_and_local_servers_may_prefer() {
    use super::postgres::{TlsMode, tls_policy};
    for (url, mode) in [
        ("postgres://u:p@db.internal:5432/ops", TlsMode::VerifyFull),
        ("postgres://u:p@127.0.0.1:5432/ops", TlsMode::Prefer),
        ("postgres://u:p@localhost/ops", TlsMode::Prefer),
        (
            "postgres://u:p@db.internal/ops?sslmode=disable",
            TlsMode::Disable,
        ),
        (
            "postgres://u:p@db.internal/ops?sslmode=prefer",
            TlsMode::Prefer,
        ),
        (
            "postgres://u:p@db.internal/ops?sslmode=require",
            TlsMode::Require,
        ),
        (
            "postgres://u:p@db.internal/ops?sslmode=verify-ca",
            TlsMode::VerifyCa,
        ),
        (
            "postgres://u:p@127.0.0.1/ops?sslmode=verify-full",
            TlsMode::VerifyFull,
        ),
        // A name of this machine that connects elsewhere is not local.
        (
            "postgres://u:p@localhost/ops?hostaddr=10.0.0.5",
            TlsMode::VerifyFull,
        ),
    ] {
        assert_eq!(tls_policy(url).unwrap().1, mode, "{url}");
    }
    let (rest, _, root) = tls_policy(
        "postgres://u:p@db.internal/ops?sslmode=verify-ca&sslrootcert=%2Fetc%2Fca.pem&connect_timeout=3",
    )
    .unwrap();
    assert_eq!(rest, "postgres://u:p@db.internal/ops?connect_timeout=3");
    assert_eq!(root.as_deref(), Some(std::path::Path::new("/etc/ca.pem")));
    let (_, _, system) = tls_policy("postgres://u:p@h/ops?sslrootcert=system").unwrap();
    assert_eq!(system, None, "the platform's roots");
    let refused = tls_policy("postgres://u:p@h/ops?sslmode=sometimes").unwrap_err();
    assert!(
        refused.contains("sslmode=sometimes is none of"),
        "{refused}"
    );
}
