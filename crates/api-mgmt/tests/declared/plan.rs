//! Plans: what a plan finds on the server and what it says about it (`is_empty`, `has_work`,
//! `pending`, `unreadable`, the reads it made), for each case a recorded pipe or the service can be
//! in.

use api_emulator::{Emulator, EmulatorOptions, Fault, FaultRule, OperationId, ServiceState};
use api_mgmt::declared::{
    self, ActionKind, Declaration, Effect, PlanOptions, RecordedState, ServiceTarget,
};
use serde_json::json;

use crate::support::{applied, apply_saved, pipe, service};

async fn emulator() -> Emulator {
    Emulator::start(EmulatorOptions::for_tests()).await.unwrap()
}

fn names<'a>(
    actions: impl Iterator<Item = &'a declared::PlanAction>,
) -> Vec<(ActionKind, &'a str)> {
    actions.map(|a| (a.kind, a.name.as_str())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_new_pipe_is_work_and_a_plan_after_its_apply_is_empty() {
    let emulator = emulator().await;
    let service = service(&emulator).await;
    let declaration = Declaration::new()
        .pipe(pipe("orders", 1))
        .pipe(pipe("events", 1));
    let first = declared::plan(
        &service,
        &declaration,
        &RecordedState::new(declared::target_of(&service)),
    )
    .await
    .unwrap();
    assert!(!first.is_empty() && first.has_work(), "{first:?}");
    assert_eq!(
        names(first.actions.iter()),
        [
            (ActionKind::Create, "events"),
            (ActionKind::Create, "orders")
        ]
    );
    assert_eq!(first.reads, 0, "nothing recorded, nothing read");

    let recorded = applied(&service, &declaration).await;
    let again = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    assert!(again.is_empty(), "{again:?}");
    assert!(!again.has_work(), "{again:?}");
    assert_eq!(again.unchanged, ["events", "orders"]);
    assert!(again.drift.is_empty(), "{:?}", again.drift);
    assert_eq!(again.reads, 2, "one read per recorded pipe");
    assert_eq!(again.pending().count() + again.unreadable().count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_pending_create_is_left_alone_and_is_no_work() {
    let emulator = emulator().await;
    let service = service(&emulator).await;
    let text = json!({
        "version": 2, "target": declared::target_of(&service),
        "pending": {"orders": {
            "fingerprint": {"algorithm": "argon2id", "version": 19, "memoryKib": 19456, "iterations": 2,
                            "parallelism": 1, "salt": "c2FsdHNhbHRzYWx0c2FsdA", "digest": ""},
            "declared": {"name": "orders"}, "startedAt": "2030-01-01T00:00:00Z", "intentId": "i",
            "reason": "the connection closed"}},
    });
    let recorded = RecordedState::from_json(&text.to_string()).unwrap();

    let both = Declaration::new()
        .pipe(pipe("orders", 1))
        .pipe(pipe("events", 1));
    let plan = declared::plan(&service, &both, &recorded).await.unwrap();
    assert_eq!(
        names(plan.pending()),
        [(ActionKind::Pending, "orders")],
        "{plan:?}"
    );
    let note = plan.pending().next().unwrap().note.clone().unwrap();
    assert!(
        note.contains("sent at 2030-01-01T00:00:00Z")
            && note.contains("(the connection closed)")
            && note.contains("adopt it by its id"),
        "{note}"
    );
    assert!(plan.has_work(), "events is created");

    let alone = Declaration::new().pipe(pipe("orders", 1));
    let plan = declared::plan(&service, &alone, &recorded).await.unwrap();
    assert!(!plan.is_empty(), "a pending create is shown");
    assert!(!plan.has_work(), "an apply does nothing for it: {plan:?}");
    // No longer declared, it stays pending all the same.
    let plan = declared::plan(&service, &Declaration::new(), &recorded)
        .await
        .unwrap();
    assert_eq!(
        names(plan.actions.iter()),
        [(ActionKind::Pending, "orders")]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn an_undecodable_answer_blocks_its_own_pipe_and_a_refused_read_the_plan() {
    let emulator = emulator().await;
    let service = service(&emulator).await;
    let declaration = Declaration::new()
        .pipe(pipe("orders", 1))
        .pipe(pipe("events", 1));
    let recorded = applied(&service, &declaration).await;
    let orders = recorded.pipes["orders"].id;
    emulator
        .set_raw_overlay(orders, json!({"scaling": {"replicas": "three"}}))
        .unwrap();

    let plan = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    assert_eq!(
        names(plan.unreadable()),
        [(ActionKind::Unreadable, "orders")]
    );
    assert_eq!(names(plan.actions.iter()), names(plan.unreadable()));
    assert_eq!(plan.actions[0].id, Some(orders));
    let note = plan.actions[0].note.as_deref().unwrap();
    assert!(note.contains("cannot be read"), "{note}");
    assert_eq!(plan.unchanged, ["events"]);
    assert!(!plan.has_work(), "nothing is done to an unreadable pipe");
    assert_eq!(plan.reads, 2);

    // A read the server refuses is no answer about the pipe: the plan stops.
    emulator
        .inject(FaultRule::operation(OperationId::GetPipe).then(Fault::status(403)))
        .unwrap();
    let refused = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("403"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_pipe_gone_from_the_server_is_recreated_and_an_unfinished_replace_is_named() {
    let emulator = emulator().await;
    let service = service(&emulator).await;
    let declaration = Declaration::new().pipe(pipe("orders", 1));
    let mut recorded = applied(&service, &declaration).await;
    let id = recorded.pipes["orders"].id;
    recorded.pipes.get_mut("orders").unwrap().replacing =
        Some("2030-01-01T00:00:00Z".parse().unwrap());
    emulator
        .inject(FaultRule::operation(OperationId::GetPipe).then(Fault::status(404)))
        .unwrap();

    let plan = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    assert_eq!(
        names(plan.actions.iter()),
        [(ActionKind::Recreate, "orders")]
    );
    assert_eq!(plan.actions[0].id, Some(id));
    assert_eq!(
        plan.actions[0].note.as_deref(),
        Some(
            format!(
                "pipe {id} is gone from the server; a replace begun at 2030-01-01T00:00:00Z \
                 did not finish"
            )
            .as_str()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn what_the_server_changed_is_recorded_replaced_or_shown_by_what_the_file_says() {
    let emulator = emulator().await;
    let service = service(&emulator).await;
    let declaration = Declaration::new().pipe(pipe("orders", 1));
    let mut recorded = applied(&service, &declaration).await;
    let id = recorded.pipes["orders"].id;

    // A state written before observed forms: nothing to change, the answers to record.
    let observed = recorded
        .pipes
        .get_mut("orders")
        .unwrap()
        .observed
        .take()
        .expect("an observed form");
    let plan = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    assert!(plan.actions.is_empty(), "{plan:?}");
    assert!(plan.has_work(), "the answer is recorded by an apply");

    // The server came back to what the file says, unlike what it answered at the create: the
    // state records it, the pipe is not touched.
    let mut earlier = observed.clone();
    earlier["scaling"]["replicas"] = json!(5);
    recorded.pipes.get_mut("orders").unwrap().observed = Some(earlier);
    let plan = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    assert_eq!(names(plan.actions.iter()), [(ActionKind::Record, "orders")]);
    assert_eq!(plan.actions[0].changes[0].path, "scaling.replicas");
    assert_eq!(plan.actions[0].changes[0].effect, Effect::Record);

    // A change of a member the file leaves out: drift, shown and not acted on.
    recorded.pipes.get_mut("orders").unwrap().observed = Some(observed);
    emulator
        .patch_pipe(id, &json!({"scaling": {"concurrency": 3}}))
        .unwrap();
    let plan = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    assert!(plan.is_empty() && !plan.has_work(), "{plan:?}");
    assert_eq!(plan.unchanged, ["orders"]);
    assert_eq!(plan.drift.len(), 1, "{:?}", plan.drift);
    assert_eq!(plan.drift[0].id, id);
    assert_eq!(plan.drift[0].changes[0].path, "scaling.concurrency");
    assert_eq!(plan.drift[0].changes[0].effect, Effect::None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_declared_service_state_is_read_once_and_planned_when_it_differs() {
    let emulator = emulator().await;
    let service = service(&emulator).await;
    let nothing = RecordedState::new(declared::target_of(&service));
    emulator
        .set_service_state(service.id(), ServiceState::Stopped)
        .unwrap();

    let running = Declaration::new().service_state(ServiceTarget::Running);
    let plan = declared::plan(&service, &running, &nothing).await.unwrap();
    let change = plan.service.clone().expect("a start");
    assert_eq!(
        (change.from, change.to, change.known),
        (ServiceState::Stopped, ServiceTarget::Running, true)
    );
    assert!(!plan.is_empty() && plan.has_work(), "{plan:?}");
    assert_eq!(plan.reads, 1, "the service, once");

    let stopped = Declaration::new().service_state(ServiceTarget::Stopped);
    let plan = declared::plan(&service, &stopped, &nothing).await.unwrap();
    assert_eq!(plan.service, None, "stopped already");
    assert!(plan.is_empty() && !plan.has_work());

    emulator
        .set_service_state(service.id(), ServiceState::Running)
        .unwrap();
    let plan = declared::plan(&service, &stopped, &nothing).await.unwrap();
    assert_eq!(plan.service.map(|s| s.to), Some(ServiceTarget::Stopped));
    let refused = declared::plan(
        &service,
        &Declaration::new()
            .service_state(ServiceTarget::Stopped)
            .pipe(pipe("orders", 1)),
        &nothing,
    )
    .await
    .unwrap_err();
    assert!(
        refused.to_string().contains("the plan would create orders"),
        "{refused}"
    );

    // A read refused for another reason than the read itself stops the plan.
    emulator
        .inject(FaultRule::operation(OperationId::UpdateServiceState).then(Fault::status(403)))
        .unwrap();
    let failed = declared::plan(&service, &running, &nothing)
        .await
        .unwrap_err();
    assert!(failed.to_string().contains("403"), "{failed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_service_state_the_server_will_not_read_is_unknown_and_no_known_change() {
    let emulator = Emulator::start(EmulatorOptions::for_tests().require_state_command())
        .await
        .unwrap();
    let service = service(&emulator).await;
    let nothing = RecordedState::new(declared::target_of(&service));
    let running = Declaration::new().service_state(ServiceTarget::Running);
    let plan = declared::plan(&service, &running, &nothing).await.unwrap();
    let change = plan.service.clone().expect("the command, sent anyway");
    assert_eq!(
        (change.from, change.known),
        (ServiceState::from("unknown"), false)
    );
    assert!(plan.is_empty(), "no known change");
    assert!(plan.has_work(), "an apply sends the command");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn without_a_refresh_the_files_are_compared_with_the_state_alone_and_nothing_is_applied() {
    let emulator = emulator().await;
    let service = service(&emulator).await;
    let declaration = Declaration::new()
        .pipe(pipe("orders", 1))
        .pipe(pipe("events", 1));
    let mut recorded = applied(&service, &declaration).await;
    // Out of band: events is changed on the server, and the state of an older version has no
    // observed form for it.
    let events = recorded.pipes["events"].id;
    emulator
        .patch_pipe(events, &json!({"scaling": {"replicas": 3}}))
        .unwrap();
    recorded.pipes.get_mut("events").unwrap().observed = None;
    emulator.clear_requests();

    let quick = PlanOptions::default().refresh(false);
    let changed = Declaration::new()
        .pipe(pipe("orders", 2))
        .pipe(pipe("events", 1))
        .service_state(ServiceTarget::Running);
    let plan = declared::plan_with(&service, &changed, &recorded, &quick)
        .await
        .unwrap();
    assert!(emulator.requests().into_entries().is_empty(), "no call");
    assert_eq!((plan.reads, plan.is_refreshed()), (0, false));
    assert_eq!(
        names(plan.actions.iter()),
        [(ActionKind::Replace, "orders")]
    );
    let change = &plan.actions[0].changes[0];
    assert_eq!(
        (change.path.as_str(), change.old.clone(), change.new.clone()),
        ("scaling.replicas", Some(json!(1)), Some(json!(2)))
    );
    assert_eq!(
        plan.unchanged,
        ["events"],
        "the server's change is not seen"
    );
    let service_change = plan.service.clone().expect("not read, so not known");
    assert!(!service_change.known);

    let refused = apply_saved(&service, &recorded, &plan).await.0.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("(refresh off), so it cannot tell a pipe gone, failed"),
        "{refused}"
    );
    assert!(
        emulator.requests().into_entries().is_empty(),
        "nothing was sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_targeted_plan_reads_and_acts_on_its_names_alone() {
    let emulator = emulator().await;
    let service = service(&emulator).await;
    let declaration = Declaration::new()
        .pipe(pipe("orders", 1))
        .pipe(pipe("events", 1))
        .pipe(pipe("crm", 1));
    let recorded = applied(&service, &declaration).await;
    let changed = Declaration::new()
        .pipe(pipe("orders", 2))
        .pipe(pipe("crm", 2))
        .pipe(pipe("new", 1));
    emulator.clear_requests();

    let only = PlanOptions::default().target("orders").target("events");
    let plan = declared::plan_with(&service, &changed, &recorded, &only)
        .await
        .unwrap();
    assert_eq!(
        names(plan.actions.iter()),
        [
            (ActionKind::Delete, "events"),
            (ActionKind::Replace, "orders")
        ]
    );
    assert!(plan.unchanged.is_empty());
    assert_eq!(plan.reads, 2);
    let read: Vec<String> = emulator
        .requests()
        .of(OperationId::GetPipe)
        .iter()
        .map(|r| r.path.rsplit('/').next().unwrap().to_string())
        .collect();
    let mut expected = vec![
        recorded.pipes["orders"].id.to_string(),
        recorded.pipes["events"].id.to_string(),
    ];
    let mut read = read;
    read.sort();
    expected.sort();
    assert_eq!(read, expected, "crm is not read");

    let (report, now) = apply_saved(&service, &recorded, &plan).await;
    let report = report.unwrap();
    assert!(report.is_complete(), "{report:?}");
    let now = now.unwrap();
    assert_eq!(now.pipes["crm"], recorded.pipes["crm"], "crm is untouched");
    assert!(!now.pipes.contains_key("events") && !now.pipes.contains_key("new"));
    let rest = declared::plan(&service, &changed, &now).await.unwrap();
    assert_eq!(
        names(rest.actions.iter()),
        [(ActionKind::Replace, "crm"), (ActionKind::Create, "new")]
    );

    let unknown = declared::plan_with(
        &service,
        &changed,
        &recorded,
        &PlanOptions::default().target("orders").target("nope"),
    )
    .await
    .unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "no pipe is declared or recorded under the target name nope"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_pipe_left_down_outside_the_targets_counts_against_max_unavailable() {
    let emulator = emulator().await;
    let service = service(&emulator).await;
    let declaration = Declaration::new()
        .pipe(pipe("orders", 1))
        .pipe(pipe("events", 1));
    let mut recorded = applied(&service, &declaration).await;
    // A replace of events began and did not finish: events is down.
    recorded.pipes.get_mut("events").unwrap().replacing =
        Some("2030-01-01T00:00:00Z".parse().unwrap());
    let orders = recorded.pipes["orders"].id;
    let changed = Declaration::new()
        .pipe(pipe("orders", 2))
        .pipe(pipe("events", 1));

    let plan = declared::plan_with(
        &service,
        &changed,
        &recorded,
        &PlanOptions::default().target("orders"),
    )
    .await
    .unwrap();
    assert_eq!(
        names(plan.actions.iter()),
        [(ActionKind::Replace, "orders")]
    );
    let report = apply_saved(&service, &recorded, &plan).await.0.unwrap();
    let declared::Outcome::Skipped(why) = &report.actions[0].outcome else {
        panic!("the replace waits for events: {report:?}");
    };
    assert!(why.contains("1 declared pipe is down"), "{why}");
    assert!(
        emulator
            .pipes()
            .iter()
            .any(|p| p.id == orders && !p.deleted),
        "orders is not taken down while events is"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn an_integer_written_as_a_float_in_an_answer_is_readable_and_no_change() {
    let emulator = emulator().await;
    let service = service(&emulator).await;
    let declaration = Declaration::new().pipe(pipe("orders", 2));
    let recorded = applied(&service, &declaration).await;
    let orders = recorded.pipes["orders"].id;
    emulator
        .set_raw_overlay(
            orders,
            json!({"scaling": {"replicas": 2.0, "concurrency": 1.0}}),
        )
        .unwrap();
    let read = service.pipe(orders).get().await.unwrap().into_inner();
    assert_eq!(read.scaling.replicas, Some(2));
    let plan = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    assert!(plan.unreadable().next().is_none(), "{:?}", plan.actions);
    assert!(plan.is_empty(), "{:?}", plan.actions);
    assert!(plan.drift.is_empty(), "{:?}", plan.drift);
}
