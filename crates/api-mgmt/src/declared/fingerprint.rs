//! The form of a declared pipe that the recorded state keeps: the create request as JSON, each secret
//! replaced by a salted, deliberately slow fingerprint, and a digest of the whole.
//!
//! A secret is a member the spec types as `Secret` (`password`, `secretKey`, `connectionString`) or
//! one the SDK's redaction rule calls secret by its name (an unknown setting such as
//! `kafka_sasl_password`). Its fingerprint is Argon2id (RFC 9106; the `argon2` crate of RustCrypto)
//! of the member's path and value, with a 16-byte random salt of the record, 19 MiB of memory, two
//! passes and one lane (OWASP's minimum for passwords): an attacker who reads the state file must
//! spend that much per guess, and two pipes with the same password get different fingerprints. The
//! digest of the whole form is BLAKE2b-256 of its canonical JSON (keys sorted, whole numbers as
//! integers), so an unchanged declaration is told in one comparison.

use std::borrow::Cow;

use api_core::management::NewPipe;
use api_core::raw::support::redact::Redactor;
use api_core::raw::support::schema::{SchemaSet, Shape, for_each_secret_value, secret_text};
use argon2::{Algorithm, Argon2, Params, Version};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD_NO_PAD;
use blake2::Digest as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::StateError;

/// The prefix of a secret's fingerprint in the declared form.
pub(crate) const SECRET_PREFIX: &str = "argon2id:";

/// How a declaration was fingerprinted: the parameters, the record's salt and the digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fingerprint {
    /// `argon2id` (the only algorithm so far).
    pub algorithm: String,
    /// Argon2's version (19, 0x13).
    pub version: u32,
    /// Memory per fingerprint, in KiB.
    pub memory_kib: u32,
    /// Passes over the memory.
    pub iterations: u32,
    /// Lanes.
    pub parallelism: u32,
    /// The record's salt (16 random bytes, base64).
    pub salt: String,
    /// BLAKE2b-256 of the declared form's canonical JSON, in hexadecimal.
    pub digest: String,
}

impl Fingerprint {
    /// New parameters with a fresh random salt, for a pipe about to be created.
    pub(crate) fn fresh() -> Self {
        Self {
            algorithm: "argon2id".into(),
            version: 0x13,
            memory_kib: 19 * 1024,
            iterations: 2,
            parallelism: 1,
            salt: STANDARD_NO_PAD.encode(uuid::Uuid::new_v4().as_bytes()),
            digest: String::new(),
        }
    }

    fn argon2(&self) -> Result<(Argon2<'static>, Vec<u8>), StateError> {
        if self.algorithm != "argon2id" || self.version != 0x13 {
            return Err(StateError::corrupt(format!(
                "a fingerprint uses {} version {}, which this version of the SDK does not know",
                self.algorithm, self.version
            )));
        }
        // A state file is input: parameters beyond these would make a plan take the machine.
        if self.memory_kib > 256 * 1024 || self.iterations > 16 || self.parallelism > 8 {
            return Err(StateError::corrupt(format!(
                "a fingerprint asks for {} KiB, {} passes and {} lanes, more than the SDK spends (256 MiB, 16, 8)",
                self.memory_kib, self.iterations, self.parallelism
            )));
        }
        let params = Params::new(self.memory_kib, self.iterations, self.parallelism, Some(32))
            .map_err(|e| StateError::corrupt(format!("a fingerprint's parameters: {e}")))?;
        let salt = STANDARD_NO_PAD
            .decode(&self.salt)
            .map_err(|e| StateError::corrupt(format!("a fingerprint's salt: {e}")))?;
        Ok((
            Argon2::new(Algorithm::Argon2id, Version::V0x13, params),
            salt,
        ))
    }
}

/// Argon2's working memory (19 MiB at the SDK's parameters), kept from one fingerprint to the next
/// on one thread: allocating it afresh for each secret, and the kernel's zeroing of its pages, cost
/// a fifth of a plan's CPU (a profile of a fleet of `cloudctl apply`). Argon2 writes every block
/// before it reads it, so what a previous fingerprint left there is never read.
#[derive(Default)]
pub(crate) struct Memory(Vec<argon2::Block>);

impl Memory {
    /// The first `blocks` blocks, grown to them when the memory is smaller.
    fn blocks(&mut self, blocks: usize) -> &mut [argon2::Block] {
        if self.0.len() < blocks {
            self.0.resize(blocks, argon2::Block::default());
        }
        &mut self.0[..blocks]
    }
}

