//! Retries, rate limits, timeouts and error decoding over real HTTP against a scripted server.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use api_mgmt::{
    Error, NewPipe,
    client::RetryPolicy,
    error::TransportKind,
    pipes::{Destination, KafkaSource},
    rate_limit::RateLimit,
};
use support::{KEY_ID, KEY_SECRET, PIPE, Reply, ScriptServer, Transport, fast_retries, service};

fn new_pipe() -> NewPipe {
    NewPipe::builder("p")
        .source(KafkaSource::new("b:9092", "t"))
        .destination(
            Destination::new("d")
                .table("t")
                .managed_table(true)
                .column("c", "String"),
        )
        .field_mapping("c", "c")
        .build()
        .unwrap()
}

async fn a_429_with_reset_is_retried_after_the_server_wait(transport: Transport) {
    let server = ScriptServer::start(vec![
        Reply::mgmt_error(429, "TOO_MANY_REQUESTS", "slow down").header("x-ratelimit-reset", "1"),
        Reply::fixture("get_pipe_kinesis"),
    ])
    .await;
    let started = Instant::now();
    let pipe = service(&server.mgmt_via(transport))
        .pipe(PIPE.parse().unwrap())
        .get()
        .await
        .unwrap();
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(950),
        "honours X-RateLimit-Reset: waited {waited:?}"
    );
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    assert_eq!(pipe.meta().attempts, 2);
    assert_eq!(server.requests().len(), 2);
}

async fn a_get_is_retried_through_two_503s(transport: Transport) {
    let server = ScriptServer::start(vec![
        Reply::text(
            503,
            "text/html",
            "<html><title>503 Service Unavailable</title></html>",
        ),
        Reply::text(
            503,
            "text/html",
            "<html><title>503 Service Unavailable</title></html>",
        ),
        Reply::fixture("get_pipe_settings"),
    ])
    .await;
    let settings = service(&server.mgmt_via(transport))
        .pipe(PIPE.parse().unwrap())
        .settings()
        .await
        .unwrap();
    assert_eq!(settings.meta().attempts, 3);
    assert_eq!(server.requests().len(), 3);
}

async fn a_create_is_not_retried_after_a_500_or_503(transport: Transport) {
    for (status, body) in [
        (
            500,
            r#"{"status":500,"error":"INTERNAL_ERROR: boom","requestId":"r"}"#,
        ),
        (503, "<html>down</html>"),
    ] {
        let server = ScriptServer::start(vec![
            Reply::json(status, body),
            Reply::fixture("create_pipe_kafka"),
        ])
        .await;
        let err = service(&server.mgmt_via(transport))
            .pipes()
            .create(&new_pipe())
            .await
            .unwrap_err();
        assert_eq!(err.status(), Some(status));
        assert_eq!(
            server.requests().len(),
            1,
            "exactly one create reached the server after {status}"
        );
    }
}

async fn a_create_is_retried_after_a_429(transport: Transport) {
    let server = ScriptServer::start(vec![
        Reply::mgmt_error(429, "TOO_MANY_REQUESTS", "slow down").header("x-ratelimit-reset", "0"),
        Reply::fixture("create_pipe_kafka"),
    ])
    .await;
    let pipe = service(&server.mgmt_via(transport))
        .pipes()
        .create(&new_pipe())
        .await
        .unwrap();
    assert_eq!(pipe.meta().attempts, 2);
}

async fn a_refused_connection_is_retried_even_for_a_create(transport: Transport) {
    // Nothing listens there, and no other test's listener is given the port meanwhile.
    let port = api_test_support::ports::free_port();
    let client = transport
        .mgmt_builder(&format!("http://127.0.0.1:{port}"))
        .retry(fast_retries().max_attempts(3))
        .build()
        .unwrap();
    let err = service(&client)
        .pipes()
        .create(&new_pipe())
        .await
        .unwrap_err();
    match &err {
        Error::Transport(t) => {
            assert_eq!(t.kind, TransportKind::Connect);
            assert_eq!(t.attempt, 3, "all attempts were used: {err}");
        }
        other => panic!("expected a transport error, got {other}"),
    }
}

