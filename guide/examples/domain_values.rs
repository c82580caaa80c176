use api_mgmt::{
    Pipe,
    pipes::PipeState,
    wait::{Condition, WaitFor},
};

/// A waiter's condition, unit-tested with pipes written as the API writes them: no HTTP.
pub fn condition_from_fixtures() {
    let running = |p: &Pipe| p.state == PipeState::Running;
    let two_replicas = |p: &Pipe| p.scaling.replicas == Some(2);
    let target = WaitFor::condition("running on 2 replicas", running.and(two_replicas))
        .fail_if(|p: &Pipe| p.state.is_failed());
    let pipe = |state: &str, replicas: u32| -> Pipe {
        serde_json::from_value(serde_json::json!({
            "id": "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d",
            "serviceId": "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
            "name": "orders",
            "state": state,
            "scaling": {"replicas": replicas, "replicaCpuMillicores": "500m"},
        }))
        .expect("the API's shape")
    };
    assert!(target.is_done(&pipe("Running", 2)));
    assert!(!target.is_done(&pipe("Running", 1)) && !target.is_failed(&pipe("Running", 1)));
    assert!(target.is_failed(&pipe("InternalError", 2)));
    assert!(serde_json::from_value::<Pipe>(serde_json::json!({"name": "no id"})).is_err());
}
