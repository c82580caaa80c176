//! The tables, in Markdown: ratios against the floor of the same run, with the medians behind them.

use std::fmt::Write;

use crate::clients::Variant;
use crate::emulator::Figures;
use crate::sdk::{Figure, Measure};

/// The SDK table: one line per figure, one column per client (ratios to the floor), the facade's
/// target last (against the floor, the generated client, or the vendor's crate where it has the
/// call).
pub fn sdk(figures: &[Figure]) -> String {
    let mut out = String::new();
    out.push_str("| figure | facade (api-mgmt/api-obs) | generated client alone | hand-written reqwest + serde (floor) | vendor crate (clickhouse-cloud-api) | facade target |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for figure in figures {
        let cells: Vec<String> = Variant::ALL
            .iter()
            .map(|&v| {
                if !figure.samples.has(v) {
                    return "-".to_string();
                }
                let value = figure.samples.median(v);
                format!(
                    "{:.2}x ({})",
                    figure.samples.ratio(v),
                    amount(figure.measure, value)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            figure.name,
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            target(figure)
        );
    }
    out
}

/// The target cell: the facade's ratio against what it is compared with, the target, the verdict.
fn target(figure: &Figure) -> String {
    let sign = match figure.measure {
        Measure::PerCall => "<=",
        Measure::Throughput => ">=",
    };
    let against = match figure.against {
        Variant::Peer => "vendor crate",
        Variant::Generated => "generated",
        _ => "floor",
    };
    match (figure.target_ratio(), figure.met()) {
        (Some(ratio), Some(met)) => format!(
            "/ {against}: {ratio:.2}x {sign} {:.2}x: {}",
            figure.target,
            if met { "met" } else { "NOT met" }
        ),
        _ => format!(
            "/ {against} {sign} {:.2}x: not measured (build with --features peer)",
            figure.target
        ),
    }
}

/// The CPU table: CPU time of the client's process (the canned server runs in its own) per call, as
/// ratios to the floor; the same figures as [`sdk`], less sensitive to other work on the machine.
/// Empty when the platform does not report it.
pub fn sdk_cpu(figures: &[Figure]) -> String {
    let mut out = String::new();
    out.push_str(
        "| CPU time per call (client process) | facade | generated client alone | floor | vendor crate |\n",
    );
    out.push_str("|---|---|---|---|---|\n");
    for figure in figures {
        let mut cells = Vec::new();
        for v in Variant::ALL {
            if !figure.samples.has(v) {
                cells.push("-".to_string());
                continue;
            }
            let (Some(ratio), Some(value)) =
                (figure.samples.cpu_ratio(v), figure.samples.cpu_median(v))
            else {
                return String::new();
            };
            cells.push(format!("{ratio:.2}x ({})", micros(value)));
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            figure.name, cells[0], cells[1], cells[2], cells[3]
        );
    }
    out
}

/// The emulator table: in memory, with a data directory, and their ratio.
pub fn emulator(memory: &Figures, data_dir: &Figures) -> String {
    let mut out = String::new();
    out.push_str("| emulator | in memory | with --data-dir | data-dir / memory |\n");
    out.push_str("|---|---|---|---|\n");
    let (m, d) = (memory, data_dir);
    let (m_start, d_start) = (m.startup.as_secs_f64(), d.startup.as_secs_f64());
    let lines = [
        (
            "start-up (to the first answer)",
            millis(m_start),
            millis(d_start),
            d_start / m_start,
        ),
        (
            "reads (getPipe), 32 callers",
            per_second(m.reads_per_second),
            per_second(d.reads_per_second),
            d.reads_per_second / m.reads_per_second,
        ),
        (
            "creates (createPipe), 32 callers",
            per_second(m.creates_per_second),
            per_second(d.creates_per_second),
            d.creates_per_second / m.creates_per_second,
        ),
    ];
    for (name, in_memory, with_dir, ratio) in lines {
        let _ = writeln!(out, "| {name} | {in_memory} | {with_dir} | {ratio:.2}x |");
    }
    out
}

/// The fleet table: served rate and 429s per store and process count, then the SIGKILL stalls.
pub fn fleet(
    rows: &[crate::fleet::Row],
    stalls: &[crate::fleet::Stall],
    plan: crate::fleet::Plan,
) -> String {
    let mut out = format!(
        "Processes sharing one key, the emulator binary limiting it to {} requests per second (goal: \
         at least 0.95 of the limit and no 429 with the host and Redis stores)\n\n",
        plan.limit
    );
    out.push_str("| store | processes | served / limit | 429s |\n|---|---|---|---|\n");
    for row in rows {
        out.push_str(&format!(
            "| {} | {} | {:.3} | {} |\n",
            row.store, row.processes, row.fraction, row.throttled
        ));
    }
    out.push_str(
        "\n| store | longest pause after a SIGKILL (4 processes) | pacing interval | stall beyond the \
         pacing (goal: at most one interval) |\n|---|---|---|---|\n",
    );
    let interval = plan.interval();
    for stall in stalls {
        out.push_str(&format!(
            "| {} | {} ms | {} ms | {} ms |\n",
            stall.store,
            stall.longest.as_millis(),
            interval.as_millis(),
            stall.longest.saturating_sub(interval).as_millis()
        ));
    }
    out
}

/// The runs above the server's limit: the share of the server's limit served, the 429s, those after
/// the first block, per minute and per real block.
pub fn below(runs: &[crate::fleet::Below], plan: crate::fleet::Plan) -> String {
    let mut out = format!(
        "Eight processes configured above the limit the emulator binary keeps: {} per second \
         against {} (goal: at least 0.8 of the server's limit, a handful of 429s a minute, one 429 \
         per real block), and 20/2s against 1 per second (goal: at most 3 429s after the first \
         block, at least 0.9 of the server's limit)\n\n",
        plan.limit,
        plan.limit / 2
    );
    out.push_str(
        "| configured | server | store | seconds | served / server's limit | 429s | after the first block | 429s a minute | real blocks | 429s per block |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for run in runs {
        let minutes = run.seconds as f64 / 60.0;
        let per_block = if run.blocks == 0 {
            0.0
        } else {
            run.throttled as f64 / run.blocks as f64
        };
        out.push_str(&format!(
            "| {} | {}/1s | {} | {} | {:.3} | {} | {} | {:.1} | {} | {:.2} |\n",
            run.configured,
            run.server,
            run.store,
            run.seconds,
            run.fraction,
            run.throttled,
            run.after_first,
            run.throttled as f64 / minutes,
            run.blocks,
            per_block
        ));
    }
    out
}

fn amount(measure: Measure, value: f64) -> String {
    match measure {
        Measure::PerCall => micros(value),
        Measure::Throughput => per_second(value),
    }
}

fn micros(seconds: f64) -> String {
    let us = seconds * 1e6;
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

fn millis(seconds: f64) -> String {
    format!("{:.1} ms", seconds * 1000.0)
}

fn per_second(value: f64) -> String {
    format!("{value:.0}/s")
}

/// The declared pipes' cost in calls.
pub fn declared(f: &crate::declared::Figures, plan: crate::declared::Plan) -> String {
    let seconds = |d: std::time::Duration| format!("{:.2} s", d.as_secs_f64());
    format!(
        "Declared pipes, {pipes} new pipes applied under a limit of {limit} per {window} (parallelism {parallelism}):\n\
         | figure | value |\n|---|---|\n\
         | apply: wall time (its plan included) | {apply} |\n\
         | apply: floor the key allows the {needed} calls it needs (bursts of {limit} per {window}: its other calls, a create and a read per pipe once it runs) | {floor} |\n\
         | apply: wall time / floor | {ratio:.2}x |\n\
         | apply: calls | {calls}: {creates} creates, {polls} waiting polls ({per_pipe:.2} per pipe), {other} other |\n\
         | apply: 429s | {throttled} |\n\
         | plan of the {pipes} recorded pipes: reads, writes | {reads}, {writes} ({plan_time}) |\n",
        pipes = f.pipes,
        parallelism = f.parallelism,
        limit = plan.limit,
        window = seconds(plan.window),
        apply = seconds(f.apply),
        floor = seconds(f.floor),
        ratio = f.apply.as_secs_f64() / f.floor.as_secs_f64(),
        calls = f.calls,
        needed = f.calls - f.polls + f.pipes,
        per_pipe = f.polls as f64 / f.pipes as f64,
        creates = f.creates,
        polls = f.polls,
        other = f.calls - f.creates - f.polls,
        throttled = f.throttled,
        reads = f.plan_reads,
        writes = f.plan_writes,
        plan_time = seconds(f.plan_time),
    )
}

/// The same apply with its state in each store: wall time against the file store's (the first row).
pub fn stores(rows: &[crate::declared::Figures], plan: crate::declared::Plan) -> String {
    let mut table = format!(
        "Declared pipes' state stores, {pipes} new pipes applied under a limit of {limit} per {window:.0} s (parallelism 4):\n\
         | store | apply: wall time | against the file store | 429s |\n|---|---|---|---|\n",
        pipes = plan.pipes,
        limit = plan.limit,
        window = plan.window.as_secs_f64(),
    );
    let Some(file) = rows.first() else {
        return table;
    };
    for row in rows {
        table.push_str(&format!(
            "| {} | {:.2} s | {:.3}x | {} |\n",
            row.store,
            row.apply.as_secs_f64(),
            row.apply.as_secs_f64() / file.apply.as_secs_f64(),
            row.throttled
        ));
    }
    table
}

/// A plan of many recorded pipes: its wall and CPU time (Argon2id for each secret).
pub fn plan_cost(c: &crate::declared::PlanCost) -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!(
        "A plan of {pipes} recorded pipes with {secrets} secrets each (no change, no rate limit, {cores} cores):\n\
         | figure | value |\n|---|---|\n\
         | wall time | {wall:.2} s |\n\
         | CPU time (the process: fingerprints, reads, the emulator's answers) | {cpu:.2} s |\n\
         | CPU time / wall time | {ratio:.2} |\n\
         | reads | {reads} |\n",
        pipes = c.pipes,
        secrets = c.secrets,
        wall = c.wall.as_secs_f64(),
        cpu = c.cpu.as_secs_f64(),
        ratio = c.cpu.as_secs_f64() / c.wall.as_secs_f64(),
        reads = c.reads,
    )
}

/// The spans' cost: the facade's `getPipe` against the generated client, without a subscriber and
/// recording every span.
pub fn traces(
    phases: &(crate::traces::Phase, crate::traces::Phase),
    plan: crate::traces::Plan,
) -> String {
    let (quiet, recorded) = phases;
    let mut out = format!(
        "The spans' cost: getPipe, sequential (median of {} interleaved rounds of {} calls)\n\n",
        plan.rounds, plan.calls
    );
    out.push_str(
        "| subscriber | facade | generated client | facade / generated | spans a call |\n",
    );
    out.push_str("|---|---|---|---|---|\n");
    for (name, phase) in [
        ("none", quiet),
        ("recording (tracing-opentelemetry, in memory)", recorded),
    ] {
        out.push_str(&format!(
            "| {name} | {:.1} µs | {:.1} µs | {:.3}x | {:.1} |\n",
            phase.facade * 1e6,
            phase.generated * 1e6,
            phase.ratio,
            phase.spans_per_call
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_as_a_person_writes_them() {
        assert_eq!(micros(0.000_101_4), "101 µs");
        assert_eq!(micros(0.004_2), "4.20 ms");
        assert_eq!(per_second(15_234.6), "15235/s");
        assert_eq!(millis(0.012_34), "12.3 ms");
    }

    #[test]
    fn the_emulator_table_compares_the_data_directory_with_memory() {
        let memory = Figures {
            startup: std::time::Duration::from_millis(10),
            reads_per_second: 20_000.0,
            creates_per_second: 5_000.0,
        };
        let data_dir = Figures {
            startup: std::time::Duration::from_millis(15),
            reads_per_second: 20_000.0,
            creates_per_second: 1_000.0,
        };
        let table = emulator(&memory, &data_dir);
        assert!(
            table.contains("| start-up (to the first answer) | 10.0 ms | 15.0 ms | 1.50x |"),
            "{table}"
        );
        assert!(
            table.contains("| creates (createPipe), 32 callers | 5000/s | 1000/s | 0.20x |"),
            "{table}"
        );
    }
}
