//! `x-data-impact`: what deleting a pipe, or replacing it with a new one, does to the data, as the
//! spec says per source kind and member ([`Shape::data_impacts`](super::Shape::data_impacts)).

use serde_json::Value;

/// One entry of a schema's `x-data-impact`: on which actions, under which condition, the class of
/// the effect and the effect in words.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataImpact<'a> {
    /// The actions it is about: `delete`, `replace`, `recreate`.
    pub on: &'a [Value],
    /// The condition on a member, when there is one.
    pub condition: Option<Condition<'a>>,
    /// A short name of the effect (`rows-read-again`); one that ends in `-unknown` says the effect
    /// is not documented.
    pub class: &'a str,
    /// The effect, in words.
    pub says: &'a str,
}

/// When an entry of `x-data-impact` holds.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Condition<'a> {
    /// The member at this path (dotted, from the schema the entry is on) is set, or not.
    Set {
        /// The member's path.
        member: &'a str,
        /// Whether it must be set.
        set: bool,
    },
    /// The value the entry is on equals this one.
    Equals(&'a Value),
}

impl<'a> DataImpact<'a> {
    /// Whether the entry is about `action` (`delete`, `replace`, `recreate`).
    pub fn is_on(&self, action: &str) -> bool {
        self.on.iter().any(|on| on == action)
    }

    /// Whether the entry holds for `value`, the value of the schema it is on (`None`: absent).
    pub fn holds_for(&self, value: Option<&Value>) -> bool {
        match self.condition {
            None => true,
            Some(Condition::Equals(expected)) => value == Some(expected),
            Some(Condition::Set { member, set }) => {
                let found = value
                    .and_then(|v| member.split('.').try_fold(v, |at, key| at.get(key)))
                    .is_some_and(|v| !v.is_null());
                found == set
            }
        }
    }
}

/// The entries of an `x-data-impact` value; an error that says what is wrong for any other form.
pub(super) fn entries_of(value: &Value) -> Result<Vec<DataImpact<'_>>, String> {
    let list = value
        .as_array()
        .ok_or("x-data-impact is a list of {on, if, class, says}")?;
    list.iter()
        .enumerate()
        .map(|(i, entry)| entry_of(entry).map_err(|why| format!("x-data-impact[{i}]: {why}")))
        .collect()
}

fn entry_of(entry: &Value) -> Result<DataImpact<'_>, String> {
    let map = entry.as_object().ok_or("an entry is an object")?;
    if let Some(key) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "on" | "if" | "class" | "says"))
    {
        return Err(format!("unknown key {key:?}; expected on, if, class, says"));
    }
    let on = map
        .get("on")
        .and_then(Value::as_array)
        .filter(|on| !on.is_empty())
        .ok_or("`on` lists the actions")?;
    if let Some(other) = on
        .iter()
        .find(|a| !matches!(a.as_str(), Some("delete" | "replace" | "recreate")))
    {
        return Err(format!(
            "`on` takes delete, replace and recreate, not {other}"
        ));
    }
    let text = |key: &str| {
        map.get(key)
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| format!("`{key}` is a non-empty string"))
    };
    let condition = match map.get("if") {
        None => None,
        Some(Value::Object(cond)) => {
            match (cond.get("member"), cond.get("set"), cond.get("equals")) {
                (Some(Value::String(member)), Some(Value::Bool(set)), None) if cond.len() == 2 => {
                    Some(Condition::Set { member, set: *set })
                }
                (None, None, Some(expected)) if cond.len() == 1 => {
                    Some(Condition::Equals(expected))
                }
                _ => return Err("`if` is {member: PATH, set: BOOL} or {equals: VALUE}".into()),
            }
        }
        Some(_) => return Err("`if` is {member: PATH, set: BOOL} or {equals: VALUE}".into()),
    };
    Ok(DataImpact {
        on,
        condition,
        class: text("class")?,
        says: text("says")?,
    })
}
