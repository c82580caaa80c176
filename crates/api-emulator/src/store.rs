//! Persistence with `--data-dir`: an embedded redb database, written through before each answer.
//! Every write is its own durable transaction, so nothing acknowledged is lost in a crash; in
//! deterministic mode the same transaction keeps the clock's position, so that a restart continues
//! the id sequence instead of replaying it.

use std::path::Path;

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};

use crate::clock::{Clock, Position};
pub use crate::store_write::Write;
use crate::world::{PipeRecord, ServiceRecord, World};

const SERVICES: TableDefinition<&str, &str> = TableDefinition::new("services");
const PIPES: TableDefinition<&str, &str> = TableDefinition::new("pipes");
/// `seeded` is written in the same transaction as the seed, so a crash before it leaves a store that is
/// seeded again on the next start rather than one that looks full and is empty.
const META: TableDefinition<&str, &str> = TableDefinition::new("meta");
const SEEDED: &str = "seeded";
/// The deterministic clock's [`Position`], as JSON.
const CLOCK: &str = "clock";

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
    /// Opens (or creates) the database in `dir`, private to its owner (see `data_dir`); says whether
    /// it holds a seeded world already.
    pub fn open(dir: &Path) -> Result<(Self, bool), StoreError> {
        let file = crate::data_dir::prepare(dir, FILE_NAME).map_err(StoreError)?;
        let db = Database::create(file).map_err(fail)?;
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
            world.put_pipe(key.value().parse().map_err(fail)?, record);
        }
        Ok(world)
    }

    /// The deterministic clock's position at the last write, if one was kept.
    pub fn clock(&self) -> Result<Option<Position>, StoreError> {
        let tx = self.db.begin_read().map_err(fail)?;
        let meta = tx.open_table(META).map_err(fail)?;
        match meta.get(CLOCK).map_err(fail)? {
            Some(value) => serde_json::from_str(value.value()).map(Some).map_err(fail),
            None => Ok(None),
        }
    }

    /// Writes every record of `world`, and the seeded marker, in one transaction.
    pub fn save_all(&self, world: &World, clock: &Clock) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(fail)?;
        {
            let mut services = tx.open_table(SERVICES).map_err(fail)?;
            for (id, record) in &world.services {
                services
                    .insert(id.to_string().as_str(), to_json(record)?.as_str())
                    .map_err(fail)?;
            }
            let mut pipes = tx.open_table(PIPES).map_err(fail)?;
            for (id, record) in world.pipes() {
                pipes
                    .insert(id.to_string().as_str(), to_json(record)?.as_str())
                    .map_err(fail)?;
            }
            let mut meta = tx.open_table(META).map_err(fail)?;
            meta.insert(SEEDED, "1").map_err(fail)?;
            if let Some(position) = clock.position() {
                meta.insert(CLOCK, to_json(&position)?.as_str())
                    .map_err(fail)?;
            }
        }
        tx.commit().map_err(fail)
    }

    /// Makes one write, with the deterministic clock's position, in one durable transaction.
    pub fn write(&self, write: Write<'_>, clock: &Clock) -> Result<(), StoreError> {
        if matches!(write, Write::Clock) && clock.position().is_none() {
            return Ok(());
        }
        let tx = self.db.begin_write().map_err(fail)?;
        {
            match write {
                Write::Pipe(id, record) => {
                    tx.open_table(PIPES)
                        .map_err(fail)?
                        .insert(id.to_string().as_str(), to_json(record)?.as_str())
                        .map_err(fail)?;
                }
                Write::Service(id, record) => {
                    tx.open_table(SERVICES)
                        .map_err(fail)?
                        .insert(id.to_string().as_str(), to_json(record)?.as_str())
                        .map_err(fail)?;
                }
                Write::RemovePipes(ids) => {
                    let mut pipes = tx.open_table(PIPES).map_err(fail)?;
                    for id in ids {
                        pipes.remove(id.to_string().as_str()).map_err(fail)?;
                    }
                }
                Write::Clock => {}
            }
            // Read once the transaction has begun: write transactions run one at a time, so the
            // position kept is past every id drawn before any write it follows.
            if let Some(position) = clock.position() {
                tx.open_table(META)
                    .map_err(fail)?
                    .insert(CLOCK, to_json(&position)?.as_str())
                    .map_err(fail)?;
            }
        }
        tx.commit().map_err(fail)
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(fail)
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

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
        store.save_all(&world, &Clock::wall()).unwrap();
        drop(store);
        let (store, seeded) = Store::open(dir.path()).unwrap();
        assert!(seeded);
        assert_eq!(store.load().unwrap().services.len(), seed.services.len());
        assert_eq!(
            store.clock().unwrap(),
            None,
            "the wall clock keeps no position"
        );
    }

    #[test]
    fn each_write_keeps_the_deterministic_clock_position_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::open(dir.path()).unwrap();
        let clock = Clock::deterministic(3);
        store.save_all(&World::default(), &clock).unwrap();
        assert_eq!(store.clock().unwrap(), clock.position());
        clock.tick();
        let id = clock.new_id();
        let record: PipeRecord = serde_json::from_value(serde_json::json!({
            "organization": Uuid::nil(), "pipe": {"id": id, "name": "p"}, "kind": "Kafka",
            "one_shot": false, "created": "2026-01-01T00:00:00Z", "forced": null,
            "deleted_at": null, "validate_samples": null
        }))
        .unwrap();
        store.write(Write::Pipe(id, &record), &clock).unwrap();
        assert_eq!(store.clock().unwrap(), clock.position());
        assert!(store.load().unwrap().pipe(&id).is_some());

        clock.tick();
        store.write(Write::Clock, &clock).unwrap();
        assert_eq!(store.clock().unwrap(), clock.position());
        store.write(Write::RemovePipes(&[id]), &clock).unwrap();
        assert!(store.load().unwrap().pipe(&id).is_none());
    }

    #[test]
    fn two_pipes_of_one_name_on_one_service_are_stored_and_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = Store::open(dir.path()).unwrap();
        let clock = Clock::wall();
        let service = Uuid::from_u128(1);
        let ids = [Uuid::from_u128(10), Uuid::from_u128(11)];
        for id in ids {
            let record: PipeRecord = serde_json::from_value(serde_json::json!({
                "organization": Uuid::nil(),
                "pipe": {"id": id, "name": "orders", "serviceId": service},
                "kind": "Kafka", "one_shot": false, "created": "2026-01-01T00:00:00Z",
                "forced": null, "deleted_at": null, "validate_samples": null
            }))
            .unwrap();
            store.write(Write::Pipe(id, &record), &clock).unwrap();
        }
        drop(store);
        let (store, _) = Store::open(dir.path()).unwrap();
        let world = store.load().unwrap();
        assert_eq!(
            world.pipes_named(service, "orders").collect::<Vec<_>>(),
            ids
        );
    }
}
