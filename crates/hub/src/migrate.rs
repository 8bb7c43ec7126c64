//! `hub migrate --from sqlite:DIR --to postgres://…`: copies the embedded store into
//! PostgreSQL with a progress bar and a per-table summary. The copy itself (resumable,
//! verified) is `hub_store::copy`; this module checks the arguments and reports.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use hub_store::copy::{copy_sqlite_to_postgres, CopyProgress};
use hub_store::postgres::redact;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(clap::Args)]
pub struct MigrateArgs {
    /// The embedded store to copy, as `sqlite:DIR` (DIR holds `hub.sqlite3`). Stop the
    /// server using it first: the source must not change until the copy is finished.
    #[arg(long, value_name = "sqlite:DIR")]
    from: String,
    /// The PostgreSQL database to fill (`postgres://…` or `postgresql://…`). It must
    /// exist and be empty, or hold an unfinished copy of the same store, which is resumed.
    #[arg(long, value_name = "URL", env = "HUB_DATABASE", hide_env_values = true)]
    to: String,
}

/// Runs the copy; any failure is an error with the (redacted) target in its message.
pub fn run(args: MigrateArgs) -> anyhow::Result<()> {
    let dir = match args.from.strip_prefix("sqlite:") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => bail!(
            "--from must be sqlite:DIR (the directory of the embedded store), not {:?}",
            args.from
        ),
    };
    if !dir.join("hub.sqlite3").is_file() {
        bail!(
            "--from {}: no Hub store there ({} does not exist)",
            args.from,
            dir.join("hub.sqlite3").display()
        );
    }
    if !(args.to.starts_with("postgres://") || args.to.starts_with("postgresql://")) {
        bail!(
            "--to must be a PostgreSQL URL (postgres://… or postgresql://…), not {:?}",
            redact(&args.to)
        );
    }
    let target = redact(&args.to);
    eprintln!("copying {} to {target}", dir.display());

    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:24} [{bar:40}] {pos}/{len} rows ({per_sec}, {eta} left)",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    if std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(250));
    }
    let started = Instant::now();
    let result = copy_sqlite_to_postgres(&dir, &args.to, &mut |p| match p {
        CopyProgress::Start {
            total_rows,
            already_copied,
            resuming,
        } => {
            bar.set_length(total_rows);
            bar.set_position(already_copied);
            bar.reset_eta();
            if resuming {
                bar.println(format!("resuming an interrupted copy: {already_copied} of {total_rows} rows are already there"));
            }
        }
        CopyProgress::Rows { table, copied } => {
            bar.set_message(table);
            bar.set_position(copied);
        }
        CopyProgress::Step(step) => bar.set_message(step),
    });
    bar.finish_and_clear();
    let report = match result {
        Ok(report) => report,
        // A refusal or a schema mismatch: running again would not help.
        Err(e @ hub_store::StoreError::Config(_)) => {
            return Err(e).with_context(|| format!("cannot copy {} to {target}", dir.display()))
        }
        Err(e) => {
            return Err(e).with_context(|| {
                format!(
                    "copying {} to {target} failed; run the same command again to resume",
                    dir.display()
                )
            })
        }
    };

    println!(
        "{:<24} {:>10} {:>11} {:>9} {:>9}",
        "table", "rows", "copied now", "seconds", "rows/s"
    );
    for t in &report.tables {
        let rate = if t.seconds > 0.0 {
            (t.copied_now as f64 / t.seconds).round() as u64
        } else {
            0
        };
        println!(
            "{:<24} {:>10} {:>11} {:>9.1} {:>9}",
            t.table, t.rows, t.copied_now, t.seconds, rate
        );
    }
    if !report.skipped_tables.is_empty() {
        println!(
            "not copied (no such table in PostgreSQL): {}",
            report.skipped_tables.join(", ")
        );
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "copied {} rows ({} in this run) to {target} in {seconds:.1} s ({:.0} rows/s); row counts verified, sequences reset, tables analyzed",
        report.total_rows(),
        report.copied_now(),
        report.copied_now() as f64 / seconds.max(0.001),
    );
    if report.resumed {
        println!(
            "resumed an interrupted copy ({} rows had been copied before)",
            report.resumed_rows
        );
    }
    Ok(())
}
