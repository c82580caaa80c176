//! JSON as the production service (a JavaScript server) writes it: a whole number is `3`, never `3.0`;
//! fractions stay fractions. Every API answer of the emulator goes through [`json`].

use serde::Serialize;
use serde_json::Value;

/// The largest whole number a JavaScript number holds exactly (2^53); beyond it, keep the float.
const MAX_SAFE: f64 = 9_007_199_254_740_992.0;

/// `value` as JSON, with every whole-valued float written as an integer.
pub fn json(value: impl Serialize) -> Value {
    // The emulator's own types always serialise; should one not, the answer says so plainly.
    serde_json::to_value(value)
        .map_or_else(|e| Value::String(format!("unserialisable: {e}")), whole)
}

fn whole(value: Value) -> Value {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() <= MAX_SAFE => {
                Value::from(f as i64)
            }
            _ => Value::Number(n),
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
