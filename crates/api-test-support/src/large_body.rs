//! A large create request: the emulator's log budget tests send it, in process
//! (`e2e_emulator_bounds`) and to the binary (`api-emulator`'s `memory_budget`).

/// A valid create body of about `size` bytes, nearly all of it in `destination.roles`: request-only,
/// so the stored pipe stays small, and not secret, so nothing but the log's own rule shortens it.
pub fn large_create_body(name: &str, size: usize) -> String {
    let role = "r".repeat(4096);
    let roles: Vec<&str> = std::iter::repeat_n(role.as_str(), size.div_ceil(role.len())).collect();
    serde_json::json!({
        "name": name,
        "source": {"kafka": {"brokers": "b:9092", "topics": "t", "format": "JSONEachRow",
                             "authentication": "PLAIN", "credentials": {"username": "u", "password": "p"}}},
        "destination": {"database": "default", "table": "t", "managedTable": true,
                        "columns": [{"name": "id", "type": "UInt64"}], "roles": roles},
        "fieldMappings": [{"sourceField": "id", "destinationField": "id"}],
    })
    .to_string()
}
