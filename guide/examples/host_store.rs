use api_mgmt::{
    Client, Credentials,
    rate_limit::{RateLimit, RateLimitStore},
};

/// A client that shares the key's rate limit with every process of this user on this host.
pub fn shared_limit_client(
    api_url: &str,
    (key_id, key_secret): (&str, &str),
) -> Result<Client, api_mgmt::Error> {
    let shared = RateLimit::management().store(RateLimitStore::host());
    Client::builder(api_url) // or Client::builder_from_env()?
        .credentials(Credentials::basic(key_id, key_secret))
        .rate_limit(shared)
        .build()
}
