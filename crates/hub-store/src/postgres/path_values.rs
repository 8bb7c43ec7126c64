//! `content.path_values` on PostgreSQL (migration 15, see
//! `hub_query::content::rawfilter_index`): the configured paths written into
//! `content_value_paths` at start, and the fill of rows written before their entity's
//! paths were configured (or changed).
//!
//! A trigger keeps the column of every row written; what the configuration changes is
//! filled afterwards, in batches of their own transactions, while the server answers:
//! until a row is filled its filters read its document, with the same answer. The
//! entities to fill are kept in `content_value_fill`, so a fill that stops midway goes
//! on at the next start.
//!
//! Must not: decide what a filter matches (the compiler does, reading the column only
//! where it holds the member).

use hub_query::content::rawfilter_index::ValuePath;

use super::{Conn, PgBackend, Queries};
use crate::Result;

/// Any fixed number identifies this lock among other advisory locks.
const CONFIGURE_LOCK: i64 = 0x4855_425f_5041_5448; // "HUB_PATH"

/// Rows looked at per transaction of the fill.
const FILL_BATCH: i64 = 2_000;

/// Makes `content_value_paths` hold `wanted` and marks every entity whose paths changed
/// for the fill; returns those entities.
pub(crate) async fn configure(mut conn: Conn, wanted: Vec<ValuePath>) -> Result<Vec<String>> {
    let tx = conn.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&CONFIGURE_LOCK])
        .await?;
    // (entity, member) pairs: the query follows from the member (and PostgreSQL may
    // print a `jsonpath` otherwise than it was written).
    let existing: Vec<(String, String)> = tx
        .query("SELECT entity, path FROM content_value_paths", &[])
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let wanted_pairs: Vec<(String, String)> = wanted
        .iter()
        .map(|p| (p.entity.clone(), p.path.clone()))
        .collect();
    let mut changed: Vec<String> = existing
        .iter()
        .chain(&wanted_pairs)
        .filter(|p| !(existing.contains(p) && wanted_pairs.contains(p)))
        .map(|(entity, _)| entity.clone())
        .collect();
    changed.sort();
    changed.dedup();
    if !changed.is_empty() {
        tx.execute("DELETE FROM content_value_paths", &[]).await?;
        let column = |f: fn(&ValuePath) -> &String| wanted.iter().map(f).collect::<Vec<_>>();
        tx.execute(
            "INSERT INTO content_value_paths (entity, path, query) \
             SELECT e, p, q::jsonpath FROM unnest($1::text[], $2::text[], $3::text[]) AS t(e, p, q)",
            &[&column(|p| &p.entity), &column(|p| &p.path), &column(|p| &p.query)],
        )
        .await?;
        tx.execute(
            "INSERT INTO content_value_fill (entity) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING",
            &[&changed],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(changed)
}

/// Fills every marked entity, batch by batch, then vacuums `content` if any row was
/// written; returns the rows written.
pub(crate) async fn fill(b: &PgBackend) -> Result<u64> {
    let mut total = 0;
    // From the primary: a replica may not yet hold the marks this start wrote.
    for entity in b.write(entities_to_fill).await? {
        let started = std::time::Instant::now();
        let (mut after, mut written) = (String::new(), 0);
        loop {
            let (e, a) = (entity.clone(), after.clone());
            let (last, n) = b.write(move |conn| fill_batch(conn, e, a)).await?;
            written += n;
            match last {
                Some(last) => after = last,
                None => break,
            }
        }
        tracing::info!(
            %entity,
            rows = written,
            seconds = started.elapsed().as_secs_f64(),
            "filled the values of configured rawfilter paths"
        );
        total += written;
    }
    if total > 0 {
        // The rewritten rows' pages lost their all-visible marks, and index-only scans
        // then read the rows again (measured: `Find?q=h` 207 → 592 ms after filling
        // 70,000 POIs, until this ran).
        b.write(|conn| async move { Ok(conn.batch_execute("VACUUM (ANALYZE) content").await?) })
            .await?;
    }
    Ok(total)
}

/// The entities marked for the fill.
async fn entities_to_fill(conn: Conn) -> Result<Vec<String>> {
    Ok(conn
        .query("SELECT entity FROM content_value_fill ORDER BY entity", &[])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// One batch of the fill of `entity`: the rows after `after` in key order whose column
/// does not hold exactly the entity's configured members get their values; returns the
/// last key looked at (None when the entity is done, which also unmarks it) and how
/// many rows were written.
async fn fill_batch(
    mut conn: Conn,
    entity: String,
    after: String,
) -> Result<(Option<String>, u64)> {
    let tx = conn.transaction().await?;
    let row = tx
        .query_one(
            "WITH members AS (
                 SELECT COALESCE(array_agg(path), '{}') AS names FROM content_value_paths WHERE entity = $1
             ), batch AS (
                 SELECT id_key, path_values FROM content WHERE entity = $1 AND id_key > $2
                 ORDER BY id_key LIMIT $3
             ), stale AS (
                 SELECT b.id_key FROM batch b, members m
                 WHERE CASE WHEN cardinality(m.names) = 0 THEN b.path_values IS NOT NULL
                            ELSE b.path_values IS NULL OR NOT b.path_values ?& m.names
                                 OR b.path_values - m.names <> '{}'::jsonb END
             ), written AS (
                 UPDATE content c SET path_values = hub_path_values(c.entity, c.docb)
                 FROM stale s WHERE c.entity = $1 AND c.id_key = s.id_key
                 RETURNING 1
             )
             SELECT (SELECT max(id_key) FROM batch), (SELECT count(*) FROM written)::int8",
            &[&entity, &after, &FILL_BATCH],
        )
        .await?;
    let last: Option<String> = row.get(0);
    let written: i64 = row.get(1);
    if last.is_none() {
        tx.execute(
            "DELETE FROM content_value_fill WHERE entity = $1",
            &[&entity],
        )
        .await?;
    }
    tx.commit().await?;
    Ok((last, written as u64))
}
