//! What one write to the store holds, with or without the `persistence` feature.

use uuid::Uuid;

use crate::world::{PipeRecord, ServiceRecord};

/// One write to the store, made in a transaction of its own with the deterministic clock's position.
// Without `persistence` there is no store to read a write.
#[cfg_attr(not(feature = "persistence"), allow(dead_code))]
#[derive(Debug, Clone, Copy)]
pub enum Write<'a> {
    /// A pipe, added or replaced.
    Pipe(Uuid, &'a PipeRecord),
    /// A service, replaced.
    Service(Uuid, &'a ServiceRecord),
    /// Pipes to forget.
    RemovePipes(&'a [Uuid]),
    /// Nothing but the deterministic clock's position (when the emulator stops).
    Clock,
}
