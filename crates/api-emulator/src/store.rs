//! Persistence with `--data-dir`: an embedded redb database, written through before each answer.
//! Every write is its own durable transaction, so nothing acknowledged is lost in a crash.

use std::path::Path;

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use uuid::Uuid;

use crate::world::{PipeRecord, ServiceRecord, World};

const SERVICES: TableDefinition<&str, &str> = TableDefinition::new("services");
const PIPES: TableDefinition<&str, &str> = TableDefinition::new("pipes");
/// `seeded` is written in the same transaction as the seed, so a crash before it leaves a store that is
/// seeded again on the next start rather than one that looks full and is empty.
const META: TableDefinition<&str, &str> = TableDefinition::new("meta");
const SEEDED: &str = "seeded";

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
    /// Opens (or creates) the database in `dir`; says whether it holds a seeded world already.
    pub fn open(dir: &Path) -> Result<(Self, bool), StoreError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError(format!("cannot create {}: {e}", dir.display())))?;
        let db = Database::create(dir.join(FILE_NAME)).map_err(fail)?;
        let tx = db.begin_write().map_err(fail)?;
        tx.open_table(SERVICES).map_err(fail)?;
        tx.open_table(PIPES).map_err(fail)?;
        let seeded = tx
            .open_table(META)
            .map_err(fail)?
            .get(SEEDED)
            .map_err(fail)?
            .is_some();
        tx.commit().map_err(fail)?;
        Ok((Self { db }, seeded))
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

    /// Writes every record of `world`, and the seeded marker, in one transaction.
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
            tx.open_table(META)
                .map_err(fail)?
                .insert(SEEDED, "1")
                .map_err(fail)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_counts_as_seeded_only_after_the_seed_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let (store, seeded) = Store::open(dir.path()).unwrap();
        assert!(!seeded, "a new store");
        drop(store);
        let (store, seeded) = Store::open(dir.path()).unwrap();
        assert!(!seeded, "tables without the seed are not a seeded world");
        let seed = crate::seed::Seed::builtin();
        let world = World::from_seed(&seed, chrono::Utc::now());
        store.save_all(&world).unwrap();
        drop(store);
        let (store, seeded) = Store::open(dir.path()).unwrap();
        assert!(seeded);
        assert_eq!(store.load().unwrap().services.len(), seed.services.len());
    }
}