async fn retries_can_be_disabled_per_client_clone(transport: Transport) {
    let server = ScriptServer::start(vec![
        Reply::text(503, "text/plain", "busy"),
        Reply::fixture("get_pipe_kinesis"),
    ])
    .await;
    let client = server
        .mgmt_via(transport)
        .with_retry(RetryPolicy::disabled());
    let err = service(&client)
        .pipe(PIPE.parse().unwrap())
        .get()
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(503));
    assert_eq!(server.requests().len(), 1);
}

async fn error_classes_carry_status_code_message_request_id_and_raw_body(transport: Transport) {
    let page = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>";
    let server = ScriptServer::start(vec![
        Reply::mgmt_error(424, "FAILED_DEPENDENCY", "service a1b2 is stopped"),
        Reply::text(502, "text/html", page),
        Reply::mgmt_error(403, "FORBIDDEN", "read-only key"),
        Reply::mgmt_error(409, "CONFLICT", "already registered"),
    ])
    .await;
    let client = server
        .mgmt_via(transport)
        .with_retry(RetryPolicy::disabled());
    let svc = service(&client);

    let not_running = svc.pipes().create(&new_pipe()).await.unwrap_err();
    assert!(not_running.is_service_not_running());
    let api = not_running.as_api().unwrap();
    assert_eq!(api.code.as_str(), "FAILED_DEPENDENCY");
    assert_eq!(api.message, "service a1b2 is stopped");
    assert_eq!(
        not_running.request_id(),
        Some("91021324-3546-4f70-8182-930415263748")
    );

    let gateway = svc.pipe(PIPE.parse().unwrap()).get().await.unwrap_err();
    let api = gateway.as_api().unwrap();
    assert_eq!((api.status, api.body.as_str()), (502, page));
    assert_eq!(
        api.message,
        "502 Bad Gateway (an HTML page, not an API answer)"
    );

    assert!(svc.stop().await.unwrap_err().is_forbidden());
    assert!(
        svc.create_private_endpoint("vpce-1", "x")
            .await
            .unwrap_err()
            .is_conflict()
    );
}

async fn a_bad_success_body_names_the_operation_and_json_path(transport: Transport) {
    let bad = r#"{"status": 200, "requestId": "7b1e9c2d-3a4f-4e5d-8c6b-9a0f1e2d3c4b",
        "result": {"name": "p", "scaling": {"replicas": 1, "replicaCpuMillicores": "lots"}}}"#;
    let server = ScriptServer::start(vec![
        Reply::json(200, bad),
        Reply::json(200, r#"{"status": 200}"#),
    ])
    .await;
    let pipe = service(&server.mgmt_via(transport)).pipe(PIPE.parse().unwrap());
    match pipe.get().await.unwrap_err() {
        Error::Decode(e) => {
            assert_eq!(e.operation, "getPipe");
            assert_eq!(e.path, "result.scaling.replicaCpuMillicores");
            assert!(
                e.message.contains("invalid quantity \"lots\""),
                "{}",
                e.message
            );
        }
        other => panic!("expected a decode error, got {other}"),
    }
    match pipe.get().await.unwrap_err() {
        Error::Decode(e) => assert_eq!(
            (e.path.as_str(), e.message.as_str()),
            ("result", "the envelope has no `result`")
        ),
        other => panic!("expected a decode error, got {other}"),
    }
    assert_eq!(server.requests().len(), 2, "decode errors are not retried");
}

async fn a_slow_attempt_times_out_and_the_operation_deadline_holds(transport: Transport) {
    let slow = || Reply::fixture("get_pipe_kinesis").delay(Duration::from_millis(400));
    let server = ScriptServer::start(vec![slow(), slow(), slow(), slow()]).await;
    let client = transport
        .mgmt_builder(&server.url)
        .attempt_timeout(Duration::from_millis(100))
        .retry(fast_retries().max_attempts(2))
        .build()
        .unwrap();
    let err = service(&client)
        .pipe(PIPE.parse().unwrap())
        .get()
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(
        matches!(&err, Error::Transport(t) if t.kind == TransportKind::Timeout && t.attempt == 2),
        "{err}"
    );

    let deadline = transport
        .mgmt_builder(&server.url)
        .operation_timeout(Duration::from_millis(150))
        .build()
        .unwrap();
    let err = service(&deadline)
        .pipe(PIPE.parse().unwrap())
        .get()
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Timeout {
                operation: "getPipe",
                ..
            }
        ),
        "{err}"
    );
}