/// The declared form of `pipe` under `fingerprint`'s parameters and salt, and the fingerprint with
/// its digest set; `memory` is Argon2's.
pub(crate) fn declared_form(
    pipe: &NewPipe,
    fingerprint: &Fingerprint,
    memory: &mut Memory,
) -> Result<(Value, Fingerprint), StateError> {
    // The name is the state's key, kept as it is: it must not hold a secret.
    if matches!(Redactor::new().text(&pipe.as_raw().name), Cow::Owned(_)) {
        return Err(StateError::Refused(
            "a pipe's name holds what the redaction rule takes for a secret (a URI's password, a \
             signature, a `password=`); the state keeps names as they are, so give the pipe another \
             name"
                .into(),
        ));
    }
    let form = serde_json::to_value(pipe.as_raw())
        .map_err(|e| StateError::corrupt(format!("the request cannot be written as JSON: {e}")))?;
    let shape = SchemaSet::management().schema("PipeCreateRequest");
    let form = stored_form(form, shape, fingerprint, memory)?;
    let mut fingerprint = fingerprint.clone();
    fingerprint.digest = digest(&form);
    Ok((form, fingerprint))
}

/// The observed form of a pipe the server answered (its JSON, as the generated type writes it):
/// the members the create request has, as the server wrote them, stored as the declared form is.
pub(crate) fn observed_form(
    server: &Value,
    fingerprint: &Fingerprint,
    memory: &mut Memory,
) -> Result<Value, StateError> {
    let shape = SchemaSet::management().schema("PipeCreateRequest");
    let projected = project(server, shape).unwrap_or_else(|| Value::Object(Default::default()));
    stored_form(projected, shape, fingerprint, memory)
}

/// What of `value` a value of the request schema `shape` can hold: members the request has no room
/// for (`id`, `state`, times) go, and so does `null`.
fn project(value: &Value, shape: Option<Shape<'_>>) -> Option<Value> {
    match (value, shape) {
        (Value::Null, _) => None,
        (Value::Object(members), Some(shape)) => Some(Value::Object(
            members
                .iter()
                .filter_map(|(name, member)| {
                    let inner = shape.member(name)?;
                    Some((name.clone(), project(member, Some(inner))?))
                })
                .collect(),
        )),
        (Value::Array(items), Some(shape)) => Some(Value::Array(
            items
                .iter()
                .map(|item| project(item, shape.items()).unwrap_or(Value::Null))
                .collect(),
        )),
        (other, _) => Some(other.clone()),
    }
}

/// `value` (of the schema `shape`) as a state stores it: every secret replaced by its fingerprint
/// under `fingerprint`'s parameters and salt (in `memory`), whole numbers as integers.
///
/// A secret is anything under a member that
/// [`is_secret`](crate::schema::is_secret) names (a scalar, or an array or object
/// fingerprinted whole), and any other string in which the SDK's one redaction rule finds one (a
/// password in a URI's userinfo, a signature in a query, a `password=` in a setting's text): such a
/// string is fingerprinted whole, so that no piece of it is kept and a change of it is still seen.
pub(crate) fn stored_form(
    mut value: Value,
    shape: Option<Shape<'_>>,
    fingerprint: &Fingerprint,
    memory: &mut Memory,
) -> Result<Value, StateError> {
    let (argon2, salt) = fingerprint.argon2()?;
    let blocks = argon2.params().block_count();
    let redactor = Redactor::new();
    let holds_secret = |text: &str| {
        !text.starts_with(SECRET_PREFIX) && matches!(redactor.text(text), Cow::Owned(_))
    };
    let mut failed = None;
    for_each_secret_value(&mut value, shape, &holds_secret, &mut |path, value| {
        let mut hash = [0u8; 32];
        let mut input = path.as_bytes().to_vec();
        input.push(0);
        input.extend_from_slice(secret_text(value).as_bytes());
        let memory = memory.blocks(blocks);
        if let Err(e) = argon2.hash_password_into_with_memory(&input, &salt, &mut hash, memory) {
            failed = Some(e);
        }
        *value = Value::String(format!("{SECRET_PREFIX}{}", STANDARD_NO_PAD.encode(hash)));
    });
    if let Some(e) = failed {
        return Err(StateError::corrupt(format!(
            "a secret cannot be fingerprinted: {e}"
        )));
    }
    normalise(&mut value);
    Ok(value)
}

/// Whole numbers as integers (the SDK's one whole-number rule), so that `3` and `3.0` are one form.
pub(crate) fn normalise(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(whole) = n.as_f64().and_then(api_core::raw::support::whole_number) {
                *value = Value::from(whole);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalise),
        Value::Object(members) => members.values_mut().for_each(normalise),
        _ => {}
    }
}

