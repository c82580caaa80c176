//! `cloudctl config show`: each setting, its value (secrets redacted) and where it came from.

use serde_json::json;

use super::Session;
use crate::cli::ConfigCommand;
use crate::exit::Failure;
use crate::render;
use crate::settings::{Key, Origin, Settings};

/// Runs a config command.
pub(crate) fn run(command: ConfigCommand, session: &mut Session<'_>) -> Result<(), Failure> {
    match command {
        ConfigCommand::Show => {
            let settings = session.settings()?;
            session.out.show(&as_json(&settings), |_| human(&settings))
        }
    }
}

fn as_json(settings: &Settings) -> serde_json::Value {
    let values: serde_json::Map<String, serde_json::Value> = settings
        .values
        .iter()
        .map(|setting| {
            let (source, from) = match &setting.origin {
                Origin::Flag(flag) => ("flag", Some(flag.to_string())),
                Origin::Env(name) => ("env", Some(name.to_string())),
                Origin::Profile => ("profile", Some(settings.profile.clone())),
                Origin::Unset => ("unset", None),
            };
            let entry = json!({
                "value": setting.shown(),
                "source": source,
                "from": from,
                "secret": setting.key.is_secret(),
            });
            (setting.key.file_name().to_string(), entry)
        })
        .collect();
    json!({
        "profile": settings.profile,
        "configFile": {
            "path": settings.file.path.as_ref().map(|p| p.display().to_string()),
            "found": settings.file.found,
        },
        "paced": settings.paced,
        "pacing": settings.pacing(),
        "settings": values,
    })
}

fn human(settings: &Settings) -> String {
    let rows = Key::ALL
        .iter()
        .map(|&key| {
            let setting = settings.get(key);
            vec![
                key.file_name().to_string(),
                setting.shown().unwrap_or_else(|| match key {
                    Key::RateLimit => "- (the API's documented limit)".to_string(),
                    Key::RateLimitStore => "- (host)".to_string(),
                    _ => "-".to_string(),
                }),
                settings.origin_text(key),
            ]
        })
        .collect();
    let file = match &settings.file.path {
        Some(path) if settings.file.found => path.display().to_string(),
        Some(path) => format!("{} (not found)", path.display()),
        None => "none (no config directory on this platform)".to_string(),
    };
    let pacing = settings.pacing();
    format!(
        "{}\n\nProfile      {}\nConfig file  {file}\nRequests     {pacing}",
        render::table(&["SETTING", "VALUE", "SOURCE"], rows),
        settings.profile
    )
}
