//! A 429 is shared through the SDK's own call path: two clients with rate limits of their own (as two
//! processes have) sharing one host store, against the emulator. The 429 that one client draws, with
//! its `Retry-After`, holds the other client's next request back; with the process store each
//! client keeps its own state and the other goes straight through.

use crate::support;

use std::path::Path;
use std::time::Duration;

use api_emulator::{Emulator, Fault, FaultRule, LogEntry, OperationId};
use api_mgmt::{
    Client, Credentials,
    rate_limit::{RateLimit, RateLimitStore},
};
use support::emulated::{running_service, start};

/// A client with a limiter of its own (nothing shared in memory) in `store`.
fn client(emulator: &Emulator, store: RateLimitStore) -> Client {
    let (id, secret) = emulator.admin_key();
    let limit = RateLimit::new(100, Duration::from_secs(1))
        .unwrap()
        .store(store);
    Client::builder(emulator.base_url())
        .credentials(Credentials::basic(id, secret))
        .retry(support::fast_retries())
        .rate_limit(limit)
        .build()
        .expect("client")
}

fn host_store(dir: &Path) -> RateLimitStore {
    RateLimitStore::Host {
        dir: Some(dir.to_path_buf()),
    }
}

/// The time from the 429 to the other client's request, when `first` draws a 429 with
/// `Retry-After: 1` and `second` calls right after it.
async fn hold_back(first: RateLimitStore, second: RateLimitStore) -> Duration {
    let emulator = start().await;
    emulator
        .inject(
            FaultRule::operation(OperationId::ListReversePrivateEndpoints)
                .then(Fault::status(429).header("Retry-After", "1").times(1)),
        )
        .unwrap();
    let (a, b) = (client(&emulator, first), client(&emulator, second));
    let throttled = tokio::spawn({
        let service = running_service(&emulator, &a);
        async move { service.reverse_private_endpoints().await }
    });
    let logged_429 = |log: &[LogEntry]| log.iter().find(|e| e.status == 429).map(|e| e.at);
    let at_429 = loop {
        if let Some(at) = logged_429(&emulator.requests()) {
            break at;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    // Time for the first client to write the 429 to its store.
    tokio::time::sleep(Duration::from_millis(100)).await;
    running_service(&emulator, &b)
        .reverse_private_endpoints()
        .await
        .expect("the second client's call");
    throttled
        .await
        .unwrap()
        .expect("the first client retries after the wait");
    let log = emulator.requests();
    let served: Vec<_> = log
        .iter()
        .filter(|e| e.status == 200 && e.at > at_429)
        .map(|e| e.at)
        .collect();
    assert_eq!(served.len(), 2, "both calls end served: {log:#?}");
    (served[0] - at_429).to_std().unwrap()
}

#[tokio::test]
async fn a_429_holds_back_every_client_sharing_the_host_store() {
    let dir = tempfile::tempdir().unwrap();
    let shared = hold_back(host_store(dir.path()), host_store(dir.path())).await;
    assert!(
        shared >= Duration::from_millis(900),
        "the second client waited out the first one's Retry-After: {shared:?}"
    );
}

#[tokio::test]
async fn with_the_process_store_another_limiter_does_not_see_the_429() {
    let alone = hold_back(RateLimitStore::Process, RateLimitStore::Process).await;
    assert!(
        alone < Duration::from_millis(600),
        "nothing shared: the second client went at once: {alone:?}"
    );
}

/// Work of one's own goes through the client's limiter (`client.rate_limiter()`): a 429 that work
/// drew, told to it, holds back the next call of another client sharing the host store; and the
/// client's own calls and that work take slots of one pace.
#[tokio::test]
async fn ones_own_work_paces_through_the_clients_shared_limit() {
    let dir = tempfile::tempdir().unwrap();
    let emulator = start().await;
    let (id, secret) = emulator.admin_key();
    let limited = |max: u32| {
        Client::builder(emulator.base_url())
            .credentials(Credentials::basic(id, secret))
            .retry(support::fast_retries())
            .rate_limit(
                RateLimit::new(max, Duration::from_secs(1))
                    .unwrap()
                    .store(host_store(dir.path())),
            )
            .build()
            .unwrap()
    };
    let (ours, theirs) = (limited(100), limited(100));
    let limiter = ours
        .rate_limiter()
        .expect("a client with a rate limit has its limiter");
    limiter.throttled(Some(Duration::from_millis(800))).await;
    let started = std::time::Instant::now();
    running_service(&emulator, &theirs)
        .reverse_private_endpoints()
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(700),
        "the other client waited out our 429: {:?}",
        started.elapsed()
    );
    // Own work and SDK calls share one pace: at 4 a second, three slots of own work then a call.
    let slow = limited(4);
    let own = slow.rate_limiter().unwrap();
    let started = std::time::Instant::now();
    for _ in 0..3 {
        own.acquire().await;
    }
    running_service(&emulator, &slow)
        .reverse_private_endpoints()
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(700),
        "four slots at 4 a second: {:?}",
        started.elapsed()
    );
    let unpaced = Client::builder(emulator.base_url())
        .credentials(Credentials::basic(id, secret))
        .rate_limit(None)
        .build()
        .unwrap();
    assert!(unpaced.rate_limiter().is_none());
}

