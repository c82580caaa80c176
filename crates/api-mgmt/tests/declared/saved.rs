//! Saved plans through the library, as a property: random declarations and random changes on the
//! server; the plan's document, written and read back, is rechecked and applied, and the calls
//! that change the server (the emulator's request log) are exactly those the document lists.

use std::collections::BTreeMap;

use api_emulator::{Emulator, EmulatorOptions, PipeState};
use api_mgmt::declared::{
    self, Declaration, DeclaredError, Lifecycle, Producer, SavedPlan, StateError, StateStore,
};
use api_test_support::plan_calls::{self, listed_calls};
use proptest::prelude::*;
use serde_json::json;

use crate::support::{options, pipe, service, store};

/// The names a case draws from.
const NAMES: [&str; 3] = ["a", "b", "c"];

/// One declared pipe: its replicas and its lifecycle.
#[derive(Debug, Clone, Copy)]
struct Declared {
    replicas: u32,
    protect: bool,
    retain: bool,
}

/// What happens to a recorded pipe on the server between the applies.
#[derive(Debug, Clone, Copy)]
enum Change {
    None,
    Gone,
    Failed,
    Edited,
}

fn declared() -> impl Strategy<Value = Option<Declared>> {
    prop::option::of(
        (1u32..=2, prop::bool::weighted(0.2), any::<bool>()).prop_map(
            |(replicas, protect, retain)| Declared {
                replicas,
                protect,
                retain,
            },
        ),
    )
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => Just(Change::None),
        1 => Just(Change::Gone),
        1 => Just(Change::Failed),
        1 => Just(Change::Edited),
    ]
}

fn declaration(pipes: &[Option<Declared>]) -> Declaration {
    let mut declaration = Declaration::new();
    for (name, declared) in NAMES.iter().zip(pipes) {
        if let Some(d) = declared {
            declaration.insert(pipe(name, d.replicas));
            let lifecycle = Lifecycle::default()
                .protect(d.protect)
                .retain_on_delete(d.retain);
            declaration.set_lifecycle(*name, lifecycle);
        }
    }
    declaration
}

/// The calls that changed the server since the log was cleared, counted.
fn changing_calls(emulator: &Emulator) -> BTreeMap<String, usize> {
    let requests = emulator.requests().into_entries();
    plan_calls::changing_calls(
        requests
            .iter()
            .map(|r| (r.method.as_str(), r.path.as_str(), r.body.as_ref())),
    )
}

/// Fails when `saved` does not follow the document's JSON Schema.
fn assert_follows_the_schema(saved: &SavedPlan) {
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let schema: serde_json::Value =
        serde_json::from_str(declared::PLAN_DOCUMENT_SCHEMA).expect("JSON");
    compiler.add_resource("plan.json", schema).expect("taken");
    let index = compiler
        .compile("plan.json", &mut schemas)
        .expect("compiles");
    if let Err(error) = schemas.validate(&saved.to_value(), index) {
        panic!("{error:#}\n{}", saved.to_json());
    }
}

