//! Raw overlays, for tests of answers a client cannot decode: a JSON object merged into one pipe's
//! JSON in every `getPipe` answer (`PUT /_emulator/pipes/{id}/raw`, [`crate::Emulator::set_raw_overlay`]),
//! never into the stored pipe, whose types cannot hold `"three"` replicas. Overlays live in memory
//! only: a restart on the same data directory has none.

use serde_json::Value;
use uuid::Uuid;

use crate::app::Shared;

/// Sets the overlay of pipe `id` (replacing one set before); false when there is no such pipe (or
/// its deletion has finished), an error when `overlay` is not a JSON object.
pub fn set(app: &Shared, id: Uuid, overlay: Value) -> Result<bool, String> {
    if !overlay.is_object() {
        return Err(
            "a raw overlay is a JSON object of the members to merge into the answer".into(),
        );
    }
    let exists = {
        let now = app.clock.now();
        let world = app.world();
        world
            .pipe(&id)
            .is_some_and(|record| !record.is_gone(now, &app.seed.timing))
    };
    if exists {
        app.overlays().insert(id, overlay);
    }
    Ok(exists)
}

/// Removes the overlay of pipe `id`; false when it had none.
pub fn clear(app: &Shared, id: Uuid) -> bool {
    app.overlays().remove(&id).is_some()
}

/// The pipe's JSON as `getPipe` answers it: `pipe` with the overlay of `id`, if any, merged in.
pub fn answer(app: &Shared, id: Uuid, mut pipe: Value) -> Value {
    if let Some(overlay) = app.overlays().get(&id) {
        merge(&mut pipe, overlay);
    }
    pipe
}

/// Merges `overlay` into `target`: an object into an object member by member, any other value
/// (`null`, an array, a number written `3.0`) replacing what is there, as it is.
pub fn merge(target: &mut Value, overlay: &Value) {
    match (target, overlay) {
        (Value::Object(members), Value::Object(changes)) => {
            for (name, change) in changes {
                match members.get_mut(name) {
                    Some(member) => merge(member, change),
                    None => {
                        members.insert(name.clone(), change.clone());
                    }
                }
            }
        }
        (target, overlay) => *target = overlay.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::merge;

    #[test]
    fn objects_merge_and_everything_else_replaces() {
        let mut pipe = json!({"name": "p", "scaling": {"replicas": 3, "concurrency": 1},
                              "fieldMappings": [{"sourceField": "a"}]});
        merge(
            &mut pipe,
            &json!({"scaling": {"replicas": 3.0}, "fieldMappings": [], "state": null,
                    "extra": {"a": 1}}),
        );
        assert_eq!(
            pipe,
            json!({"extra": {"a": 1}, "fieldMappings": [], "name": "p",
                   "scaling": {"concurrency": 1, "replicas": 3.0}, "state": null})
        );
        assert_eq!(pipe["scaling"]["replicas"].to_string(), "3.0");
        merge(&mut pipe, &json!({"scaling": "three"}));
        assert_eq!(pipe["scaling"], "three");
        merge(&mut pipe, &json!({"scaling": {"replicas": "three"}}));
        assert_eq!(pipe["scaling"], json!({"replicas": "three"}));
    }
}
