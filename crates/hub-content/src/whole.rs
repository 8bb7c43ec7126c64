//! Reading every document of a query without holding them: the whole-dataset list
//! (`pagesize=-1`, the reference's "all" page size, for consumers such as a DATEX
//! publisher) and the folds over every match (`Distinct`).
//!
//! Owns: [`stream_visible`], the one way a whole-collection read reaches the store (the
//! query held to [`crate::closed_query::open_query`] and every document reduced for a
//! caller without the reading role, exactly as [`crate::closed::list_visible`] does for a
//! page), and the streamed list envelope. Must not: touch SQL (the cursor is
//! `hub_store::ContentRepo::stream`) or parse parameters.

use axum::body::Body;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use hub_model::EntityType;
use hub_query::content::ContentQuery;
use hub_store::{Batches, ContentRepo, StoreError};

use crate::error::ContentError;
use crate::params::Projection;
use crate::shape::{shaped, Envelope};

/// Every document a query matches, as this caller may see them, in batches.
pub struct VisibleDocs {
    pub total: u64,
    docs: Batches<String>,
    /// The entity whose closed parts are removed from each document, when the caller
    /// may not read them. Decided when the stream starts (the caller's access is a
    /// task-local of the request, and the stream may outlive the handler's task).
    reduce: Option<&'static str>,
}

impl VisibleDocs {
    /// The next batch of stored texts (reduced when the caller may not see closed parts).
    pub async fn next(&mut self) -> Option<Result<Vec<String>, StoreError>> {
        let batch = self.docs.next().await?;
        Some(batch.and_then(|docs| {
            match self.reduce {
                None => Ok(docs),
                Some(entity) => docs
                    .iter()
                    .map(|d| crate::closed::reduce(entity, d))
                    .collect(),
            }
        }))
    }
}

impl VisibleDocs {
    /// Stops reducing each document when what the caller reads of it (`tree`, the keys
    /// a pruned parse builds; `None` reads everything) lies outside every part the
    /// reduction removes or marks: the values read are the same either way, and the
    /// reduction copies each document (when it parsed and wrote each one whole, `Distinct`
    /// over every accommodation spent most of its 1.8 s there).
    pub(crate) fn reading(mut self, tree: Option<&crate::pruned_parse::KeyTree>) -> Self {
        if let (Some(entity), Some(tree)) = (self.reduce, tree) {
            if !tree.reaches_reduced(entity) {
                self.reduce = None;
            }
        }
        self
    }
}

/// Starts reading every document `query` matches (its page is ignored) as the caller
/// may see them: must run inside the request's [`crate::closed::with_access`].
pub async fn stream_visible(
    repo: &dyn ContentRepo,
    entity: &EntityType,
    query: ContentQuery,
) -> Result<VisibleDocs, ContentError> {
    let closed = crate::closed::has_closed_parts(entity.name) && !crate::closed::full_access();
    let query = if closed {
        crate::closed_query::open_query(query)?
    } else {
        query
    };
    let stream = repo.stream(query).await?;
    Ok(VisibleDocs {
        total: stream.total,
        docs: stream.docs,
        reduce: closed.then_some(entity.name),
    })
}

/// Marks a response whose body is streamed: the format layer must not buffer it to
/// convert it (JSON-LD is built as one value; the CSV of a whole read is streamed by the
/// list handler itself, `crate::csv_stream`) and the response cache must not keep it.
#[derive(Clone, Copy, Debug)]
pub struct StreamedList;

/// The list envelope of every match on one page (`TotalPages` 1, no links), its `Items`
/// written batch by batch into a chunked body. The store's error after the first bytes
/// can no longer change the status: it ends the body early (truncated JSON) and is logged.
pub fn envelope_response(
    docs: VisibleDocs,
    seed: Option<String>,
    projection: Projection,
) -> Response {
    let envelope = Envelope {
        total_results: docs.total,
        total_pages: u64::from(docs.total > 0),
        current_page: 1,
        previous_page: None,
        next_page: None,
        seed: seed.as_deref(),
        total_estimated: false,
    };
    // The envelope of no items, split where the items go.
    let empty = envelope.render::<&str>(&[]);
    let (head, tail) = empty.split_at(empty.len() - 2);
    let (head, tail) = (head.to_string(), tail.to_string());
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<String, std::io::Error>>(1);
    tokio::spawn(async move {
        let mut docs = docs;
        let mut chunk = head;
        let mut first = true;
        while let Some(batch) = docs.next().await {
            let shaped = batch.and_then(|batch| {
                for doc in &batch {
                    if !first {
                        chunk.push(',');
                    }
                    first = false;
                    chunk.push_str(&shaped(doc, &projection)?);
                }
                Ok(())
            });
            if let Err(e) = shaped {
                tracing::error!(error = %e, "whole-dataset list ended early");
                let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                return;
            }
            if tx.send(Ok(std::mem::take(&mut chunk))).await.is_err() {
                return;
            }
        }
        chunk.push_str(&tail);
        let _ = tx.send(Ok(chunk)).await;
    });
    // `poll_recv` answers `None` again when polled after the end (the compression layer
    // does poll a finished body again; an `unfold` panics there).
    let mut rx = rx;
    let stream = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let mut response = Body::from_stream(stream).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    response.extensions_mut().insert(StreamedList);
    response
}
