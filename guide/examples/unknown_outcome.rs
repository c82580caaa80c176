use api_mgmt::{NewPipe, ServiceHandle, pipes::PipeId};

/// Creates a pipe, and never a second one when the first create's outcome is unknown.
pub async fn create_once(
    service: &ServiceHandle,
    new_pipe: &NewPipe,
    known: &[PipeId],
) -> Result<(), api_mgmt::Error> {
    match service.pipes().create(new_pipe).await {
        Ok(created) => println!("created {}", created.id),
        Err(e) if e.is_outcome_unknown() => {
            // It may exist. The API cannot find it by name: check the pipes you know of (or the
            // console) for one with this name, and create again only once you are sure it is absent.
            for id in known {
                if let Some(pipe) = service.pipe(*id).get_opt().await? {
                    println!("{} is {}", pipe.name, pipe.state);
                }
            }
            return Err(e);
        }
        Err(e) if e.is_retryable() => println!("safe to try again later: {e}"),
        Err(e) => return Err(e),
    }
    Ok(())
}
