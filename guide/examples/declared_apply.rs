use std::path::Path;

use api_mgmt::declared::{
    self, ApplyOptions, Declaration, DeclaredError, FileStateStore, RecordedState, StateStore,
};
use api_mgmt::{NewPipe, ServiceHandle};

/// Brings the service's pipes to `orders` alone, its state in `state_file`.
pub async fn apply_orders(
    service: &ServiceHandle,
    orders: NewPipe,
    state_file: &Path,
) -> Result<(), DeclaredError> {
    let store = FileStateStore::new(state_file);
    let target = declared::target_of(service);
    let lock = store.lock(&target)?; // one apply per service at a time
    let recorded = store.load()?.unwrap_or_else(|| RecordedState::new(target));
    let plan = declared::plan(service, &Declaration::new().pipe(orders), &recorded).await?;
    let options = ApplyOptions::default().max_unavailable(1);
    let report = plan.apply(&lock, &store, &options).await?;
    println!("complete: {}", report.is_complete());
    Ok(())
}
