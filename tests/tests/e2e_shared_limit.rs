//! A 429 is shared through the SDK's own call path: two clients with rate limits of their own (as two
//! processes have) sharing one host store, against the emulator. The 429 that one client draws, with
//! its `Retry-After`, holds the other client's next request back; with the process store each
//! client keeps its own state and the other goes straight through.

mod support;

use std::path::Path;
use std::time::Duration;

use api_emulator::{Emulator, Fault, FaultRule, LogEntry, OperationId};
use api_mgmt::{Client, Credentials, RateLimit, RateLimitStore};
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
