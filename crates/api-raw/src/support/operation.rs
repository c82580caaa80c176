//! [`Operation`]: what the spec says of one operation, generated for every operation of each API
//! (`api_raw::management::operations`, `api_raw::observability::operations`).

/// Whether repeating an operation changes nothing (the spec's `x-idempotent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Idempotency {
    /// Repeating it changes nothing (a read, a delete, the service state command): safe to retry.
    Idempotent,
    /// Repeating it may apply it twice (a create): retried only when an answer proves that nothing
    /// was applied.
    NotIdempotent,
}

/// One operation of an API, as its spec describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Operation {
    /// The `operationId`, e.g. `getPipe`.
    pub id: &'static str,
    /// The HTTP method, upper case.
    pub method: &'static str,
    /// The path template, e.g. `/v1/organizations/{organizationId}/services`.
    pub path: &'static str,
    /// Whether it may be repeated (`x-idempotent`).
    pub idempotency: Idempotency,
    /// For an operation that is not idempotent: how to find out whether a call whose outcome is
    /// unknown was applied (`x-reconcile`).
    pub reconcile: Option<&'static str>,
}

impl Operation {
    /// Whether repeating it changes nothing.
    pub fn is_idempotent(&self) -> bool {
        self.idempotency == Idempotency::Idempotent
    }
}

/// The generated operation with this `operationId`, in any API compiled in.
pub fn operation(id: &str) -> Option<&'static Operation> {
    let found: Option<&'static Operation> = None;
    #[cfg(feature = "management")]
    let found = found.or_else(|| {
        crate::management::operations::ALL
            .iter()
            .copied()
            .find(|op| op.id == id)
    });
    #[cfg(feature = "observability")]
    let found = found.or_else(|| {
        crate::observability::operations::ALL
            .iter()
            .copied()
            .find(|op| op.id == id)
    });
    let _ = id;
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_found_by_id_in_every_api_compiled_in() {
        #[cfg(feature = "management")]
        {
            let create = operation("createPipe").expect("createPipe");
            assert_eq!((create.method, create.is_idempotent()), ("POST", false));
            assert!(create.reconcile.is_some());
            assert!(operation("getPipe").is_some_and(Operation::is_idempotent));
        }
        #[cfg(feature = "observability")]
        assert_eq!(
            operation("getAlert").map(|op| op.path),
            Some("/api/v2/alerts/{id}")
        );
        assert!(operation("nothing").is_none());
    }
}
