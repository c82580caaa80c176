//! The status and headers of the answer a generated operation received, kept for the caller even when
//! the generated code cannot decode the body (which drops them).

use std::cell::RefCell;
use std::future::Future;

use reqwest::header::HeaderMap;

tokio::task_local! {
    static ANSWER: RefCell<Option<(u16, HeaderMap)>>;
}

/// The generated clients' post hook: called after every exchange, it keeps the answer's status and
/// headers when [`with_answer_headers`] is watching, and does nothing otherwise.
pub fn capture_answer(result: &reqwest::Result<reqwest::Response>) {
    if let Ok(response) = result {
        // Outside a `with_answer_headers` scope there is nowhere to keep them, which is fine.
        let _ = ANSWER.try_with(|slot| {
            *slot.borrow_mut() = Some((response.status().as_u16(), response.headers().clone()));
        });
    }
}

/// Runs one generated operation and returns its result with the status and headers of the answer
/// it received (`None` when no answer came).
pub async fn with_answer_headers<F: Future>(operation: F) -> (F::Output, Option<(u16, HeaderMap)>) {
    ANSWER
        .scope(RefCell::new(None), async move {
            let output = operation.await;
            let answer = ANSWER.with(|slot| slot.borrow_mut().take());
            (output, answer)
        })
        .await
}
