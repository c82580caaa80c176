//! The redaction rule's memory is a small multiple of the text, whatever the number of secrets: an
//! 8 MiB text searched for 20 secrets, in the form that made the old rule remember every failed
//! start for every secret (a text where many positions may begin each secret, and none does: it
//! failed this test after 450 s of a debug build; the rule now holds the output's copy and little
//! more).
//! Measured as the process's peak resident memory (Linux: `VmHWM`, reset through `clear_refs`)
//! while `Redactor::text` runs, against its resident memory before; the binary holds this one test.

#![cfg(target_os = "linux")]

use api_raw::support::redact::Redactor;

const MIB: u64 = 1 << 20;

/// A `kB` line of `/proc/self/status`, in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|line| line.starts_with(field))
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"));
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|kib| kib.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    kib * 1024
}

#[test]
fn redacting_8_mib_for_20_secrets_holds_at_most_a_few_times_the_text() {
    // Twenty secrets that all begin `sk-`, then differ; the text is `sk-xyz` over and over (each
    // `s` may begin every secret, and none does), then each secret once. (An escape byte in every
    // few makes the debug build take minutes: what the search remembers there, and forgets, is
    // counted by the unit test `the_search_forgets_what_lies_behind_its_start`.)
    let secrets: Vec<String> = (0..20).map(|i| format!("sk-{i:02}-live-7f3a9c")).collect();
    let mut text = "sk-xyz".repeat((8 * MIB / 6) as usize);
    for secret in &secrets {
        text.push_str(secret);
    }
    let redactor = secrets
        .iter()
        .fold(Redactor::new(), |redactor, secret| redactor.secret(secret));
    // The peak is counted from here (Linux 4.0 and later: 5 resets VmHWM to the resident set).
    std::fs::write("/proc/self/clear_refs", "5").expect("clear_refs");
    let before = status_bytes("VmRSS:");
    let out = redactor.text(&text);
    let peak = status_bytes("VmHWM:").saturating_sub(before);
    assert_eq!(
        out.matches("[REDACTED]").count(),
        20,
        "each secret once, nothing else"
    );
    let size = text.len() as u64;
    eprintln!(
        "peak resident growth while redacting {:.1} MiB for 20 secrets: {:.1} MiB ({:.2}x the text)",
        size as f64 / MIB as f64,
        peak as f64 / MIB as f64,
        peak as f64 / size as f64
    );
    assert!(
        peak <= 3 * size,
        "{peak} bytes at the peak for a text of {size}"
    );
}