/// A single slow attempt ends at the attempt timeout, as a timeout of that attempt, even with a longer
/// operation timeout (the HTTP client's per-attempt timeout bounds it; no timer of the runtime's runs).
async fn a_single_slow_attempt_ends_at_the_attempt_timeout(transport: Transport) {
    let server = ScriptServer::start(vec![
        Reply::fixture("create_pipe_kafka").delay(Duration::from_secs(2)),
    ])
    .await;
    let client = transport
        .mgmt_builder(&server.url)
        .attempt_timeout(Duration::from_millis(200))
        .operation_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let err = service(&client)
        .pipes()
        .create(&new_pipe())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Transport(t) if t.kind == TransportKind::Timeout && t.attempt == 1),
        "{err}"
    );
    assert!(err.is_timeout() && err.is_outcome_unknown(), "{err}");
}

async fn the_client_rate_limit_paces_requests_across_clones(transport: Transport) {
    let replies = (0..6).map(|_| Reply::fixture("get_pipe_kinesis")).collect();
    let server = ScriptServer::start(replies).await;
    let client = transport
        .mgmt_builder(&server.url)
        .rate_limit(RateLimit::new(5, Duration::from_millis(500)).unwrap())
        .build()
        .unwrap();
    let started = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..6 {
        let clone = client.clone();
        calls.spawn(async move {
            service(&clone)
                .pipe(PIPE.parse().unwrap())
                .get()
                .await
                .map(|_| ())
        });
    }
    while let Some(result) = calls.join_next().await {
        result.unwrap().unwrap();
    }
    assert!(
        started.elapsed() >= Duration::from_millis(450),
        "6 calls at 5 per 500 ms: {:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 6);
}

async fn a_send_check_is_asked_after_the_rate_limit_wait_and_a_refusal_sends_nothing(
    transport: Transport,
) {
    let server = ScriptServer::start(vec![
        Reply::fixture("get_pipe_kinesis"),
        Reply::fixture("create_pipe_kafka"),
    ])
    .await;
    let client = transport
        .mgmt_builder(&server.url)
        .retry(fast_retries())
        .rate_limit(RateLimit::new(1, Duration::from_secs(1)).unwrap())
        .build()
        .unwrap();
    // The window's one slot: the next call waits about a second for its turn.
    service(&client)
        .pipe(PIPE.parse().unwrap())
        .get()
        .await
        .unwrap();
    // The check refuses from 400 ms on: asked before the wait, it would have let the create go.
    let since = Instant::now();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let checked = client.with_send_check(move |op| {
        let now = since.elapsed();
        seen.lock().unwrap().push((op.id, now));
        if now >= Duration::from_millis(400) {
            Err("the lease lapsed".into())
        } else {
            Ok(())
        }
    });
    let err = service(&checked)
        .pipes()
        .create(&new_pipe())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Withheld { operation: "createPipe", reason } if reason == "the lease lapsed"),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "createPipe: not sent: the lease lapsed");
    assert!(!err.is_outcome_unknown() && !err.is_retryable() && err.status().is_none());
    assert_eq!(server.requests().len(), 1, "the create never left");
    let asked = asked.lock().unwrap().clone();
    assert!(
        matches!(asked[..], [("createPipe", at)] if at >= Duration::from_millis(900)),
        "asked once, when its turn came: {asked:?}"
    );
    // The client it was made from asks nothing.
    service(&client).pipes().create(&new_pipe()).await.unwrap();
    assert_eq!(server.requests().len(), 2);
}

async fn a_retry_its_send_check_refuses_ends_with_the_error_of_the_attempt_sent(
    transport: Transport,
) {
    let server = ScriptServer::start(vec![
        Reply::mgmt_error(429, "TOO_MANY_REQUESTS", "slow down").header("x-ratelimit-reset", "0"),
        Reply::fixture("create_pipe_kafka"),
    ])
    .await;
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    let checked = server.mgmt_via(transport).with_send_check(move |_| {
        match count.fetch_add(1, Ordering::SeqCst) {
            0 => Ok(()),
            _ => Err("asked to stop".into()),
        }
    });
    let err = service(&checked)
        .pipes()
        .create(&new_pipe())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(429), "the 429 the create got: {err}");
    assert!(!err.is_outcome_unknown(), "a 429 proves nothing was made");
    assert_eq!(server.requests().len(), 1, "the retry never left");
    assert_eq!(asked.load(Ordering::SeqCst), 2, "asked before each attempt");
}

