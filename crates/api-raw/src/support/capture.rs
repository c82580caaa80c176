//! What the runtime needs around one exchange of a generated operation: headers to add to the
//! request (credentials and user agent, when the caller supplied its own `reqwest::Client`), and the
//! status and headers of the answer, kept for the caller even when the generated code cannot decode
//! the body (which drops them).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use reqwest::header::HeaderMap;

struct Exchange {
    add: Option<Arc<HeaderMap>>,
    answer: Option<(u16, HeaderMap)>,
}

tokio::task_local! {
    static EXCHANGE: RefCell<Exchange>;
}

/// The generated clients' pre hook: adds the headers given to [`with_answer_headers`] that the
/// request does not carry yet; does nothing outside such a scope.
pub fn prepare_request(request: &mut reqwest::Request) {
    let _ = EXCHANGE.try_with(|slot| {
        if let Some(add) = &slot.borrow().add {
            for (name, value) in add.iter() {
                if !request.headers().contains_key(name) {
                    request.headers_mut().insert(name.clone(), value.clone());
                }
            }
        }
    });
}

/// The generated clients' post hook: called after every exchange, it keeps the answer's status and
/// headers when [`with_answer_headers`] is watching, and does nothing otherwise.
pub fn capture_answer(result: &reqwest::Result<reqwest::Response>) {
    if let Ok(response) = result {
        // Outside a `with_answer_headers` scope there is nowhere to keep them, which is fine.
        let _ = EXCHANGE.try_with(|slot| {
            slot.borrow_mut().answer =
                Some((response.status().as_u16(), response.headers().clone()));
        });
    }
}

/// What one exchange gave: the generated operation's result, and the status and headers of the answer
/// it received (`None` when no answer came).
pub type Exchanged<T> = Box<(T, Option<(u16, HeaderMap)>)>;

/// Runs one generated operation, adding `add` to its request (headers it already has win), and
/// returns its result with the status and headers of the answer it received.
///
/// The operation comes boxed: a generated operation's future is large, and every future above it
/// would otherwise hold it whole and copy it at each move (profiled). Box it where it is created,
/// `with_answer_headers(add, Box::pin(client.get_pipe(..)))`, and only a pointer travels.
pub fn with_answer_headers<F: Future + ?Sized>(
    add: Option<Arc<HeaderMap>>,
    operation: Pin<Box<F>>,
) -> impl Future<Output = Exchanged<F::Output>> {
    let exchange = Exchange { add, answer: None };
    EXCHANGE.scope(RefCell::new(exchange), async move {
        let output = operation.await;
        let answer = EXCHANGE.with(|slot| slot.borrow_mut().answer.take());
        // Boxed too: the result is large (a decoded resource), and it leaves through the futures
        // above as a pointer, not as a copy at each level.
        Box::new((output, answer))
    })
}