/// A `10 per second` client and a `20 per 100 ms` one share a key through the host store: the
/// 2-second block the first wrote after a 429 (within its 4 windows, beyond the second's 400 ms)
/// holds the second back too; before, the second forgot the block as one it could not have built.
#[tokio::test]
async fn a_block_holds_for_every_configuration_sharing_the_key() {
    let emulator = start().await;
    let dir = tempfile::tempdir().unwrap();
    let (id, secret) = emulator.admin_key();
    let with_limit = |max: u32, window: Duration| {
        let limit = RateLimit::new(max, window)
            .unwrap()
            .store(host_store(dir.path()));
        Client::builder(emulator.base_url())
            .credentials(Credentials::basic(id, secret))
            .rate_limit(limit)
            .build()
            .expect("client")
    };
    let slow = with_limit(10, Duration::from_secs(1));
    let fast = with_limit(20, Duration::from_millis(100));
    slow.rate_limiter()
        .expect("a limiter")
        .throttled(Some(Duration::from_secs(2)))
        .await;
    let waited = fast.rate_limiter().expect("a limiter").acquire().await;
    assert!(
        waited >= Duration::from_millis(1_800),
        "the faster configuration waited out the slower one's block: {waited:?}"
    );
}

/// What the victim process of the kill test reads: the store to book in (`host:<dir>` or a Redis
/// URL). Set only in the process the test starts.
const VICTIM_STORE: &str = "API_TESTS_VICTIM_STORE";

/// The kill test's limit: one request every 51 ms.
const KILL_LIMIT: &str = "20/1s";

/// How many of the victim's callers go before it is killed.
const VICTIM_WENT: usize = 3;

/// Not a test of its own: the process the kill test starts (this binary run again with
/// [`VICTIM_STORE`] set). A thousand callers of one client's limiter, as a `buffer_unordered(1000)`
/// would make, each printing `went` when its slot comes; the [`VICTIM_WENT`]th sends the process
/// `SIGKILL` before any other caller runs (the runtime has one thread), its other callers waiting
/// on their bookings. Killed from outside instead, a process on a loaded machine sent as many calls
/// as the window holds before the kill landed, and the next waited out the window, rightly.
#[tokio::test]
#[ignore = "the kill test's victim, started by it"]
async fn victim_with_a_thousand_callers() {
    let Ok(store) = std::env::var(VICTIM_STORE) else {
        return;
    };
    let limit: RateLimit = KILL_LIMIT.parse().unwrap();
    let limiter = limit.store(parse_store(&store)).bind("http://kill", "key");
    let went = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let callers: Vec<_> = (0..1000)
        .map(|_| {
            let limiter = limiter.clone();
            let went = went.clone();
            tokio::spawn(async move {
                limiter.acquire().await;
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "went");
                let _ = out.flush();
                if went.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == VICTIM_WENT {
                    // Blocking, on the runtime's one thread: no other caller runs until it lands.
                    let _ = std::process::Command::new("kill")
                        .args(["-KILL", &std::process::id().to_string()])
                        .status();
                    std::thread::sleep(Duration::from_secs(60));
                }
            })
        })
        .collect();
    for caller in callers {
        let _ = caller.await;
    }
}

/// The victim's name as the test harness knows it: its module's path in the test binary, without
/// the binary's name.
fn victim_test() -> String {
    let module = module_path!()
        .split_once("::")
        .map_or("", |(_, module)| module);
    if module.is_empty() {
        "victim_with_a_thousand_callers".into()
    } else {
        format!("{module}::victim_with_a_thousand_callers")
    }
}

fn parse_store(text: &str) -> RateLimitStore {
    match text.strip_prefix("host:") {
        Some(dir) => host_store(Path::new(dir)),
        None => RateLimitStore::redis(text).unwrap(),
    }
}

/// A process with a thousand callers waiting on the shared limit is killed (SIGKILL) while its
/// callers go (it kills itself when its third has gone): another process of the key then waits for the slots the killed one held booked, at
/// most `MAX_BOOKED` (2) intervals plus its own, not for the thousand slots a process could book
/// before. In the host store and in Redis. The stall of each is printed.
#[test]
fn a_process_killed_with_a_thousand_callers_stalls_the_others_by_its_bookings_at_most() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let redis = api_test_support::redis_server::RedisServer::start(
        "a_process_killed_with_a_thousand_callers_stalls_the_others_by_its_bookings_at_most",
    );
    let mut stores = vec![format!("host:{}", dir.path().display())];
    stores.extend(redis.as_ref().map(|server| server.url.clone()));
    let interval = KILL_LIMIT.parse::<RateLimit>().unwrap().interval();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for store in stores {
        let mut victim = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &victim_test(), "--ignored"])
            .args(["--nocapture", "--test-threads=1"])
            .env(VICTIM_STORE, &store)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the victim starts");
        // Everything it printed until it was killed, its callers booking as they went.
        let went = BufReader::new(victim.stdout.take().unwrap())
            .lines()
            .map_while(Result::ok)
            // (the first one follows the harness's `test NAME ... `)
            .filter(|line| line.ends_with("went"))
            .count();
        let status = victim.wait().unwrap();
        {
            use std::os::unix::process::ExitStatusExt as _;
            assert_eq!(status.signal(), Some(9), "{store}: the victim was killed");
        }
        assert_eq!(went, VICTIM_WENT, "{store}: the victim's callers went");
        let limiter = KILL_LIMIT
            .parse::<RateLimit>()
            .unwrap()
            .store(parse_store(&store))
            .bind("http://kill", "key");
        let stall = runtime
            .block_on(async {
                tokio::time::timeout(Duration::from_secs(10), limiter.acquire()).await
            })
            .unwrap_or(Duration::from_secs(10));
        eprintln!(
            "{store}: after the kill, the next process waited {stall:?} ({interval:?} a slot)"
        );
        assert!(
            stall <= interval * 3 + Duration::from_millis(20),
            "{store}: the killed process's bookings stalled the next one {stall:?}"
        );
    }
}
