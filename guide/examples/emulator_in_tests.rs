use api_emulator::{Emulator, EmulatorOptions};
use api_mgmt::{Client, Credentials};

/// An emulator for one test (instant transitions, no rate limits; stopped when dropped) and a
/// client of it.
pub async fn emulator_and_client() -> Result<(Emulator, Client), Box<dyn std::error::Error>> {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await?;
    let (key_id, key_secret) = emulator.admin_key();
    let client = Client::builder(emulator.base_url())
        .credentials(Credentials::basic(key_id, key_secret))
        .build()?;
    Ok((emulator, client))
}
