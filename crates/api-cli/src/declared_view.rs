//! What `plan`, `apply` and `state list` show: a plan as one line per action and one per changed
//! member, an apply's report as one line per action, in words and in JSON.

use api_mgmt::declared::{
    self, ActionKind, ApplyReport, Cause, Change, Effect, Impact, Outcome, Plan, PlanAction,
    RecordedState,
};
use serde_json::{Value, json};

use crate::render;

/// The plan in words: a summary line, then one line per action and one per changed member.
pub(crate) fn plan_text(plan: &Plan, dir: &str) -> String {
    // A service state the server would not let the plan read: apply sends the command anyway.
    let unread = plan.service.as_ref().filter(|s| !s.known).map(|service| {
        if plan.is_refreshed() {
            format!(
                "  ? service   not read (the server refuses a read without a command): apply sends \
                 `{}`, which changes nothing on a service already {}",
                verb(service.to),
                service.to
            )
        } else {
            format!("  ? service   not read: declared {}", service.to)
        }
    });
    // Without a read, only the files were compared with the state.
    let unrefreshed = (!plan.is_refreshed()).then(|| {
        "  (not refreshed: the files compared with the state alone; the server was not read, so a \
         pipe gone, failed or changed there is not seen)"
            .to_string()
    });
    if plan.is_empty() {
        let none = format!(
            "No changes: the service matches the {} pipe{} declared in {dir}.",
            plan.unchanged.len(),
            if plan.unchanged.len() == 1 { "" } else { "s" }
        );
        let mut lines: Vec<String> = [Some(none), unread, unrefreshed]
            .into_iter()
            .flatten()
            .collect();
        lines.extend(drift_lines(plan));
        return lines.join("\n");
    }
    let mut lines = vec![format!("Plan for {dir}: {}.", summary(plan))];
    match &plan.service {
        Some(service) if service.known => lines.push(format!(
            "  ~ service   {} -> {}",
            service.from.as_str(),
            service.to
        )),
        _ => lines.extend(unread),
    }
    for action in &plan.actions {
        lines.push(action_line(action));
        for change in &action.changes {
            lines.push(change_line(change));
        }
        for impact in &action.impact {
            lines.push(impact_line(impact));
        }
    }
    lines.extend(drift_lines(plan));
    lines.extend(unrefreshed);
    let protected: Vec<&str> = plan.protected().map(|a| a.name.as_str()).collect();
    if !protected.is_empty() {
        lines.push(format!(
            "Refused: {} {} protected (lifecycle protect: true), so no apply of this plan runs; to \
             delete {}, apply `protect: false` first.",
            protected.join(", "),
            if protected.len() == 1 { "is" } else { "are" },
            if protected.len() == 1 { "it" } else { "them" }
        ));
    }
    lines.join("\n")
}

/// The pipes that changed on the server in members their files leave out (shown, not acted on),
/// and those the server writes another way now (no change; an apply records the new forms).
fn drift_lines(plan: &Plan) -> Vec<String> {
    let mut lines = Vec::new();
    for drift in &plan.drift {
        lines.push(format!(
            "  ~ drift     {}  {}  (changed on the server in members its file leaves out: not acted on)",
            drift.name, drift.id
        ));
        lines.extend(drift.changes.iter().map(change_line));
    }
    for respelled in &plan.respelled {
        lines.push(format!(
            "  = respelled {}  {}  (the server writes these values another way now: no change; an apply records the new forms)",
            respelled.name, respelled.id
        ));
        lines.extend(respelled.changes.iter().map(change_line));
    }
    lines
}

/// `2 to create, 1 to replace, 1 pending, 3 unchanged`.
fn summary(plan: &Plan) -> String {
    let count = |kind: ActionKind| plan.actions.iter().filter(|a| a.kind == kind).count();
    let mut parts: Vec<String> = [
        (ActionKind::Create, "to create"),
        (ActionKind::Recreate, "to recreate"),
        (ActionKind::Replace, "to replace"),
        (ActionKind::Record, "to record"),
        (ActionKind::Delete, "to delete"),
        (ActionKind::Forget, "to forget"),
        (ActionKind::Pending, "pending"),
        (ActionKind::Unreadable, "unreadable"),
    ]
    .into_iter()
    .filter_map(|(kind, words)| {
        let n = count(kind);
        (n > 0).then(|| format!("{n} {words}"))
    })
    .collect();
    if let Some(service) = plan.service.as_ref().filter(|s| s.known) {
        parts.insert(0, format!("the service to {}", verb(service.to)));
    }
    parts.push(format!("{} unchanged", plan.unchanged.len()));
    parts.join(", ")
}