async fn waiting_for_the_limiter_does_not_count_against_the_operation_timeout(
    transport: Transport,
) {
    let replies = (0..12)
        .map(|_| Reply::fixture("get_pipe_kinesis"))
        .collect();
    let server = ScriptServer::start(replies).await;
    let client = transport
        .mgmt_builder(&server.url)
        .rate_limit(RateLimit::new(20, Duration::from_secs(1)).unwrap())
        .operation_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..12 {
        let clone = client.clone();
        calls.spawn(async move {
            service(&clone)
                .pipe(PIPE.parse().unwrap())
                .get()
                .await
                .map(|_| ())
        });
    }
    while let Some(result) = calls.join_next().await {
        result.unwrap().expect(
            "queued behind the limiter for up to ~0.6 s, yet within a 300 ms operation timeout",
        );
    }
    assert_eq!(server.requests().len(), 12);
}

async fn an_operation_timeout_keeps_the_last_error_and_knows_what_was_in_flight(
    transport: Transport,
) {
    // A read: 503, then an answer too slow for the operation's deadline. With the default attempt
    // timeout (30 s) the whole call runs under the operation's timer; with an attempt timeout no longer
    // than the operation's, the first attempt runs under none and the retry under the deadline.
    for attempt_timeout in [None, Some(Duration::from_millis(300))] {
        let server = ScriptServer::start(vec![
            Reply::text(503, "text/plain", "busy"),
            Reply::fixture("get_pipe_kinesis").delay(Duration::from_secs(2)),
        ])
        .await;
        let mut builder = transport
            .mgmt_builder(&server.url)
            .retry(fast_retries())
            .operation_timeout(Duration::from_millis(300));
        if let Some(timeout) = attempt_timeout {
            builder = builder.attempt_timeout(timeout);
        }
        let client = builder.build().unwrap();
        let started = std::time::Instant::now();
        let err = service(&client)
            .pipe(PIPE.parse().unwrap())
            .get()
            .await
            .unwrap_err();
        match &err {
            Error::Timeout {
                last_error: Some(last),
                outcome_unknown: false,
                attempts: 2,
                ..
            } => assert_eq!(last.status(), Some(503), "{last}"),
            other => {
                panic!("{attempt_timeout:?}: expected a timeout with the 503 kept, got {other:?}")
            }
        }
        assert!(err.is_timeout() && err.is_retryable() && !err.is_outcome_unknown());
        assert!(
            started.elapsed() < Duration::from_millis(1500),
            "{attempt_timeout:?}: the deadline cut the slow retry: {:?}",
            started.elapsed()
        );
    }

    // A create still waiting for its answer when time runs out may have happened.
    let server = ScriptServer::start(vec![
        Reply::fixture("create_pipe_kafka").delay(Duration::from_secs(2)),
    ])
    .await;
    let client = transport
        .mgmt_builder(&server.url)
        .operation_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let pipe = NewPipe::builder("slow")
        .source(KafkaSource::new("b-1:9098", "orders"))
        .destination(Destination::new("default").table("t").managed_table(true))
        .mapped_column("id", "id", "UInt64")
        .build()
        .unwrap();
    let err = service(&client).pipes().create(&pipe).await.unwrap_err();
    assert!(
        err.is_timeout() && err.is_outcome_unknown() && !err.is_retryable(),
        "{err}"
    );
    assert!(err.to_string().contains("inspect the service"), "{err}");
    assert_eq!(server.requests().len(), 1);
}

