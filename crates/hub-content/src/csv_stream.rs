//! CSV of a whole-dataset read (`pagesize=-1` with `format=csv` or `Accept: text/csv`):
//! rows are flattened as the store's batches arrive and spooled (in memory up to
//! [`SPOOL_MEMORY`], beyond that in an unnamed temporary file), then written out once the
//! last row has fixed the header (the union of every row's keys, as on a page). Memory
//! stays at one batch plus the spool's memory part, whatever the number of rows.
//!
//! Owns: the spool and the streamed CSV body. Must not: decide columns or quoting (that is
//! [`crate::csv`]), decide what the caller may see ([`crate::whole`] hands over the
//! reduced documents) or touch SQL.

use std::fs::File;
use std::io::{BufReader, BufWriter, Cursor, Read, Seek, Write};

use axum::body::Body;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use hub_store::StoreError;

use crate::csv::{line_end, RowWriter};
use crate::error::ContentError;
use crate::params::Projection;
use crate::shape::shaped;
use crate::whole::{StreamedList, VisibleDocs};

/// Spooled lines kept in memory before they move to a temporary file: enough for the
/// 12,000 articles of a scale-10 store to pass the disk with less than half their CSV
/// (writing the spool out and reading it back was a tenth of a CSV's time at 4 MiB),
/// small next to the server's budget.
pub const SPOOL_MEMORY: usize = 16 << 20;

/// Bytes per chunk of the body.
const CHUNK: usize = 64 << 10;

/// Every row of `docs` as CSV in a streamed body. A failure while the rows are read (the
/// store, a document) is the answer's error status, since nothing has been sent yet.
pub async fn csv_response(
    docs: VisibleDocs,
    projection: Projection,
) -> Result<Response, ContentError> {
    let handle = tokio::runtime::Handle::current();
    let mut docs = docs;
    let spooled = tokio::task::spawn_blocking(move || {
        spool_rows(|| handle.block_on(docs.next()), &projection, SPOOL_MEMORY)
    })
    .await
    .map_err(|e| StoreError::Task(e.to_string()))??;
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(2);
    tokio::task::spawn_blocking(move || {
        if let Err(e) = spooled.send(|chunk| tx.blocking_send(Ok(chunk)).is_ok()) {
            tracing::error!(error = %e, "CSV of the whole dataset ended early");
            let _ = tx.blocking_send(Err(e));
        }
    });
    // As in `whole::envelope_response`: `poll_recv` may be polled again after the end.
    let mut rx = rx;
    let stream = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let mut response = Body::from_stream(stream).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8; header=present"),
    );
    response.extensions_mut().insert(StreamedList);
    Ok(response)
}

/// Lines of rows whose header is known: each record is the number of columns its line
/// had (`u32`), the line's length (`u32`) and the line without its end.
pub(crate) struct Spooled {
    header: String,
    columns: usize,
    memory: Vec<u8>,
    file: Option<File>,
}

/// Reads every batch `next` gives, shaping and flattening each document; the first
/// error ends the read and is the result.
pub(crate) fn spool_rows(
    mut next: impl FnMut() -> Option<Result<Vec<String>, StoreError>>,
    projection: &Projection,
    memory_limit: usize,
) -> Result<Spooled, StoreError> {
    let spill = |e: std::io::Error| StoreError::Task(format!("spooling CSV rows: {e}"));
    let mut writer = RowWriter::default();
    // Room for the limit and a long row: growing by doubling would reserve twice it.
    let mut memory = Vec::with_capacity(memory_limit.min(SPOOL_MEMORY) + (64 << 10));
    let mut file: Option<BufWriter<File>> = None;
    let mut line = String::new();
    while let Some(batch) = next() {
        for doc in batch? {
            line.clear();
            let had = writer.write_row(&shaped(&doc, projection)?, &mut line)?;
            let (had, len) = match (u32::try_from(had), u32::try_from(line.len())) {
                (Ok(had), Ok(len)) => (had, len),
                _ => return Err(StoreError::Task("a CSV row over 4 GiB".into())),
            };
            memory.extend_from_slice(&had.to_le_bytes());
            memory.extend_from_slice(&len.to_le_bytes());
            memory.extend_from_slice(line.as_bytes());
            if memory.len() > memory_limit {
                let out = match &mut file {
                    Some(out) => out,
                    None => file.insert(BufWriter::new(tempfile::tempfile().map_err(spill)?)),
                };
                out.write_all(&memory).map_err(spill)?;
                memory.clear();
            }
        }
    }
    let file = match file {
        None => None,
        Some(out) => {
            let mut file = out.into_inner().map_err(|e| spill(e.into_error()))?;
            file.rewind().map_err(spill)?;
            Some(file)
        }
    };
    Ok(Spooled {
        header: writer.header(),
        columns: writer.columns(),
        memory,
        file,
    })
}

