//! The one outcome rule: after a call ends without success, whether it may have been applied, and
//! whether trying it again is safe and may help.
//!
//! | how the attempt ended | nothing applied (known) | may help to repeat |
//! |---|---|---|
//! | 400, 401, 403, 404, 405, 409, 413, 422, 424 | yes | no |
//! | 429 | yes | yes |
//! | a refused connection | yes | yes |
//! | a request never sent | yes | no |
//! | 502, 503, 504 | no | yes |
//! | 500 and every other 5xx, every other status | no | no |
//! | a connection lost or timed out after sending | no | yes |
//! | a success whose body failed to read | no | yes |
//! | a success whose body does not decode | no | no |
//!
//! An operation's idempotency comes from the spec (`x-idempotent`, generated into
//! [`Operation`](crate::Operation)). For an idempotent operation nothing is ever unknown: it may
//! be repeated whenever repeating may help. For one that is not, the outcome is *unknown* unless the
//! ending proves nothing was applied, and a call whose outcome is unknown is never repeated by the
//! SDK: [`Error::is_outcome_unknown`](crate::Error::is_outcome_unknown) says so, and the error's
//! `Display` says how to reconcile (`x-reconcile`).

use api_raw::support::Idempotency;

/// How one attempt ended, as far as the outcome rule is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Ending {
    /// The server answered with this error status.
    Status(u16),
    /// The connection could not be made: nothing was sent.
    Refused,
    /// The request was never sent (refused before sending).
    NotSent,
    /// The connection was lost, or the attempt timed out, after the request may have been sent.
    Lost,
    /// A success status whose body failed to read.
    BodyLost(u16),
    /// A success status whose body does not decode.
    Undecodable(u16),
}

impl Ending {
    /// Whether this ending proves that nothing was applied.
    pub fn proves_nothing_applied(self) -> bool {
        match self {
            Ending::Status(status) => matches!(
                status,
                400 | 401 | 403 | 404 | 405 | 409 | 413 | 422 | 424 | 429
            ),
            Ending::Refused | Ending::NotSent => true,
            Ending::Lost | Ending::BodyLost(_) | Ending::Undecodable(_) => false,
        }
    }

    /// Whether the same request may get another answer later: a 429, a gateway error, a refused
    /// or lost connection, a success whose body was lost.
    pub fn is_transient(self) -> bool {
        match self {
            Ending::Status(status) => matches!(status, 429 | 502..=504),
            Ending::Refused | Ending::Lost | Ending::BodyLost(_) => true,
            Ending::NotSent | Ending::Undecodable(_) => false,
        }
    }

    /// Whether a call of this idempotency that ended so may have been applied without the caller
    /// knowing.
    pub fn leaves_outcome_unknown(self, idempotency: Idempotency) -> bool {
        idempotency == Idempotency::NotIdempotent && !self.proves_nothing_applied()
    }

    /// Whether the SDK may send the call again: the ending is transient and repeating cannot apply
    /// it twice.
    pub fn may_retry(self, idempotency: Idempotency) -> bool {
        self.is_transient() && !self.leaves_outcome_unknown(idempotency)
    }
}

/// The idempotency of the operation `id` as the spec says it; an operation no spec of this build
/// knows counts as not idempotent (the careful answer).
pub(crate) fn idempotency_of(id: &str) -> Idempotency {
    api_raw::support::operation(id).map_or(Idempotency::NotIdempotent, |op| op.idempotency)
}

/// What an error's `Display` adds when a call may have been applied: that it may have, and how to
/// find out (the operation's `x-reconcile`).
pub(crate) fn unknown_outcome_hint(operation: &str, unknown: bool) -> String {
    if !unknown {
        return String::new();
    }
    let reconcile = api_raw::support::operation(operation)
        .and_then(|op| op.reconcile)
        .unwrap_or("look at the resource before you send the request again.");
    format!(
        "; the request may have reached the server and taken effect: do not repeat it blindly. {reconcile}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use Idempotency::{Idempotent, NotIdempotent};

    /// Every ending of the rule, with (known for a create, transient).
    fn table() -> Vec<(Ending, bool, bool)> {
        let mut rows = Vec::new();
        for status in [400, 401, 403, 404, 405, 409, 413, 422, 424] {
            rows.push((Ending::Status(status), true, false));
        }
        rows.push((Ending::Status(429), true, true));
        for status in [502, 503, 504] {
            rows.push((Ending::Status(status), false, true));
        }
        for status in [300, 402, 406, 408, 410, 418, 451, 500, 501, 505, 507, 599] {
            rows.push((Ending::Status(status), false, false));
        }
        rows.push((Ending::Refused, true, true));
        rows.push((Ending::NotSent, true, false));
        rows.push((Ending::Lost, false, true));
        rows.push((Ending::BodyLost(200), false, true));
        rows.push((Ending::Undecodable(200), false, false));
        rows.push((Ending::Undecodable(201), false, false));
        rows
    }

    #[test]
    fn every_ending_for_both_idempotencies() {
        for (ending, known, transient) in table() {
            assert_eq!(ending.proves_nothing_applied(), known, "{ending:?}");
            assert_eq!(ending.is_transient(), transient, "{ending:?}");
            // Idempotent: never unknown, retried whenever transient.
            assert!(!ending.leaves_outcome_unknown(Idempotent), "{ending:?}");
            assert_eq!(ending.may_retry(Idempotent), transient, "{ending:?}");
            // Not idempotent: unknown unless known, retried only when known and transient.
            assert_eq!(
                ending.leaves_outcome_unknown(NotIdempotent),
                !known,
                "{ending:?}"
            );
            assert_eq!(
                ending.may_retry(NotIdempotent),
                known && transient,
                "{ending:?}"
            );
        }
    }

    #[test]
    fn idempotency_and_reconcile_text_come_from_the_spec() {
        #[cfg(feature = "management")]
        {
            assert_eq!(idempotency_of("createPipe"), NotIdempotent);
            assert_eq!(idempotency_of("deletePipe"), Idempotent);
            let hint = unknown_outcome_hint("createPipe", true);
            assert!(hint.contains("cannot look a pipe up by name"), "{hint}");
        }
        #[cfg(feature = "observability")]
        assert_eq!(idempotency_of("getAlert"), Idempotent);
        assert_eq!(idempotency_of("somethingElse"), NotIdempotent);
        assert_eq!(unknown_outcome_hint("createPipe", false), "");
        assert!(unknown_outcome_hint("somethingElse", true).contains("look at the resource"));
    }
}