/// A stalled first attempt ends at the SDK's attempt timeout (not the caller's own client timeout of
/// ten minutes) and is retried, within the operation timeout.
async fn a_stalled_attempt_is_cut_and_retried(transport: Transport) {
    let server = ScriptServer::start(vec![
        Reply::fixture("get_pipe_kinesis").delay(Duration::from_secs(30)),
        Reply::fixture("get_pipe_kinesis"),
    ])
    .await;
    let client = transport
        .mgmt_builder(&server.url)
        .attempt_timeout(Duration::from_millis(200))
        .operation_timeout(Duration::from_secs(10))
        .retry(fast_retries())
        .build()
        .unwrap();
    let started = Instant::now();
    let pipe = service(&client)
        .pipe(PIPE.parse().unwrap())
        .get()
        .await
        .unwrap();
    assert_eq!(pipe.meta().attempts, 2);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// `raw()` sends the credentials, the user agent and the attempt timeout too.
async fn the_generated_client_sends_credentials_and_keeps_the_attempt_timeout(
    transport: Transport,
) {
    let server = ScriptServer::start(vec![
        Reply::fixture("get_pipe_kinesis"),
        Reply::fixture("get_pipe_kinesis").delay(Duration::from_secs(30)),
    ])
    .await;
    let client = transport
        .mgmt_builder(&server.url)
        .attempt_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let (org, svc, pipe) = (
        support::ORG.parse().unwrap(),
        support::SERVICE.parse().unwrap(),
        PIPE.parse().unwrap(),
    );
    client.raw().get_pipe(&org, &svc, &pipe).await.unwrap();
    let sent = &server.requests()[0];
    let basic = base64_basic(KEY_ID, KEY_SECRET);
    assert_eq!(sent.headers.get("authorization"), Some(&basic));
    assert!(
        sent.headers
            .get("user-agent")
            .is_some_and(|ua| ua.starts_with("api-mgmt/"))
    );
    let started = Instant::now();
    let err = client.raw().get_pipe(&org, &svc, &pipe).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "{err}");
}

fn base64_basic(id: &str, secret: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
    )
}

/// `Duration::MAX` is "no limit" for every timeout: calls work and nothing panics.
async fn endless_timeouts_mean_no_limit(transport: Transport) {
    let server = ScriptServer::start(vec![Reply::fixture("get_pipe_kinesis"); 2]).await;
    for builder in [
        transport
            .mgmt_builder(&server.url)
            .operation_timeout(Duration::MAX),
        transport
            .mgmt_builder(&server.url)
            .attempt_timeout(Duration::MAX)
            .operation_timeout(Duration::MAX),
    ] {
        let client = builder.build().unwrap();
        let pipe = service(&client)
            .pipe(PIPE.parse().unwrap())
            .get()
            .await
            .unwrap();
        assert_eq!(pipe.meta().status, 200);
    }
    if transport == Transport::Built {
        let endless = transport
            .mgmt_builder(&server.url)
            .connect_timeout(Duration::MAX)
            .build();
        assert!(endless.is_ok());
    }
}

/// A `Retry-After` given as an HTTP-date is waited out (counted from the answer's `Date`).
async fn a_retry_after_date_is_waited_out(transport: Transport) {
    let now = std::time::SystemTime::now();
    let date = |at: std::time::SystemTime| httpdate::fmt_http_date(at);
    let server = ScriptServer::start(vec![
        Reply::mgmt_error(429, "TOO_MANY_REQUESTS", "slow down")
            .header("Date", &date(now))
            .header("Retry-After", &date(now + Duration::from_secs(1))),
        Reply::fixture("get_pipe_kinesis"),
    ])
    .await;
    let client = server.mgmt_via(transport);
    let started = Instant::now();
    let pipe = service(&client)
        .pipe(PIPE.parse().unwrap())
        .get()
        .await
        .unwrap();
    assert_eq!(pipe.meta().attempts, 2);
    // One second (HTTP-dates have whole seconds: 0 to 1 s of it may have passed already), plus
    // jitter of at most 100 ms.
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(300),
        "came back too soon: {waited:?}"
    );
    assert!(waited < Duration::from_secs(3), "{waited:?}");
}

