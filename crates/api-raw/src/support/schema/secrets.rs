//! The secrets of a value, by the spec's `Secret` type and the redaction rule's names.

use serde_json::Value;

use super::Shape;

/// Whether the member `name`, of schema `shape` where the spec has one, holds a secret: the spec
/// types it as `Secret`, or the redaction rule calls it secret by its name (a setting the spec does
/// not list, such as `kafka_sasl_password`). The one answer for the SDK's redaction of requests, its
/// fingerprints, its plans and its exports.
pub fn is_secret(name: &str, shape: Option<&Shape<'_>>) -> bool {
    shape.is_some_and(Shape::is_secret) || crate::support::redact::is_secret_member(name)
}

/// Calls `visit` with the path and the value of every secret scalar of `value` (a value of the
/// schema `shape`): each scalar under a member [`is_secret`] says is one, at any depth below it (a
/// number or a boolean written where a password goes is a secret too, and so is every scalar of an
/// array or object under a secret name; `null` is nothing).
pub fn for_each_secret(
    value: &mut Value,
    shape: Option<Shape<'_>>,
    visit: &mut dyn FnMut(&str, &mut Value),
) {
    for_each_secret_value(value, shape, &|_| false, &mut |path, secret| {
        each_scalar(secret, &mut path.to_string(), visit);
    });
}

/// Calls `visit` with the path and the whole value of every secret of `value` (a value of the
/// schema `shape`): each member [`is_secret`] names, whatever it holds (a scalar, or an array or an
/// object as a whole; `null` is nothing), and each other string for which `holds_secret` is true
/// (a recorded state asks the redaction rule, which finds a password in a URI's userinfo or a
/// signature in a query).
pub fn for_each_secret_value(
    value: &mut Value,
    shape: Option<Shape<'_>>,
    holds_secret: &dyn Fn(&str) -> bool,
    visit: &mut dyn FnMut(&str, &mut Value),
) {
    walk_secrets(value, shape, holds_secret, &mut String::new(), visit);
}

fn walk_secrets(
    value: &mut Value,
    shape: Option<Shape<'_>>,
    holds_secret: &dyn Fn(&str) -> bool,
    path: &mut String,
    visit: &mut dyn FnMut(&str, &mut Value),
) {
    match value {
        Value::Object(members) => {
            for (name, member) in members.iter_mut() {
                let inner = shape.and_then(|s| s.member(name));
                let length = enter_member(path, name);
                if !member.is_null() && is_secret(name, inner.as_ref()) {
                    visit(path, member);
                } else {
                    walk_secrets(member, inner, holds_secret, path, visit);
                }
                path.truncate(length);
            }
        }
        Value::Array(items) => {
            let inner = shape.and_then(|s| s.items());
            for (i, item) in items.iter_mut().enumerate() {
                let length = enter_item(path, i);
                walk_secrets(item, inner, holds_secret, path, visit);
                path.truncate(length);
            }
        }
        Value::String(text) if holds_secret(text) => visit(path, value),
        _ => {}
    }
}

/// Calls `visit` with the path and the value of every scalar of `value` (`null` is nothing).
fn each_scalar(value: &mut Value, path: &mut String, visit: &mut dyn FnMut(&str, &mut Value)) {
    match value {
        Value::Null => {}
        Value::Object(members) => {
            for (name, member) in members.iter_mut() {
                let length = enter_member(path, name);
                each_scalar(member, path, visit);
                path.truncate(length);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let length = enter_item(path, i);
                each_scalar(item, path, visit);
                path.truncate(length);
            }
        }
        scalar => visit(path, scalar),
    }
}

/// Appends `.name` (or `name` at the top) to `path`; answers the length to cut back to.
fn enter_member(path: &mut String, name: &str) -> usize {
    let length = path.len();
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(name);
    length
}

/// Appends `[i]` to `path`; answers the length to cut back to.
fn enter_item(path: &mut String, i: usize) -> usize {
    let length = path.len();
    path.push_str(&format!("[{i}]"));
    length
}

/// The text of a secret scalar: a string as it is, a number or a boolean as JSON writes it.
pub fn secret_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
