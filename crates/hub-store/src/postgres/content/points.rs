//! A list's map points on PostgreSQL: the walk along the order's index for a dense box
//! (see `hub_query::content::points`), or the points statement over the matches.
//!
//! Must not: decide whether a walk pays (`CountedWalk::points` does) or what a caller
//! may see (the query arrives held to the closed-data rule).

use std::sync::Arc;

use hub_query::content::points::CompiledPoints;
use hub_query::content::ContentQuery;
use hub_query::Dialect;

use super::kept::rows;
use super::{content_stamp, count, documents_for_plan, Conn, PgContent};
use crate::content::{kept_points, KeptPoints, MapPoint};
use crate::Result;

/// The first `limit` located matches of `query` in the default order.
pub(super) async fn read(
    content: &PgContent,
    query: ContentQuery,
    limit: u64,
) -> Result<Vec<MapPoint>> {
    let compiled = Arc::new(query.compile_points(Dialect::Postgres, limit));
    let listed = Arc::new(query.compile(Dialect::Postgres));
    let query = Arc::new(query);
    let counts = content.counts.clone();
    content
        .backend
        .read(move |conn| async move {
            // A dense box is walked along the order (see `hub_query`'s `points`),
            // as its count and the entity's show. The totals last kept choose first
            // (`kept_points`); without them, or when a walk they chose found too few
            // points, both are counted afresh and kept. Fewer matches than the limit
            // are all read anyway: the entity is not counted then.
            if let Some(walk) = &listed.walk {
                let all = walk.documents();
                let all_compiled = all.compile(Dialect::Postgres);
                let kept = kept_points(&counts, &listed, &all_compiled, limit);
                match &kept {
                    KeptPoints::Walk(walked) => {
                        if let Some(points) = walked_points(&conn, walked, limit).await? {
                            return Ok(points);
                        }
                    }
                    KeptPoints::Matches => {
                        let points = map_points(&conn, &compiled).await?;
                        if (points.len() as u64) >= limit {
                            let stamp = Some(content_stamp(&conn, &listed).await?);
                            count(&conn, &listed, &query, &counts, stamp).await?;
                            documents_for_plan(&conn, &all_compiled, &all, &counts, stamp).await?;
                        }
                        return Ok(points);
                    }
                    KeptPoints::Count => {}
                }
                let stamp = Some(content_stamp(&conn, &listed).await?);
                let total = count(&conn, &listed, &query, &counts, stamp).await?;
                if total.value < limit {
                    return map_points(&conn, &compiled).await;
                }
                let documents =
                    documents_for_plan(&conn, &all_compiled, &all, &counts, stamp).await?;
                let walked = walk.points(total, documents.value, limit);
                let walked_before = matches!(kept, KeptPoints::Walk(_));
                if let Some(walked) = walked.filter(|_| !walked_before) {
                    if let Some(points) = walked_points(&conn, &walked, limit).await? {
                        return Ok(points);
                    }
                }
            }
            map_points(&conn, &compiled).await
        })
        .await
}

/// The rows of a points statement.
async fn map_points(conn: &Conn, compiled: &CompiledPoints) -> Result<Vec<MapPoint>> {
    rows(conn, &compiled.statement, &compiled.checks, |r| {
        Ok(MapPoint {
            id: r.try_get(0)?,
            latitude: r.try_get(1)?,
            longitude: r.try_get(2)?,
            shortname: r.try_get(3)?,
        })
    })
    .await
}

/// The points a walk found, when they are as many as the limit (otherwise its prefix
/// did not hold them).
async fn walked_points(
    conn: &Conn,
    walked: &CompiledPoints,
    limit: u64,
) -> Result<Option<Vec<MapPoint>>> {
    let points = map_points(conn, walked).await?;
    Ok((points.len() as u64 >= limit).then_some(points))
}
