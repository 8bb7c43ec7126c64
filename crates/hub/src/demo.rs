//! Loading the demo dataset into a store, with a progress bar on a terminal.

use std::time::{Duration, Instant};

use hub_demo::{
    content_document_count, content_documents, shape_document_count, shape_documents, DemoOptions,
};
use hub_store::Store;
use indicatif::{ProgressBar, ProgressStyle};

/// What a demo load did.
#[derive(Debug)]
pub struct DemoSummary {
    pub documents: u64,
    pub elapsed: Duration,
}

/// Generates the deterministic demo documents for `scale` and writes them in batches.
/// Blocking: call from a blocking thread or before the runtime serves.
pub fn load_demo(store: &Store, scale: u32) -> anyhow::Result<DemoSummary> {
    load_demo_at(store, scale, chrono::Utc::now())
}

/// [`load_demo`] with the dataset's time anchor given (tests pin it, so dates in the
/// documents do not depend on the day the test runs).
pub fn load_demo_at(
    store: &Store,
    scale: u32,
    anchor: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<DemoSummary> {
    let started = Instant::now();
    let expected = content_document_count(scale) + shape_document_count();
    let bar = ProgressBar::new(expected);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} documents ({eta} left)")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message("loading demo data");
    // Hidden unless loading takes longer than a moment.
    bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());

    let content = store.content();
    let opts = DemoOptions { scale, anchor };
    let mut batch = Vec::with_capacity(5000);
    let mut written = 0u64;
    let mut first_error = None;
    let mut flush = |batch: &mut Vec<(&'static str, serde_json::Value)>, written: &mut u64| {
        if first_error.is_some() || batch.is_empty() {
            batch.clear();
            return;
        }
        let base = *written;
        if let Err(e) = content.put_batch_blocking(batch, &mut |n| bar.set_position(base + n)) {
            first_error = Some(e);
        }
        *written += batch.len() as u64;
        batch.clear();
        if started.elapsed() > Duration::from_millis(700)
            && bar.is_hidden()
            && console_is_terminal()
        {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
    };
    content_documents(&opts, &mut |entity, doc| {
        batch.push((entity, doc));
        if batch.len() == batch.capacity() {
            flush(&mut batch, &mut written);
        }
    });
    // GeoShapes of the demo regions, municipalities and districts (`/v1/GeoShapes`).
    shape_documents(&opts, &mut |entity, doc| batch.push((entity, doc)));
    flush(&mut batch, &mut written);
    bar.finish_and_clear();
    if let Some(e) = first_error {
        return Err(e.into());
    }
    // The demo user `demo`/`demo` (reads closed data) and the demo writer client.
    hub_auth::demo::create_demo_principals(&*store.auth(), &hub_auth::demo::DEMO_WRITABLE)?;
    Ok(DemoSummary {
        documents: written,
        elapsed: started.elapsed(),
    })
}

fn console_is_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal()
}