/// BLAKE2b-256 of the canonical JSON of `form` (serde_json writes object keys sorted), hexadecimal.
pub(crate) fn digest(form: &Value) -> String {
    let mut hasher = blake2::Blake2b::<blake2::digest::consts::U32>::new();
    hasher.update(form.to_string().as_bytes());
    hex(&hasher.finalize())
}

/// `bytes` in lower-case hexadecimal.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use api_core::management::{Destination, KafkaSource, NewPipe, PipeSettings};

    use super::*;

    fn pipe(password: &str) -> NewPipe {
        let mut settings = PipeSettings::new();
        settings
            .extra
            .insert("kafka_sasl_password".into(), "sasl-secret-value".into());
        NewPipe::builder("orders")
            .source(KafkaSource::new("b:9092", "orders").credentials("reader", password))
            .destination(Destination::new("d").table("t").managed_table(true))
            .mapped_column("id", "id", "UInt64")
            .settings(settings)
            .build()
            .unwrap()
    }

    #[test]
    fn a_secret_is_never_in_the_form_and_a_change_of_it_is_seen() {
        let fingerprint = Fingerprint::fresh();
        let (form, first) = declared_form(
            &pipe("kafka-password-1"),
            &fingerprint,
            &mut Memory::default(),
        )
        .unwrap();
        let shown = form.to_string();
        assert!(!shown.contains("kafka-password-1"), "{shown}");
        assert!(
            !shown.contains("sasl-secret-value"),
            "an unknown secret setting: {shown}"
        );
        let password = form["source"]["kafka"]["credentials"]["password"]
            .as_str()
            .unwrap();
        assert!(password.starts_with(SECRET_PREFIX), "{password}");
        assert_eq!(form["source"]["kafka"]["credentials"]["username"], "reader");

        let (_, same) = declared_form(
            &pipe("kafka-password-1"),
            &fingerprint,
            &mut Memory::default(),
        )
        .unwrap();
        assert_eq!(
            same.digest, first.digest,
            "the same declaration, the same digest"
        );
        let (changed_form, changed) = declared_form(
            &pipe("kafka-password-2"),
            &fingerprint,
            &mut Memory::default(),
        )
        .unwrap();
        assert_ne!(changed.digest, first.digest);
        assert_ne!(
            changed_form["source"]["kafka"]["credentials"]["password"],
            form["source"]["kafka"]["credentials"]["password"]
        );
        let (other_salt, _) = declared_form(
            &pipe("kafka-password-1"),
            &Fingerprint::fresh(),
            &mut Memory::default(),
        )
        .unwrap();
        assert_ne!(
            other_salt["source"]["kafka"]["credentials"]["password"],
            form["source"]["kafka"]["credentials"]["password"],
            "salted: another record's fingerprint of the same password differs"
        );
    }

    #[test]
    fn a_memory_kept_from_one_fingerprint_to_the_next_changes_no_fingerprint() {
        let fingerprint = Fingerprint::fresh();
        let mut kept = Memory::default();
        let (other, _) = declared_form(&pipe("another-password"), &fingerprint, &mut kept).unwrap();
        let (again, _) = declared_form(&pipe("kafka-password-1"), &fingerprint, &mut kept).unwrap();
        let (fresh, _) = declared_form(
            &pipe("kafka-password-1"),
            &fingerprint,
            &mut Memory::default(),
        )
        .unwrap();
        assert_eq!(again, fresh);
        assert_ne!(other, fresh);
        // A record of smaller parameters reads the first blocks of the same memory.
        let mut small = fingerprint.clone();
        small.memory_kib = 64;
        let (kept_small, _) = declared_form(&pipe("kafka-password-1"), &small, &mut kept).unwrap();
        let (fresh_small, _) =
            declared_form(&pipe("kafka-password-1"), &small, &mut Memory::default()).unwrap();
        assert_eq!(kept_small, fresh_small);
        assert_ne!(kept_small, fresh);
    }

    #[test]
    fn unknown_parameters_are_refused_not_guessed() {
        let mut fingerprint = Fingerprint::fresh();
        fingerprint.algorithm = "md5".into();
        assert!(declared_form(&pipe("p"), &fingerprint, &mut Memory::default()).is_err());
        let mut fingerprint = Fingerprint::fresh();
        fingerprint.salt = "not base64!".into();
        assert!(declared_form(&pipe("p"), &fingerprint, &mut Memory::default()).is_err());
        let mut fingerprint = Fingerprint::fresh();
        fingerprint.memory_kib = u32::MAX;
        let error = declared_form(&pipe("p"), &fingerprint, &mut Memory::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("more than the SDK spends"), "{error}");
    }
}