/// Every ending of a call over real HTTP, for a create and for a read: how many requests were
/// sent, and the outcome flags, as the one table says.
async fn every_status_ending_follows_the_outcome_table(transport: Transport) {
    for status in [
        400u16, 401, 403, 404, 405, 409, 413, 422, 424, 429, 500, 501, 502, 503, 504, 418,
    ] {
        let known = matches!(
            status,
            400 | 401 | 403 | 404 | 405 | 409 | 413 | 422 | 424 | 429
        );
        let transient = matches!(status, 429 | 502..=504);
        let replies = vec![Reply::mgmt_error(status, "SOME_CODE", "no"); 2];
        // A create: retried only when nothing was applied and it may help.
        let server = ScriptServer::start(replies.clone()).await;
        let client = transport
            .mgmt_builder(&server.url)
            .retry(fast_retries().max_attempts(2))
            .build()
            .unwrap();
        let err = service(&client)
            .pipes()
            .create(&new_pipe())
            .await
            .unwrap_err();
        assert_eq!(err.is_outcome_unknown(), !known, "create {status}: {err}");
        assert_eq!(
            server.requests().len(),
            if known && transient { 2 } else { 1 },
            "create {status}"
        );
        // A read: never unknown, retried whenever it may help.
        let server = ScriptServer::start(replies).await;
        let client = transport
            .mgmt_builder(&server.url)
            .retry(fast_retries().max_attempts(2))
            .build()
            .unwrap();
        let err = service(&client)
            .pipe(PIPE.parse().unwrap())
            .get()
            .await
            .unwrap_err();
        assert!(!err.is_outcome_unknown(), "get {status}: {err}");
        assert_eq!(
            server.requests().len(),
            if transient { 2 } else { 1 },
            "get {status}"
        );
    }
}

/// A success whose body cannot be decoded: the create was accepted, its outcome is unknown and the
/// error says so.
async fn an_undecodable_create_answer_says_it_was_accepted(transport: Transport) {
    let server = ScriptServer::start(vec![Reply::json(
        200,
        r#"{"status":200,"result":{"name":"p"}}"#,
    )])
    .await;
    let err = service(&server.mgmt_via(transport))
        .pipes()
        .create(&new_pipe())
        .await
        .unwrap_err();
    assert!(err.is_outcome_unknown() && !err.is_retryable(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("the server accepted the request (HTTP 200)"),
        "{text}"
    );
    assert!(text.contains("inspect the service's pipes"), "{text}");
}

/// An error body that breaks off: the status already said how the call ended (a 404 proves the
/// create was not applied), so it is that API error, not a lost answer.
async fn an_error_body_that_breaks_off_is_classified_by_its_status(transport: Transport) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = [0u8; 8192];
            let _ = socket.read(&mut request).await;
            let head = "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 400\r\n\r\n";
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket
                .write_all(br#"{"status":404,"error":"NOT_FOUND: no such"#)
                .await;
            let _ = socket.shutdown().await;
        }
    });
    let client = transport.mgmt_builder(&url).build().unwrap();
    let err = service(&client)
        .pipes()
        .create(&new_pipe())
        .await
        .unwrap_err();
    assert!(err.is_not_found() && !err.is_outcome_unknown(), "{err}");
    let api = err.as_api().expect("an API error");
    assert!(api.body.starts_with(r#"{"status":404"#), "{}", api.body);
}

crate::for_both_transports!(
    a_429_with_reset_is_retried_after_the_server_wait,
    a_get_is_retried_through_two_503s,
    a_create_is_not_retried_after_a_500_or_503,
    a_create_is_retried_after_a_429,
    a_refused_connection_is_retried_even_for_a_create,
    retries_can_be_disabled_per_client_clone,
    error_classes_carry_status_code_message_request_id_and_raw_body,
    a_bad_success_body_names_the_operation_and_json_path,
    a_slow_attempt_times_out_and_the_operation_deadline_holds,
    a_single_slow_attempt_ends_at_the_attempt_timeout,
    the_client_rate_limit_paces_requests_across_clones,
    waiting_for_the_limiter_does_not_count_against_the_operation_timeout,
    a_send_check_is_asked_after_the_rate_limit_wait_and_a_refusal_sends_nothing,
    a_retry_its_send_check_refuses_ends_with_the_error_of_the_attempt_sent,
    an_operation_timeout_keeps_the_last_error_and_knows_what_was_in_flight,
    a_stalled_attempt_is_cut_and_retried,
    the_generated_client_sends_credentials_and_keeps_the_attempt_timeout,
    endless_timeouts_mean_no_limit,
    a_retry_after_date_is_waited_out,
    every_status_ending_follows_the_outcome_table,
    an_undecodable_create_answer_says_it_was_accepted,
    an_error_body_that_breaks_off_is_classified_by_its_status,
);