/// The command that brings a service to `target`.
fn verb(target: declared::ServiceTarget) -> &'static str {
    match target {
        declared::ServiceTarget::Running => "start",
        _ => "stop",
    }
}

fn action_line(action: &PlanAction) -> String {
    let sign = match action.kind {
        ActionKind::Create | ActionKind::Recreate => '+',
        ActionKind::Replace => '~',
        ActionKind::Record | ActionKind::Forget => '=',
        ActionKind::Delete => '-',
        _ => '!',
    };
    let mut line = format!("  {sign} {:<9} {}", action.kind.to_string(), action.name);
    if let Some(id) = action.id {
        line.push_str(&format!("  {id}"));
    }
    if action.protected {
        line.push_str("  PROTECTED: refused");
    }
    if let Some(note) = &action.note {
        line.push_str(&format!("  ({note})"));
    }
    line
}

/// What an action does to the data: `      data: rows-read-again (source.kafka, "2026-…"): …`.
fn impact_line(impact: &Impact) -> String {
    let value = impact
        .value
        .as_ref()
        .map(|v| format!(" = {v}"))
        .unwrap_or_default();
    format!(
        "      data: {} ({}{value}): {}",
        impact.class, impact.member, impact.says
    )
}

fn change_line(change: &Change) -> String {
    let cause = match (change.cause, change.effect) {
        (Cause::Respelled, _) => "written another way by the server: no change",
        (_, Effect::Record) => "the server has it: recorded only",
        (Cause::Server, Effect::None) => "changed on the server, not declared: not acted on",
        (Cause::Server, _) => "changed on the server",
        _ => "changed in the file",
    };
    format!(
        "      {}: {} -> {}  ({cause})",
        change.path,
        value(change.old.as_ref()),
        value(change.new.as_ref())
    )
}

