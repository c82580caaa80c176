//! JSON as the production service (a JavaScript server) writes it: a whole number is `3`, never `3.0`;
//! fractions stay fractions. Every API answer of the emulator goes through [`json`].

use api_raw::support::whole_number;
use serde::Serialize;
use serde_json::Value;

/// `value` as JSON, with every whole-valued float written as an integer (the SDK's one rule,
/// [`api_raw::support::whole_number`]).
pub fn json(value: impl Serialize) -> Value {
    // The emulator's own types always serialise; should one not, the answer says so plainly.
    serde_json::to_value(value)
        .map_or_else(|e| Value::String(format!("unserialisable: {e}")), whole)
}

fn whole(value: Value) -> Value {
    match value {
        Value::Number(n) => match n.as_f64().filter(|_| n.is_f64()).and_then(whole_number) {
            Some(whole) => Value::from(whole),
            None => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(whole).collect()),
        Value::Object(members) => {
            Value::Object(members.into_iter().map(|(k, v)| (k, whole(v))).collect())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_floats_become_integers_and_fractions_stay() {
        let value = json(serde_json::json!({
            "numReplicas": 3.0, "memory": [24.0, 0.5, -2.0], "big": 1e300, "n": 7, "s": "3.0"
        }));
        assert_eq!(
            value.to_string(),
            r#"{"big":1e+300,"memory":[24,0.5,-2],"n":7,"numReplicas":3,"s":"3.0"}"#
        );
    }
}
