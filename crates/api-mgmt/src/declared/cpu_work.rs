//! CPU work off the async runtime: each secret's Argon2id fingerprint takes tens of milliseconds
//! (19 MiB, two passes), so a plan of hundreds of pipes fingerprints them on blocking threads, on
//! every core at once, never on a thread that drives calls.

use std::num::NonZeroUsize;
use std::sync::Mutex;

/// The runtime shut down before the work could run (nothing awaits its answer any more).
#[derive(Debug)]
pub(crate) struct ShutDown;

/// `work` applied to each of `items`, in the items' order: on one of tokio's blocking threads and
/// as many more threads as the machine has cores (no more than there are items). Each thread takes
/// the next item when it is done with one, so a pipe with many secrets does not hold back the
/// others' share, and each has a scratch `S` of its own (made with `S::default()`, dropped when the
/// thread is done) that `work` is given with every item, for what is worth keeping from one item to
/// the next (Argon2's working memory). Outside a tokio runtime the work runs on the caller's thread,
/// and where the OS gives fewer threads, on those it gives. A panic of `work` is the caller's.
pub(crate) async fn on_every_core<T, R, S, F>(items: Vec<T>, work: F) -> Result<Vec<R>, ShutDown>
where
    T: Send + 'static,
    R: Send + 'static,
    S: Default,
    F: Fn(&mut S, T) -> R + Send + Sync + 'static,
{
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let run = move || all_of(items, &work);
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return Ok(run());
    };
    match runtime
        .spawn_blocking(run)
        .await
        .map_err(|e| e.try_into_panic())
    {
        Ok(results) => Ok(results),
        Err(Ok(panic)) => std::panic::resume_unwind(panic),
        Err(Err(_)) => Err(ShutDown),
    }
}

/// `work` on each of `items` on this thread and up to one helper per further core, each thread with
/// its scratch.
fn all_of<T: Send, R: Send, S: Default>(
    items: Vec<T>,
    work: &(impl Fn(&mut S, T) -> R + Sync),
) -> Vec<R> {
    let helpers = std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(items.len())
        - 1;
    let count = items.len();
    let queue = Mutex::new(items.into_iter().enumerate());
    let next = || {
        queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .next()
    };
    let worker = || {
        let mut scratch = S::default();
        let mut mine = Vec::new();
        while let Some((i, item)) = next() {
            mine.push((i, work(&mut scratch, item)));
        }
        mine
    };
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        // A helper the OS will not start leaves its share to the others.
        let started: Vec<_> = (0..helpers)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, worker).ok())
            .collect();
        let mut done = worker();
        for helper in started {
            done.extend(
                helper
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
        }
        done
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    debug_assert_eq!(done.len(), count);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::{all_of, on_every_core};

    #[tokio::test(flavor = "current_thread")]
    async fn every_item_is_worked_once_and_answered_in_order() {
        let main = std::thread::current().id();
        let results = on_every_core((0..100u64).collect(), move |_: &mut (), i| {
            (i * i, std::thread::current().id() != main)
        })
        .await
        .unwrap();
        let squares: Vec<u64> = results.iter().map(|(s, _)| *s).collect();
        assert_eq!(squares, (0..100u64).map(|i| i * i).collect::<Vec<_>>());
        assert!(
            results.iter().all(|(_, off)| *off),
            "none on the runtime's thread"
        );
        assert!(
            on_every_core(Vec::<u8>::new(), |_: &mut (), x| x)
                .await
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn outside_a_runtime_the_work_runs_all_the_same() {
        use std::future::Future as _;
        let mut future = std::pin::pin!(on_every_core(vec![1, 2, 3], |_: &mut (), i: u32| i * 10));
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let std::task::Poll::Ready(results) = future.as_mut().poll(&mut cx) else {
            panic!("outside a runtime the work is done at once");
        };
        assert_eq!(results.unwrap(), [10, 20, 30]);
        assert_eq!(all_of(vec!["a"], &|_: &mut (), s: &str| s.len()), [1]);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn each_thread_keeps_its_scratch_from_one_item_to_the_next() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Each item answers how many items its thread's scratch has seen, itself included.
        let seen = on_every_core((0..64u8).collect(), |count: &mut usize, _| {
            *count += 1;
            *count
        })
        .await
        .unwrap();
        let threads = seen.iter().filter(|&&n| n == 1).count();
        assert!(
            (1..=cores).contains(&threads),
            "one fresh scratch per thread, not per item: {threads} fresh for {cores} cores"
        );
        assert_eq!(seen.len(), 64);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_panic_of_the_work_is_the_callers() {
        let worked = tokio::spawn(on_every_core(vec![1, 2, 3], |_: &mut (), i: u8| {
            assert!(i != 2, "the work of item {i} panics");
            i
        }));
        // A hang never ends; the panic's own report can take seconds (with `RUST_BACKTRACE=1`,
        // symbolising the test binary while seven other tests fingerprint on every core: a run
        // took more than 10 s), so the bound is generous.
        let joined = tokio::time::timeout(std::time::Duration::from_secs(120), worked)
            .await
            .expect("the panic ends the call, it does not hang");
        let panic = joined
            .expect_err("the panic reaches the caller")
            .into_panic();
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        assert_eq!(message, "the work of item 2 panics");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn items_run_on_several_threads_at_once_where_there_are_cores() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::{Arc, Barrier};
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cores < 2 {
            return; // one core: nothing runs at once, and nothing can show it does
        }
        // Two items that each wait for the other: they finish only if they run at once.
        let barrier = Arc::new(Barrier::new(2));
        let met = Arc::new(AtomicUsize::new(0));
        let (b, m) = (barrier.clone(), met.clone());
        on_every_core(vec![(), ()], move |_: &mut (), ()| {
            b.wait();
            m.fetch_add(1, Ordering::SeqCst);
        })
        .await
        .unwrap();
        assert_eq!(met.load(Ordering::SeqCst), 2);
    }
}
