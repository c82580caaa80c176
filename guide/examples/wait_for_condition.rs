use api_mgmt::{
    Pipe, WaitOptions,
    pipes::{PipeHandle, PipeState},
    wait::{Condition, WaitFor},
};

/// Waits until the pipe runs on 2 replicas; gives up at once if it fails.
pub async fn wait_until_scaled(pipe: &PipeHandle) -> Result<(), api_mgmt::Error> {
    let running = |p: &Pipe| p.state == PipeState::Running;
    let scaled = |p: &Pipe| p.scaling.replicas == Some(2);
    let target = WaitFor::condition("running on 2 replicas", running.and(scaled))
        .fail_if(|p: &Pipe| p.state.is_failed());
    match pipe.wait_for(target, &WaitOptions::default()).await {
        Ok(pipe) => println!("{} is ready", pipe.name),
        Err(e) if e.is_timeout() => println!("gave up: {e}"), // keeps the last seen pipe
        Err(e) => return Err(e),
    }
    Ok(())
}