impl Spooled {
    /// Writes the header and every line in chunks to `send`, which answers false when
    /// the client is gone (the rest is dropped then).
    pub(crate) fn send(self, mut send: impl FnMut(Bytes) -> bool) -> std::io::Result<()> {
        let mut chunk = self.header.into_bytes();
        // The file holds the earlier lines, the memory part the last ones.
        let mut from_file: Box<dyn Read + Send> = match self.file {
            Some(file) => Box::new(BufReader::with_capacity(CHUNK, file)),
            None => Box::new(std::io::empty()),
        };
        for part in [
            &mut from_file as &mut dyn Read,
            &mut Cursor::new(self.memory),
        ] {
            let mut head = [0u8; 8];
            loop {
                match part.read_exact(&mut head) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                    Err(e) => return Err(e),
                }
                let had = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
                let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
                let at = chunk.len();
                chunk.resize(at + len, 0);
                part.read_exact(&mut chunk[at..])?;
                line_end(&mut chunk, had, self.columns);
                if chunk.len() >= CHUNK && !send(Bytes::from(std::mem::take(&mut chunk))) {
                    return Ok(());
                }
            }
        }
        send(Bytes::from(chunk));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn batches(docs: &[serde_json::Value], size: usize) -> Vec<Vec<String>> {
        docs.chunks(size)
            .map(|c| c.iter().map(|d| d.to_string()).collect())
            .collect()
    }

    fn body(spooled: Spooled) -> String {
        let mut out = Vec::new();
        spooled
            .send(|chunk| {
                out.extend_from_slice(&chunk);
                true
            })
            .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn spooled_rows_are_the_page_rendering_in_memory_and_through_a_file() {
        // Later rows bring new columns (the header must wait for them); quoting and
        // nested values as on a page.
        let docs: Vec<serde_json::Value> = (0..2000)
            .map(|i| match i % 4 {
                0 => json!({"Id": format!("a{i}"), "Detail": {"de": {"Title": "Hütte, \"alt\""}}}),
                1 => json!({"Id": format!("b{i}"), "Tags": ["x", "y"], "N": null}),
                2 => json!({"Id": format!("c{i}"), "Text": "line\nbreak"}),
                _ if i > 1500 => json!({"Id": format!("d{i}"), "Late": {"k": [{"L": 1}]}}),
                _ => json!({"Id": format!("d{i}")}),
            })
            .collect();
        let expected = crate::csv::render(&json!({"Items": docs}));
        for memory_limit in [usize::MAX, 0, 10_000] {
            let mut source = batches(&docs, 500).into_iter();
            let spooled = spool_rows(
                || source.next().map(Ok),
                &Projection::default(),
                memory_limit,
            )
            .unwrap();
            assert_eq!(
                spooled.file.is_some(),
                memory_limit != usize::MAX,
                "{memory_limit}"
            );
            assert_eq!(body(spooled), expected, "memory limit {memory_limit}");
        }
        // No rows: the empty header line, as a page of no items.
        let spooled = spool_rows(|| None, &Projection::default(), 0).unwrap();
        assert_eq!(body(spooled), crate::csv::render(&json!({"Items": []})));
    }

    #[test]
    fn an_error_after_some_batches_is_the_result_not_a_shorter_csv() {
        let docs: Vec<serde_json::Value> = (0..1200).map(|i| json!({"Id": i})).collect();
        let mut source = batches(&docs, 500)
            .into_iter()
            .map(Ok)
            .take(2)
            .chain([Err(StoreError::Unavailable("connection lost".into()))]);
        let result = spool_rows(|| source.next(), &Projection::default(), 0);
        assert!(
            matches!(result, Err(StoreError::Unavailable(_))),
            "the store's error ends the read"
        );
        // A document that is not JSON fails too (never a row skipped).
        let mut source = vec![vec!["{\"Id\": 1}".to_string(), "{\"Id\": ".to_string()]].into_iter();
        assert!(spool_rows(|| source.next().map(Ok), &Projection::default(), 0).is_err());
    }

    #[test]
    fn a_client_that_goes_away_stops_the_sending() {
        let docs: Vec<serde_json::Value> = (0..5000)
            .map(|i| json!({"Id": i, "Text": "x".repeat(100)}))
            .collect();
        let mut source = batches(&docs, 500).into_iter();
        let spooled = spool_rows(|| source.next().map(Ok), &Projection::default(), 0).unwrap();
        let mut chunks = 0;
        spooled
            .send(|_| {
                chunks += 1;
                false
            })
            .unwrap();
        assert_eq!(chunks, 1);
    }
}
