//! A schema's [`Shape`]: its members, which are secrets or request-only, the values the server fills
//! in, and how two answers' values compare.

use serde_json::{Map, Value};

use super::impact::{DataImpact, entries_of};
use super::{COMPARE, DATA_IMPACT, RAW_TYPE, SERVER_DEFAULT, SchemaSet};

/// A schema resolved through its `$ref`s, to walk a value's shape: its members (declared, or open
/// to any name), its items, whether it is a secret, the value the server fills in when a create
/// leaves it out.
///
/// ```
/// use api_raw::support::schema::SchemaSet;
///
/// let schemas = SchemaSet::management();
/// let request = schemas.schema("PipeCreateRequest").expect("in the spec");
/// let response = schemas.schema("Pipe").expect("in the spec");
/// let kafka = |shape: api_raw::support::schema::Shape<'static>| shape.member("source")?.member("kafka");
/// // `credentials` is request-only: the request declares it, the response does not.
/// assert!(kafka(request).unwrap().declares("credentials"));
/// assert!(!kafka(response).unwrap().declares("credentials"));
/// let password = kafka(request).unwrap().member("credentials").unwrap().member("password").unwrap();
/// assert!(password.is_secret());
/// let replicas = request.member("scaling").unwrap().member("replicas").unwrap();
/// assert_eq!(replicas.server_default(), Some(&serde_json::json!(1)));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    set: &'a SchemaSet,
    schema: &'a Map<String, Value>,
    secret: bool,
    default: Option<&'a Value>,
}

impl<'a> Shape<'a> {
    pub(super) fn of(set: &'a SchemaSet, schema: &'a Value) -> Option<Self> {
        let mut current = schema.as_object()?;
        let mut secret = false;
        let mut default = None;
        // A chain of references is short; the bound keeps a cycle from looping.
        for _ in 0..32 {
            secret |= current.get(RAW_TYPE).and_then(Value::as_str) == Some("Secret");
            default = default.or_else(|| current.get(SERVER_DEFAULT));
            match current.get("$ref").and_then(Value::as_str) {
                Some(target) => current = set.resolve(target)?.as_object()?,
                None => {
                    return Some(Self {
                        set,
                        schema: current,
                        secret,
                        default,
                    });
                }
            }
        }
        None
    }

