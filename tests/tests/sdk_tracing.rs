//! Tracing output names each call but never a secret. In a test binary of its own: `tracing` caches
//! per-callsite interest process-wide, so a test without a subscriber running beside this one could
//! hide the span from the thread-local subscriber installed here.

mod support;

use api_test_support::captured_log::CapturedLog;
use support::secrets::{assert_clean, pipes_with_every_secret};
use support::{PIPE, Reply, ScriptServer, service};

#[tokio::test(flavor = "current_thread")]
async fn tracing_output_has_the_call_but_no_secret() {
    let captured = CapturedLog::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let server = ScriptServer::start(vec![
        Reply::text(503, "text/plain", "busy"),
        Reply::fixture("create_pipe_kafka").header("x-request-id", "trace-req-1"),
        Reply::fixture("get_alert"),
    ])
    .await;
    let svc = service(&server.mgmt());
    svc.pipe(PIPE.parse().unwrap()).get().await.unwrap();
    server
        .obs()
        .alert("66a1f0c2d4e5f60718293a4b".parse().unwrap())
        .get()
        .await
        .unwrap();
    for pipe in pipes_with_every_secret() {
        let _ = svc.pipes().create(&pipe).await;
    }

    let text = captured.text();
    assert!(text.contains("api.call"), "{text}");
    assert!(
        text.contains("cloud_api.operation=\"getPipe\"")
            || text.contains("cloud_api.operation=getPipe"),
        "{text}"
    );
    assert!(
        text.contains("retrying"),
        "the retry after 503 is traced: {text}"
    );
    assert!(
        text.contains("cloud_api.request_id=\"trace-req-1\""),
        "the request id is recorded: {text}"
    );
    assert!(
        text.contains("api.attempt") && text.contains("http.request.resend_count=1"),
        "the retry is an attempt span of its own: {text}"
    );
    assert!(
        text.contains("time.busy="),
        "the span's time is shown at close: {text}"
    );
    assert_clean("tracing output", &text);
    assert!(!text.to_lowercase().contains("authorization"), "{text}");
}
