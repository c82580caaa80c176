//! Without the `persistence` feature the state lives in memory only: there is no database to open,
//! and asking for a data directory is an error that names the feature.

use std::path::Path;

use crate::clock::{Clock, Position};
pub use crate::store_write::Write;
use crate::world::World;

/// A storage failure.
#[derive(Debug, thiserror::Error)]
#[error("storage: {0}")]
pub struct StoreError(String);

/// No database: this type has no values.
#[derive(Debug)]
pub enum Store {}

impl Store {
    /// Refuses: persistence is not compiled in.
    pub fn open(dir: &Path) -> Result<(Self, bool), StoreError> {
        Err(StoreError(format!(
            "cannot keep state in {}: api-emulator was built without its `persistence` feature",
            dir.display()
        )))
    }

    /// Unreachable: there is no store.
    pub fn load(&self) -> Result<World, StoreError> {
        match *self {}
    }

    /// Unreachable: there is no store.
    pub fn clock(&self) -> Result<Option<Position>, StoreError> {
        match *self {}
    }

    /// Unreachable: there is no store.
    pub fn save_all(&self, _world: &World, _clock: &Clock) -> Result<(), StoreError> {
        match *self {}
    }

    /// Unreachable: there is no store.
    pub fn write(&self, _write: Write<'_>, _clock: &Clock) -> Result<(), StoreError> {
        match *self {}
    }
}