    /// The schema of member `name`: a declared one, else the schema of any other member when the
    /// object is open (`additionalProperties`); `None` when the object has no such member.
    pub fn member(&self, name: &str) -> Option<Shape<'a>> {
        let declared = self
            .schema
            .get("properties")
            .and_then(Value::as_object)
            .and_then(|p| p.get(name));
        match (declared, self.schema.get("additionalProperties")) {
            (Some(declared), _) => Self::of(self.set, declared),
            (None, Some(Value::Bool(true))) => Some(Self::any(self.set)),
            (None, Some(extra @ Value::Object(_))) => Self::of(self.set, extra),
            _ => None,
        }
    }

    /// Whether the object declares member `name` in its `properties`.
    pub fn declares(&self, name: &str) -> bool {
        self.schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.contains_key(name))
    }

    /// Whether the object requires member `name`.
    pub fn requires(&self, name: &str) -> bool {
        self.schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|required| required.iter().any(|r| r == name))
    }

    /// The declared members, in name order.
    pub fn members(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|p| p.keys().map(String::as_str))
    }

    /// Whether the object takes members it does not declare (`additionalProperties`).
    pub fn is_open(&self) -> bool {
        self.schema
            .get("additionalProperties")
            .is_some_and(|extra| extra != &Value::Bool(false))
    }

    /// The schema of an array's items.
    pub fn items(&self) -> Option<Shape<'a>> {
        Self::of(self.set, self.schema.get("items")?)
    }

    /// Whether the value is a secret (its schema is the spec's `Secret`).
    pub fn is_secret(&self) -> bool {
        self.secret
    }

    /// How two answers' values of this schema compare, for a plan that tells a server's own
    /// rewriting from a change: `x-compare` where the spec says, else
    /// [`CaseInsensitive`](Comparison::CaseInsensitive) for a value of a set (`enum`,
    /// `x-extensible-enum`) or a UUID, else [`Exact`](Comparison::Exact).
    pub fn comparison(&self) -> Comparison<'a> {
        if let Some(said) = self.schema.get(COMPARE).and_then(comparison_of) {
            return said;
        }
        let of_a_set =
            self.schema.contains_key("enum") || self.schema.contains_key("x-extensible-enum");
        let uuid = self.schema.get("format").and_then(Value::as_str) == Some("uuid");
        if of_a_set || uuid {
            Comparison::CaseInsensitive
        } else {
            Comparison::Exact
        }
    }

    /// What deleting or replacing a pipe does to the data, as this schema's `x-data-impact` says
    /// (empty when it says nothing). Checked when the set was made.
    ///
    /// ```
    /// use api_raw::support::schema::SchemaSet;
    ///
    /// let request = SchemaSet::management().schema("PipeCreateRequest").expect("in the spec");
    /// let postgres = request.member("source").unwrap().member("postgres").unwrap();
    /// assert!(postgres.data_impacts().iter().any(|i| i.is_on("replace") && i.class == "snapshot-again"));
    /// ```
    pub fn data_impacts(&self) -> Vec<DataImpact<'a>> {
        self.schema
            .get(DATA_IMPACT)
            .and_then(|value| entries_of(value).ok())
            .unwrap_or_default()
    }

    /// The value the server fills in when a create leaves this member out (`x-server-default`).
    pub fn server_default(&self) -> Option<&'a Value> {
        self.default
    }

    /// Whether member `name` of this request schema is request-only: the request declares it and
    /// the `response` schema of the same object does not (whether or not the response takes
    /// members it does not declare).
    pub fn is_request_only(&self, name: &str, response: Option<&Shape<'_>>) -> bool {
        self.declares(name) && !response.is_some_and(|r| r.declares(name))
    }

    /// Turns `value`, a value of this request schema, into what the `response` schema holds of it,
    /// at any depth: request-only members go, and so does any member the response has no room for.
    pub fn drop_request_only(&self, response: &Shape<'_>, value: &mut Value) {
        match value {
            Value::Object(members) => members.retain(|name, member| {
                if self.is_request_only(name, Some(response)) {
                    return false;
                }
                match response.member(name) {
                    Some(answered) => {
                        let asked = self.member(name).unwrap_or_else(|| Self::any(self.set));
                        asked.drop_request_only(&answered, member);
                        true
                    }
                    None => false,
                }
            }),
            Value::Array(items) => {
                if let (Some(asked), Some(answered)) = (self.items(), response.items()) {
                    items
                        .iter_mut()
                        .for_each(|item| asked.drop_request_only(&answered, item));
                }
            }
            _ => {}
        }
    }

    /// Fills in every member of `value` that is absent and has an `x-server-default`, at any depth
    /// (an absent object whose members have defaults is created): what the server does to a create.
    pub fn fill_defaults(&self, value: &mut Value) {
        let Value::Object(members) = value else {
            return;
        };
        for name in self.members() {
            let Some(shape) = self.member(name) else {
                continue;
            };
            match (members.get_mut(name), shape.server_default()) {
                (None | Some(Value::Null), Some(default)) => {
                    members.insert(name.to_string(), default.clone());
                }
                (Some(member), _) => shape.fill_defaults(member),
                (None, None) if shape.has_defaults() => {
                    let mut created = Value::Object(Map::new());
                    shape.fill_defaults(&mut created);
                    members.insert(name.to_string(), created);
                }
                (None, None) => {}
            }
        }
    }

    /// Whether a member of this object (at any depth) has an `x-server-default`.
    fn has_defaults(&self) -> bool {
        self.members().any(|name| {
            self.member(name)
                .is_some_and(|shape| shape.server_default().is_some() || shape.has_defaults())
        })
    }

    /// The schema that allows anything (an open object's members).
    fn any(set: &'a SchemaSet) -> Self {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        Self {
            set,
            schema: EMPTY.get_or_init(Map::new),
            secret: false,
            default: None,
        }
    }
}

/// How two answers' values of one schema compare ([`Shape::comparison`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Comparison<'a> {
    /// As written; an array item by item.
    Exact,
    /// An array whose order and repeats mean nothing (`x-compare: set`).
    Set,
    /// An array of objects, each named by this member: two arrays are paired item by item by it,
    /// whatever their order (`x-compare: {key: MEMBER}`).
    Keyed(&'a str),
    /// A string whose ASCII letter case the server may rewrite: a value of a set, a UUID, or
    /// `x-compare: case-insensitive` (a type keyword).
    CaseInsensitive,
}

/// The comparison an `x-compare` value names; `None` for a value of no known form.
pub(super) fn comparison_of(value: &Value) -> Option<Comparison<'_>> {
    match value {
        Value::String(text) if text == "set" => Some(Comparison::Set),
        Value::String(text) if text == "case-insensitive" => Some(Comparison::CaseInsensitive),
        Value::Object(map) if map.len() == 1 => map
            .get("key")
            .and_then(Value::as_str)
            .map(Comparison::Keyed),
        _ => None,
    }
}