/// A member's value on one line; an absent one is the server's default.
fn value(value: Option<&Value>) -> String {
    match value {
        None => "(not set)".to_string(),
        Some(Value::String(text)) if text == api_mgmt::redact::REDACTED => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// The apply's results as JSON: one entry per action, and the service's.
pub(crate) fn report_json(report: &ApplyReport) -> Value {
    let results: Vec<Value> = report
        .actions
        .iter()
        .map(|action| {
            let (result, state, error) = match &action.outcome {
                Outcome::Done { state } => ("done", state.as_ref().map(|s| s.to_string()), None),
                Outcome::Failed(e) => ("failed", None, Some(e.to_string())),
                Outcome::OutcomeUnknown(e) => ("outcomeUnknown", None, Some(e.to_string())),
                Outcome::Blocked => ("blocked", None, None),
                Outcome::Skipped(why) => ("skipped", None, Some(why.clone())),
                Outcome::LeaseLost => ("leaseLost", None, None),
                Outcome::Interrupted => ("interrupted", None, None),
                _ => ("other", None, None),
            };
            json!({
                "action": action.kind.to_string(),
                "name": action.name,
                "id": action.id,
                "result": result,
                "state": state,
                "error": error,
            })
        })
        .collect();
    let mut shown = json!({
        "results": results,
        "complete": report.is_complete(),
        "leaseLost": report.lease_lost,
        "interrupted": report.interrupted,
        "state": {"lineage": report.lineage, "serial": report.serial},
    });
    if let Some(service) = &report.service {
        shown["service"] = match service {
            Ok(()) => json!({"result": "done"}),
            Err(e) => json!({"result": "failed", "error": e.to_string()}),
        };
    }
    shown
}

/// The apply's results in words: one line per action.
pub(crate) fn report_text(report: &ApplyReport) -> String {
    let mut lines = vec!["Applied:".to_string()];
    match &report.service {
        Some(Ok(())) => lines.push("  ok      service".to_string()),
        Some(Err(e)) => lines.push(format!("  failed  service: {e}")),
        None => {}
    }
    for action in &report.actions {
        let id = action.id.map(|id| format!(" {id}")).unwrap_or_default();
        let line = match &action.outcome {
            Outcome::Done { state } => {
                let verb = match action.kind {
                    ActionKind::Delete => "deleted",
                    ActionKind::Replace => "replaced",
                    ActionKind::Recreate => "recreated",
                    ActionKind::Record => "recorded",
                    ActionKind::Forget => "forgotten",
                    _ => "created",
                };
                let state = state.as_ref().map(|s| format!(", {s}")).unwrap_or_default();
                format!("  ok      {verb} {}{id}{state}", action.name)
            }
            Outcome::Failed(e) => format!("  failed  {} {}{id}: {e}", action.kind, action.name),
            Outcome::OutcomeUnknown(e) => format!(
                "  pending {} {}: the outcome is unknown ({}); resolve it with `cloudctl state resolve` once you know",
                action.kind,
                action.name,
                declared::short_reason(e)
            ),
            Outcome::Blocked => format!(
                "  pending {}: a create of this name has no known outcome; nothing was sent",
                action.name
            ),
            Outcome::Skipped(why) if !why.is_empty() => {
                format!("  skipped {} {}: {why}", action.kind, action.name)
            }
            Outcome::LeaseLost => format!(
                "  not sent {} {}: this apply's lease may have lapsed",
                action.kind, action.name
            ),
            Outcome::Interrupted => format!(
                "  stopped {} {}{id}: interrupted before it was done",
                action.kind, action.name
            ),
            _ => format!("  skipped {} {}", action.kind, action.name),
        };
        lines.push(line);
    }
    if report.lease_lost {
        lines.push(
            "  The lease of the service may have lapsed (its store did not confirm a renewal in \
             time): nothing more was sent."
                .to_string(),
        );
    }
    lines.push(format!(
        "State: lineage {}, serial {}.",
        report.lineage, report.serial
    ));
    lines.join("\n")
}

/// The recorded state as JSON: the pipes and the pending creates, with no fingerprint.
pub(crate) fn state_json(state: &RecordedState) -> Value {
    let pipes: Vec<Value> = state
        .pipes
        .iter()
        .map(|(name, pipe)| {
            json!({"name": name, "id": pipe.id, "recordedAt": pipe.recorded_at,
                   "lifecycle": pipe.lifecycle})
        })
        .collect();
    let pending: Vec<Value> = state
        .pending
        .iter()
        .map(|(name, pending)| {
            json!({"name": name, "startedAt": pending.started_at, "intentId": pending.intent_id,
                   "requestId": pending.request_id, "reason": pending.reason})
        })
        .collect();
    json!({"target": state.target, "lineage": state.lineage, "serial": state.serial,
           "pipes": pipes, "pending": pending})
}

/// The recorded state as a table.
pub(crate) fn state_text(state: &RecordedState) -> String {
    let generation = format!("State {}.", state.generation());
    if state.pipes.is_empty() && state.pending.is_empty() {
        return format!("{generation}\nThe state records no pipe yet.");
    }
    let time = |t: &chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    let mut rows: Vec<Vec<String>> = state
        .pipes
        .iter()
        .map(|(name, pipe)| {
            vec![
                name.clone(),
                pipe.id.to_string(),
                match (pipe.replacing.is_some(), pipe.lifecycle.is_default()) {
                    (true, _) => "being replaced".into(),
                    (false, true) => "recorded".into(),
                    (false, false) => format!("recorded, {}", pipe.lifecycle),
                },
                time(&pipe.recorded_at),
            ]
        })
        .collect();
    rows.extend(state.pending.iter().map(|(name, pending)| {
        vec![
            name.clone(),
            "-".into(),
            "pending create".into(),
            time(&pending.started_at),
        ]
    }));
    format!(
        "{generation}\n{}",
        render::table(&["NAME", "PIPE ID", "STATUS", "SINCE"], rows)
    )
}
