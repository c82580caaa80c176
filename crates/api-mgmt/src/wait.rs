//! Waiting for a service or a pipe: named targets ([`WaitFor`]), conditions that combine
//! ([`Condition`], [`And`], [`Or`], [`Not`]) and what a wait that ends badly says ([`WaitError`]).
//! How long and how often is [`WaitOptions`](crate::WaitOptions).

pub use api_core::management::{
    And, Condition, Not, Or, ServiceWait, WaitError, WaitFor, wait_for_pipe, wait_for_pipe_gone,
    wait_for_service,
};
