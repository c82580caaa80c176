use std::time::Duration;

use api_mgmt::{
    Client, Credentials, NewPipe, PipeSource, WaitOptions,
    pipes::{Destination, KafkaSource, PipeState},
    services::{OrganizationId, ServiceId},
};

/// Starts the service, creates a Kafka pipe, waits until it runs, and reads it back.
pub async fn first_program(
    api_url: &str,
    (key_id, key_secret): (&str, &str),
    organization: OrganizationId,
    service: ServiceId,
) -> Result<(), api_mgmt::Error> {
    let client = Client::builder(api_url) // or Client::from_env()
        .credentials(Credentials::basic(key_id, key_secret))
        .build()?;
    let service = client.service(organization, service);
    let wait = WaitOptions::default().timeout(Duration::from_secs(300));
    service.start_and_wait(&wait).await?; // waits out a stop still under way

    let new_pipe = NewPipe::builder("orders")
        .source(KafkaSource::new("b-1.kafka.example:9098", "orders").credentials("reader", "pw"))
        .destination(
            Destination::new("default")
                .table("orders")
                .managed_table(true),
        )
        .mapped_column("id", "order_id", "UInt64") // the column and its mapping in one call
        .build()?; // every problem at once, nothing sent
    let pipe = service
        .pipes()
        .create_and_wait(&new_pipe, PipeState::Running, &wait)
        .await?;
    println!("{} ({}) is {}", pipe.name, pipe.id, pipe.state);

    let read = service.pipe(pipe.id).get().await?; // no unwrap: the id is always there
    if let PipeSource::Kafka(kafka) = &read.source {
        println!("reads {} from {}", kafka.topics, kafka.brokers);
    }
    if let Some(cpu) = read.scaling.replica_cpu {
        println!("{cpu} per replica"); // 500m
    }
    Ok(())
}
