//! Persistence with `--data-dir`: an embedded redb database, written through before each answer.
//! Every write is its own durable transaction, so nothing acknowledged is lost in a crash.

use std::path::Path;

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use uuid::Uuid;

use crate::world::{PipeRecord, ServiceRecord, World};

const SERVICES: TableDefinition<&str, &str> = TableDefinition::new("services");
const PIPES: TableDefinition<&str, &str> = TableDefinition::new("pipes");

/// The database file inside the data directory.
pub const FILE_NAME: &str = "emulator.redb";

/// A storage failure.
#[derive(Debug, thiserror::Error)]
#[error("storage: {0}")]
pub struct StoreError(String);

fn fail(e: impl std::fmt::Display) -> StoreError {
    StoreError(e.to_string())
}

/// The database.
#[derive(Debug)]
pub struct Store {
    db: Database,
}

impl Store {
    /// Opens (or creates) the database in `dir`; says whether it held data already.
    pub fn open(dir: &Path) -> Result<(Self, bool), StoreError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError(format!("cannot create {}: {e}", dir.display())))?;
        let path = dir.join(FILE_NAME);
        let existed = path.exists();
        let db = Database::create(&path).map_err(fail)?;
        let tx = db.begin_write().map_err(fail)?;
        tx.open_table(SERVICES).map_err(fail)?;
        tx.open_table(PIPES).map_err(fail)?;
        tx.commit().map_err(fail)?;
        Ok((Self { db }, existed))
    }

    /// Reads everything.
    pub fn load(&self) -> Result<World, StoreError> {
        let tx = self.db.begin_read().map_err(fail)?;
        let mut world = World::default();
        for entry in tx
            .open_table(SERVICES)
            .map_err(fail)?
            .iter()
            .map_err(fail)?
        {
            let (key, value) = entry.map_err(fail)?;
            let record: ServiceRecord = serde_json::from_str(value.value()).map_err(fail)?;
            world
                .services
                .insert(key.value().parse().map_err(fail)?, record);
        }
        for entry in tx.open_table(PIPES).map_err(fail)?.iter().map_err(fail)? {
            let (key, value) = entry.map_err(fail)?;
            let record: PipeRecord = serde_json::from_str(value.value()).map_err(fail)?;
            world
                .pipes
                .insert(key.value().parse().map_err(fail)?, record);
        }
        Ok(world)
    }

    /// Writes every record of `world` in one transaction.
    pub fn save_all(&self, world: &World) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(fail)?;
        {
            let mut services = tx.open_table(SERVICES).map_err(fail)?;
            for (id, record) in &world.services {
                services
                    .insert(id.to_string().as_str(), to_json(record)?.as_str())
                    .map_err(fail)?;
            }
            let mut pipes = tx.open_table(PIPES).map_err(fail)?;
            for (id, record) in &world.pipes {
                pipes
                    .insert(id.to_string().as_str(), to_json(record)?.as_str())
                    .map_err(fail)?;
            }
        }
        tx.commit().map_err(fail)
    }

    /// Writes one service.
    pub fn save_service(&self, id: Uuid, record: &ServiceRecord) -> Result<(), StoreError> {
        self.put(SERVICES, id, &to_json(record)?)
    }

    /// Writes one pipe.
    pub fn save_pipe(&self, id: Uuid, record: &PipeRecord) -> Result<(), StoreError> {
        self.put(PIPES, id, &to_json(record)?)
    }

    /// Forgets one pipe.
    pub fn remove_pipe(&self, id: Uuid) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(fail)?;
        tx.open_table(PIPES)
            .map_err(fail)?
            .remove(id.to_string().as_str())
            .map_err(fail)?;
        tx.commit().map_err(fail)
    }

    fn put(
        &self,
        table: TableDefinition<&str, &str>,
        id: Uuid,
        json: &str,
    ) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(fail)?;
        tx.open_table(table)
            .map_err(fail)?
            .insert(id.to_string().as_str(), json)
            .map_err(fail)?;
        tx.commit().map_err(fail)
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(fail)
}
