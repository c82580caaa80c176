//! The binary's memory under many large requests: the request log keeps at most its budget
//! ([`LOG_BUDGET`] bytes of entries), so nine hundred creates with bodies just under the size the log
//! keeps whole (about 53 MiB in all, three times the budget) leave the process's resident memory
//! grown by about the budget (at most twice it), not by what was sent; so do bodies of many tiny
//! values, and a hundred bodies of a mebibyte, too large for the log to keep.

mod support;

use std::process::Child;

use api_emulator::{LOG_BODY_LIMIT, LOG_BUDGET};
use api_test_support::large_body::large_create_body;
use support::{admin, port, request, spawn};

/// The binary, killed when the test ends however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The resident set size of process `pid`, in bytes (Linux).
fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn post(port: u16, path: &str, authorization: &str, body: &str) -> u16 {
    request(port, "POST", path, authorization, Some(body)).0
}

/// Creates `warm` pipes of about `size` bytes (what every request allocates once is then in the
/// baseline), then `count` more: the bytes those sent, and how much the binary's resident memory
/// grew over them (printed).
fn growth_over_creates(
    port: u16,
    pid: u32,
    path: &str,
    basic: &str,
    size: usize,
    warm: usize,
    count: usize,
) -> (usize, u64) {
    for n in 0..warm {
        let body = large_create_body(&format!("warm-{n}"), size);
        assert_eq!(post(port, path, basic, &body), 200);
    }
    let before = resident_bytes(pid).unwrap();
    let mut sent = 0;
    for n in 0..count {
        let body = large_create_body(&format!("big-{n:03}"), size);
        sent += body.len();
        assert_eq!(post(port, path, basic, &body), 200, "create {n}");
    }
    let after = resident_bytes(pid).unwrap();
    let growth = after.saturating_sub(before);
    eprintln!(
        "{count} creates of about {size} bytes ({sent} bytes): RSS {before} -> {after} (+{growth}), budget {LOG_BUDGET}"
    );
    (sent, growth)
}

/// The binary started on a free port with instant transitions and no rate limit: the running
/// process, its pid and its port; `None` where its memory cannot be read (no `/proc`).
fn started() -> Option<(Running, u32, u16)> {
    let port = port();
    let emulator = Running(spawn(
        &[
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--instant",
            "--no-rate-limit",
        ],
        port,
    ));
    let pid = emulator.0.id();
    resident_bytes(pid)?;
    Some((emulator, pid, port))
}

#[test]
fn nine_hundred_large_creates_grow_the_binary_by_about_its_log_budget() {
    let (basic, service) = admin();
    let path = format!("{service}/pipes");
    let Some((_emulator, pid, port)) = started() else {
        eprintln!("no /proc here: the memory of the binary is not measured");
        return;
    };

    let size = LOG_BODY_LIMIT - 4 * 1024;
    assert!(
        large_create_body("big-000", size).len() < LOG_BODY_LIMIT,
        "kept whole by the log"
    );
    let (sent, growth) = growth_over_creates(port, pid, &path, &basic, size, 20, 900);
    // Three budgets sent: a log that kept them all would break the bound below.
    assert!(sent >= 3 * LOG_BUDGET, "the log had to evict");
    // The budget counts entries as JSON text; held as values they take a little more, and the
    // allocator keeps some of what it freed.
    let bound = 2 * LOG_BUDGET as u64;
    assert!(
        growth <= bound,
        "RSS grew by {growth} bytes after {sent} bytes of requests (bound {bound})"
    );
}

#[test]
fn a_hundred_creates_of_a_mebibyte_grow_the_binary_by_less_than_its_log_budget() {
    let (basic, service) = admin();
    let path = format!("{service}/pipes");
    let Some((_emulator, pid, port)) = started() else {
        eprintln!("no /proc here: the memory of the binary is not measured");
        return;
    };
    let size = 1 << 20;
    assert!(
        large_create_body("big-000", size).len() > LOG_BODY_LIMIT,
        "too large for the log to keep"
    );
    let (sent, growth) = growth_over_creates(port, pid, &path, &basic, size, 1, 100);
    // Six budgets sent: a process that kept the bodies (in its log or anywhere else) would break
    // the bound below.
    assert!(sent >= 6 * LOG_BUDGET);
    let bound = 2 * LOG_BUDGET as u64;
    assert!(
        growth <= bound,
        "RSS grew by {growth} bytes after {sent} bytes of requests (bound {bound})"
    );
}

/// A body of `size` bytes or a little less, of many tiny JSON values: `[[0],[0],...]` or
/// `[{},{},...]`.
fn tiny_values(size: usize, objects: bool) -> String {
    let item = if objects { "{}" } else { "[0]" };
    let count = (size - 2) / (item.len() + 1);
    format!("[{}]", vec![item; count].join(","))
}

#[test]
fn bodies_of_many_tiny_values_keep_the_binary_within_its_log_budget() {
    let (basic, service) = admin();
    let path = format!("{service}/pipes");
    let Some((_emulator, pid, port)) = started() else {
        eprintln!("no /proc here: the memory of the binary is not measured");
        return;
    };
    let size = LOG_BODY_LIMIT - 1024;
    for n in 0..20 {
        // Refused (a create is an object), and logged.
        assert_eq!(
            post(port, &path, &basic, &tiny_values(size, n % 2 == 0)),
            400
        );
    }
    let before = resident_bytes(pid).unwrap();
    let count = 900;
    for n in 0..count {
        let body = tiny_values(size, n % 2 == 0);
        assert!(body.len() < LOG_BODY_LIMIT, "kept whole by the log");
        assert_eq!(post(port, &path, &basic, &body), 400, "request {n}");
    }
    let after = resident_bytes(pid).unwrap();
    let sent = count * size;
    let growth = after.saturating_sub(before);
    eprintln!(
        "{count} bodies of tiny values, {size} bytes each ({sent} bytes): RSS {before} -> {after} (+{growth}), budget {LOG_BUDGET}"
    );
    assert!(sent >= 3 * LOG_BUDGET, "the log had to evict");
    // Held as JSON values, these bodies take about twenty times their text: the budget would be
    // exceeded tenfold.
    let bound = 2 * LOG_BUDGET as u64;
    assert!(
        growth <= bound,
        "RSS grew by {growth} bytes after {sent} bytes of requests (bound {bound})"
    );
}
