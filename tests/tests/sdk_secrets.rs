//! No secret ever shows in `Debug` of clients, requests or errors, nor in tracing output.

mod support;

use support::secrets::{SECRETS, assert_clean, pipes_with_every_secret};
use support::{KEY_SECRET, PIPE, Reply, ScriptServer, TOKEN, service};

#[tokio::test]
async fn debug_of_clients_requests_and_errors_never_shows_a_secret() {
    let server = ScriptServer::start(vec![
        Reply::text(401, "text/plain", "Unauthorized"),
        Reply::mgmt_error(401, "UNAUTHORIZED", "bad key"),
    ])
    .await;
    let mgmt = server.mgmt();
    let obs = server.obs();
    assert_clean(
        "the management client",
        &format!("{mgmt:?} {:?}", service(&mgmt).pipe(PIPE.parse().unwrap())),
    );
    assert_clean(
        "the observability client",
        &format!("{obs:?} {:?}", obs.dashboards()),
    );
    for pipe in pipes_with_every_secret() {
        assert_clean("a pipe request", &format!("{pipe:?} {pipe:#?}"));
    }
    let obs_error = obs.dashboards().list().await.unwrap_err();
    let mgmt_error = service(&mgmt).stop().await.unwrap_err();
    for error in [obs_error, mgmt_error] {
        assert_clean("an error", &format!("{error:?} {error}"));
    }
    let config_error = api_mgmt::Client::builder("http://api.example.com")
        .credentials(api_mgmt::Credentials::basic("id", KEY_SECRET))
        .build()
        .unwrap_err();
    assert_clean(
        "a configuration error",
        &format!("{config_error:?} {config_error}"),
    );
}

#[tokio::test]
async fn a_server_that_echoes_secrets_does_not_put_them_into_errors() {
    let echo_key = format!(
        r#"{{"status": 401, "error": "UNAUTHORIZED: key {KEY_SECRET} is wrong", "requestId": "r"}}"#
    );
    let echo_pipe = format!(
        r#"{{"status": 400, "error": "BAD_REQUEST: password {} rejected", "requestId": "r"}}"#,
        SECRETS[6]
    );
    let server = ScriptServer::start(vec![
        Reply::json(401, echo_key),
        Reply::json(400, echo_pipe),
        Reply::text(401, "text/plain", format!("Unauthorized token {TOKEN}")),
    ])
    .await;
    let mgmt = server.mgmt();
    let key_error = service(&mgmt).stop().await.unwrap_err();
    assert!(
        key_error.as_api().unwrap().body.contains("[REDACTED]"),
        "{key_error}"
    );
    let pipes = pipes_with_every_secret();
    let pipe_error = service(&mgmt).pipes().create(&pipes[4]).await.unwrap_err();
    assert!(
        pipe_error
            .as_api()
            .unwrap()
            .message
            .contains("password [REDACTED] rejected"),
        "{pipe_error}"
    );
    let token_error = server.obs().dashboards().list().await.unwrap_err();
    for error in [key_error, pipe_error, token_error] {
        assert_clean("an echoed error", &format!("{error:?} {error}"));
    }
}
