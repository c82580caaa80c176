//! The resource handles: a [`Client`] gives [`ServiceHandle`]s, which give [`Pipes`] and
//! [`PipeHandle`]s. Each is re-exported once, where its chapter is: the client and a service at
//! the crate's root, the pipes' handles in [`crate::pipes`].

mod client;
mod pipes;
mod service;

pub use client::Client;
pub use pipes::{PipeHandle, Pipes};
pub use service::ServiceHandle;