async fn case(first: Vec<Option<Declared>>, changes: Vec<Change>, second: Vec<Option<Declared>>) {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let service = service(&emulator).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let target = declared::target_of(&service);
    let lock = store.lock(&target).unwrap();
    // The first declaration, applied as it is.
    let unprotected: Vec<Option<Declared>> = first
        .iter()
        .map(|d| {
            d.map(|d| Declared {
                protect: false,
                ..d
            })
        })
        .collect();
    let recorded = declared::RecordedState::new(target.clone());
    let plan = declared::plan(&service, &declaration(&unprotected), &recorded)
        .await
        .unwrap();
    let report = plan.apply(&lock, &store, &options()).await.unwrap();
    assert!(report.is_complete(), "{report:?}");
    // The server moves.
    let recorded = store.load().unwrap().unwrap_or(recorded);
    for (name, change) in NAMES.iter().zip(&changes) {
        let Some(record) = recorded.pipes.get(*name) else {
            continue;
        };
        match change {
            Change::None => {}
            Change::Gone => service.pipe(record.id).delete().await.map(drop).unwrap(),
            Change::Failed => {
                emulator
                    .force_pipe_state(record.id, Some(PipeState::Failed))
                    .unwrap();
            }
            Change::Edited => {
                emulator
                    .patch_pipe(record.id, &json!({"scaling": {"replicas": 3}}))
                    .unwrap();
            }
        }
    }
    // The second declaration: planned, written, read back, rechecked, applied.
    let declaration = declaration(&second);
    let plan = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    let producer = Producer::new("property", "1");
    let saved = SavedPlan::from_json(&plan.save(&declaration, producer.clone()).to_json()).unwrap();
    assert_follows_the_schema(&saved);
    let plan = saved
        .recheck(&service, &declaration, &recorded, &producer)
        .await
        .unwrap();
    emulator.clear_requests();
    let applied = plan.apply(&lock, &store, &options()).await;
    let calls = changing_calls(&emulator);
    if saved.actions.iter().any(|a| a.protected) {
        assert!(
            matches!(applied, Err(StateError::Protected { .. })),
            "{applied:?}"
        );
        assert!(calls.is_empty(), "refused, yet sent {calls:?}");
        return;
    }
    let report = applied.unwrap();
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(
        calls,
        listed_calls(&saved.to_value()),
        "{:#?}",
        saved.actions
    );
    // Applied: the document is stale now, whatever it held.
    // (A plan of nothing against nothing writes no state.)
    let now = store.load().unwrap().unwrap_or_else(|| recorded.clone());
    if now.serial != recorded.serial {
        let again = saved.recheck(&service, &declaration, &now, &producer).await;
        assert!(matches!(again, Err(DeclaredError::Moved(_))), "{again:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_rechecked_plan_makes_exactly_the_calls_its_document_lists(
        first in prop::collection::vec(declared(), NAMES.len()),
        changes in prop::collection::vec(change(), NAMES.len()),
        second in prop::collection::vec(declared(), NAMES.len()),
    ) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(case(first, changes, second));
    }
}

/// `value` sealed as a writer seals a document: the BLAKE2b-256 of its canonical JSON without
/// `digest`.
fn resealed(mut value: serde_json::Value) -> String {
    use blake2::Digest as _;
    value.as_object_mut().unwrap().remove("digest");
    let mut hasher = blake2::Blake2b::<blake2::digest::consts::U32>::new();
    hasher.update(value.to_string().as_bytes());
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    value["digest"] = json!(format!("blake2b-256:{hex}"));
    value.to_string()
}

/// A document edited after review and sealed again reads (its digest matches), and is still refused
/// by its recheck: what a reviewer or a policy read is what is applied.
#[test]
fn an_edited_and_resealed_document_is_refused_by_its_recheck() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
        let service = service(&emulator).await;
        let dir = tempfile::tempdir().unwrap();
        let store = store(&dir);
        let lock = store.lock(&declared::target_of(&service)).unwrap();
        let recorded = declared::RecordedState::new(declared::target_of(&service));
        let declaration = Declaration::new().pipe(pipe("a", 1));
        let plan = declared::plan(&service, &declaration, &recorded)
            .await
            .unwrap();
        let producer = Producer::new("review", "1");
        let saved = plan.save(&declaration, producer.clone());
        // As written, it rechecks.
        let read = SavedPlan::from_json(&saved.to_json()).unwrap();
        read.recheck(&service, &declaration, &recorded, &producer)
            .await
            .unwrap();
        // What a policy reads, changed and sealed again: read, then refused.
        for (pointer, value) in [
            ("/actions/0/after/scaling/replicas", json!(3)),
            (
                "/actions/0/impact",
                json!([{"class": "none", "member": "source.kafka", "says": "nothing"}]),
            ),
            ("/summary/destructive", json!(5)),
        ] {
            let mut value_of = saved.to_value();
            *value_of
                .pointer_mut(pointer)
                .unwrap_or_else(|| panic!("{pointer}")) = value;
            let edited = SavedPlan::from_json(&resealed(value_of)).unwrap();
            let refused = edited
                .recheck(&service, &declaration, &recorded, &producer)
                .await;
            let Err(DeclaredError::Moved(moved)) = refused else {
                panic!("{pointer}: {refused:?}");
            };
            assert!(
                moved[0].starts_with("the document:"),
                "{pointer}: {moved:?}"
            );
        }
        // Nothing was sent.
        let _ = lock;
        assert!(emulator.pipes().is_empty());
    });
}
