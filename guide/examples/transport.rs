use api_mgmt::{Client, Credentials, rate_limit::RateLimit};

/// A client that trusts a private CA and goes through a proxy, and one on a `reqwest` client of
/// your own.
pub fn clients(
    api_url: &str,
    (key_id, key_secret): (&str, &str),
    ca_pem: Vec<u8>,
) -> Result<(Client, Client), api_mgmt::Error> {
    let behind_proxy = Client::builder(api_url) // or Client::builder_from_env()?
        .credentials(Credentials::basic(key_id, key_secret))
        .root_certificate_pem(ca_pem) // trusted besides the platform's roots
        .proxy("http://proxy.corp.example:3128") // a user:password in it stays secret
        .rate_limit(RateLimit::management())
        .build()?;

    // Your own reqwest client (middleware, DNS, pool settings): it behaves as the SDK's own, with
    // the credentials, user agent, attempt timeout, retries, rate limit and operation timeout.
    let own = api_mgmt::client::http_client_builder()
        .pool_max_idle_per_host(2)
        .build()
        .expect("a client");
    let on_own = Client::builder(api_url)
        .credentials(Credentials::basic(key_id, key_secret))
        .http_client(own)
        .build()?;
    Ok((behind_proxy, on_own))
}
