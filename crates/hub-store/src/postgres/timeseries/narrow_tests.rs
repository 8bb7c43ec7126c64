use super::{literal_bounds, month_of, read_narrow, row_cells, windows, NarrowCaches, Sink};
use crate::postgres::timeseries::partitions::PartitionState;
use crate::postgres::timeseries::tests::{one_station, record};
use crate::postgres::Queries;
use crate::timeseries::history::Month;
use std::sync::Arc;

use crate::postgres::{PgBackend, PgSettings, ThrowawayDatabase};
use crate::timeseries::narrow::Provenances;
use crate::timeseries::provenance::REVISION_SQL;
use crate::timeseries::{Cell, ProvenanceInput, SharedText};
use crate::{Backend, Store};
use hub_query::timeseries::{compile_query, Route, TsQuery};
use hub_query::Dialect;

fn ms(s: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap()
        .timestamp_millis()
}

#[test]
fn a_range_is_read_in_windows_of_whole_months() {
    // (from, to, cuts between windows)
    let table: [(&str, &str, &[&str]); 5] = [
        ("2026-03-04T05:00:00Z", "2026-03-28T00:00:00Z", &[]),
        // Ending at a month's start: no empty window after it.
        ("2026-03-04T05:00:00Z", "2026-04-01T00:00:00Z", &[]),
        (
            "2026-03-04T05:00:00Z",
            "2026-05-01T00:00:01Z",
            &["2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z"],
        ),
        (
            "2025-11-26T14:42:00Z",
            "2026-01-27T14:43:00Z",
            &["2025-12-01T00:00:00Z", "2026-01-01T00:00:00Z"],
        ),
        // Starting at a month's start.
        (
            "2026-01-01T00:00:00Z",
            "2026-02-10T00:00:00Z",
            &["2026-02-01T00:00:00Z"],
        ),
    ];
    for (from, to, cuts) in table {
        let got = windows(ms(from), ms(to));
        let mut bounds = vec![ms(from)];
        bounds.extend(cuts.iter().map(|c| ms(c)));
        bounds.push(ms(to));
        let want: Vec<(i64, i64)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
        assert_eq!(got, want, "{from} .. {to}");
    }
}

#[test]
fn long_or_odd_ranges_stay_few_windows_covering_the_range() {
    for (from, to) in [
        (ms("2016-02-10T00:00:00Z"), ms("2026-11-27T00:00:00Z")),
        (ms("1900-01-01T00:00:00Z"), ms("2100-01-01T00:00:00Z")),
        (0, 1),
        (5, 5),
        (9, 3),
        (i64::MIN, i64::MAX),
        (-86_400_000 * 400, 86_400_000 * 400),
    ] {
        let got = windows(from, to);
        assert!(
            !got.is_empty() && got.len() <= 36,
            "{from} .. {to}: {}",
            got.len()
        );
        assert_eq!(got[0].0, from);
        assert_eq!(got.last().unwrap().1, to);
        for pair in got.windows(2) {
            assert_eq!(pair[0].1, pair[1].0, "contiguous");
            assert!(pair[0].0 < pair[0].1, "not empty");
            let cut = Month::of_ms(pair[0].1).unwrap();
            assert_eq!(cut.start_ms(), Some(pair[0].1), "cut at a month's start");
        }
    }
}

#[test]
fn few_series_fetch_much_at_once_many_series_a_bounded_part() {
    // (series merged, rows fetched per round trip)
    let table = [
        (0, 16_384),
        (1, 16_384),
        (4, 16_384),
        (8, 8_192),
        (100, 655),
        (512, 128),
    ];
    for (series, rows) in table {
        assert_eq!(super::fetch_rows(series), rows, "{series} series");
    }
}

#[test]
fn a_range_within_one_month_has_that_months_bounds() {
    let march = (ms("2026-03-01T00:00:00Z"), ms("2026-04-01T00:00:00Z"));
    // (from, to, the month holding all of it)
    let table = [
        (
            ms("2026-03-04T05:00:00Z"),
            ms("2026-03-11T05:00:00Z"),
            Some(march),
        ),
        (march.0, march.1, Some(march)),
        (march.0, march.0 + 1, Some(march)),
        (march.1 - 1, march.1, Some(march)),
        // Across a month's start, empty or reversed, beyond the calendar: none.
        (march.0 - 1, march.0 + 1, None),
        (march.0, march.1 + 1, None),
        (march.0, march.0, None),
        (march.1, march.0, None),
        (i64::MIN, i64::MIN + 1, None),
        (i64::MAX - 1, i64::MAX, None),
    ];
    for (from, to, want) in table {
        assert_eq!(month_of(from, to), want, "{from} .. {to}");
    }
}

#[test]
fn a_range_across_months_names_their_bounds_when_each_has_a_partition() {
    let month = |s: &str| Month::of_ms(ms(s)).unwrap();
    let bounds = |first: &str, last: &str| {
        Some((
            month(first).bounds_ms().unwrap().0,
            month(last).bounds_ms().unwrap().1,
        ))
    };
    // Partitions of 2026-02 to 2026-05 and of 2029-01 to 2031-12 (36 months).
    let held = |first: Month, last: Month| {
        let within = |from: &str, to: &str| first >= month(from) && last <= month(to);
        within("2026-02-01T00:00:00Z", "2026-05-01T00:00:00Z")
            || within("2029-01-01T00:00:00Z", "2031-12-01T00:00:00Z")
    };
    // (from, to, the bounds named)
    let table = [
        // Within one month: that month, partition or not.
        (
            "2026-03-04T05:00:00Z",
            "2026-03-11T05:00:00Z",
            bounds("2026-03-01T00:00:00Z", "2026-03-01T00:00:00Z"),
        ),
        (
            "2027-03-04T05:00:00Z",
            "2027-03-11T05:00:00Z",
            bounds("2027-03-01T00:00:00Z", "2027-03-01T00:00:00Z"),
        ),
        // Across a month's start, both months held: both.
        (
            "2026-02-26T05:00:00Z",
            "2026-03-05T05:00:00Z",
            bounds("2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"),
        ),
        // Ending at a month's start: that month is not read.
        (
            "2026-02-26T05:00:00Z",
            "2026-06-01T00:00:00Z",
            bounds("2026-02-01T00:00:00Z", "2026-05-01T00:00:00Z"),
        ),
        // Into a month without a partition: none (its rows sit in DEFAULT).
        ("2026-01-26T05:00:00Z", "2026-02-05T05:00:00Z", None),
        ("2026-04-26T05:00:00Z", "2026-06-01T00:00:01Z", None),
        // 36 months held: named; 37 would be more than a read names.
        (
            "2029-01-05T00:00:00Z",
            "2031-12-05T00:00:00Z",
            bounds("2029-01-01T00:00:00Z", "2031-12-01T00:00:00Z"),
        ),
        ("2028-12-31T00:00:00Z", "2031-12-05T00:00:00Z", None),
    ];
    for (from, to, want) in table {
        assert_eq!(
            literal_bounds(ms(from), ms(to), held),
            want,
            "{from} .. {to}"
        );
    }
    // Empty, reversed or beyond the calendar: none, whatever is held.
    for (from, to) in [
        (5, 5),
        (9, 3),
        (i64::MIN, i64::MAX),
        (i64::MAX - 1, i64::MAX),
    ] {
        assert_eq!(
            literal_bounds(from, to, |_, _| true),
            None,
            "{from} .. {to}"
        );
    }
}

/// A series' week across the start of last month, whose months both have a partition:
/// read narrow on PostgreSQL outside any snapshot in one statement naming both months'
/// bounds, whose generic plan appends the two partitions' index reads in time order
/// with nothing sorted. Its rows equal those read in windows (the months not known to
/// have partitions).
#[test]
fn a_range_across_months_with_partitions_is_one_statement_in_order() {
    let Some(read) = MonthRead::open(|start| (start - DAY / 2, start + 7 * DAY)) else {
        return;
    };
    let (month, from, to, rt) = (read.month, read.from, read.to, &read.rt);
    let (plan, b) = (read.plan.clone(), read.backend());
    let before = month.plus(-1);
    assert!(
        b.partitions.hold_every(before, month),
        "the push made both months' partitions"
    );
    let across = plan.history_within(before.bounds_ms().unwrap().0, month.bounds_ms().unwrap().1);
    let partitions = Arc::clone(&b.partitions);
    let (rows, windowed, across_plan) = rt
        .block_on(b.read(move |mut conn| async move {
            let rows = read_with(&mut conn, &plan, &partitions).await?;
            let windowed = read_with(&mut conn, &plan, &PartitionState::new()).await?;
            let named = prepared_name(&conn, &across).await?;
            let across_plan = generic_plan(&conn, &named, from, to).await?;
            Ok((rows, windowed, across_plan))
        }))
        .unwrap();
    assert_eq!(
        rows.len(),
        72 + 7 * 144,
        "half a day and a week of ten-minute values"
    );
    assert!(rows == windowed, "the same rows as read in windows");
    for partition in [before.partition_name(), month.partition_name()] {
        assert!(
            across_plan.contains(&format!(" on {partition} ")),
            "{across_plan}"
        );
    }
    assert!(
        across_plan.starts_with("Append")
            && !across_plan.contains("Sort")
            && !across_plan.contains("default"),
        "{across_plan}"
    );
}

/// A series' week within one month, read narrow on PostgreSQL with generic plans (Hub's
/// default): its statement names the month's bounds, and PostgreSQL plans it as the
/// month partition's index read in time order, with nothing appended or sorted. The
/// same read without the bounds keeps the DEFAULT partition in the plan and sorts.
#[test]
fn a_week_within_a_month_is_read_from_its_partition_in_order() {
    let Some(read) = MonthRead::open(|start| (start + 3 * DAY, start + 10 * DAY)) else {
        return;
    };
    let (month, from, to, rt) = (read.month, read.from, read.to, &read.rt);
    let (plan, b) = (read.plan.clone(), read.backend());
    let (start, end) = month.bounds_ms().unwrap();
    let within = plan.history_within(start, end);
    let whole = plan.history.as_sql().to_string();
    let (rows, within_plan, whole_plan) = rt
        .block_on(b.read(move |mut conn| async move {
            let rows = read_with(&mut conn, &plan, &PartitionState::new()).await?;
            let named = prepared_name(&conn, &within).await?;
            let within_plan = generic_plan(&conn, &named, from, to).await?;
            conn.batch_execute(&format!("PREPARE whole AS {whole}"))
                .await?;
            let whole_plan = generic_plan(&conn, "whole", from, to).await?;
            conn.batch_execute("DEALLOCATE whole").await?;
            Ok((rows.len(), within_plan, whole_plan))
        }))
        .unwrap();
    assert_eq!(rows, 7 * 144, "a week of ten-minute values");
    let partition = month.partition_name();
    assert!(
        within_plan.starts_with("Index Scan") && within_plan.contains(&format!(" on {partition} ")),
        "{within_plan}"
    );
    assert!(
        !within_plan.contains("Sort") && !within_plan.contains("Append"),
        "{within_plan}"
    );
    assert!(whole_plan.contains("Sort"), "{whole_plan}");
}

const DAY: i64 = 86_400_000;

/// A store on PostgreSQL holding last month's values of one series
/// ([`last_month_of_values`]), and the narrow plan of its history over the range
/// `range` makes of that month's start.
struct MonthRead {
    _dir: tempfile::TempDir,
    store: Store,
    rt: tokio::runtime::Runtime,
    month: Month,
    from: i64,
    to: i64,
    plan: hub_query::timeseries::NarrowHistory,
}

impl MonthRead {
    /// `None` (the test skipped) without a PostgreSQL server that prepares statements.
    fn open(range: impl FnOnce(i64) -> (i64, i64)) -> Option<Self> {
        admin_preparing_statements()?;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_for_tests(dir.path()).unwrap();
        let rt = runtime();
        let (month, start, _) = rt.block_on(last_month_of_values(&store));
        let (from, to) = range(start);
        let plan = compile_query(&history_of(from, to), Dialect::Postgres)
            .unwrap()
            .narrow
            .expect("narrow");
        Some(MonthRead {
            _dir: dir,
            store,
            rt,
            month,
            from,
            to,
            plan,
        })
    }

    fn backend(&self) -> &PgBackend {
        match &*self.store.backend {
            Backend::Postgres(b) => b,
            _ => panic!("not PostgreSQL"),
        }
    }
}

/// The name of the statement the connection prepared for `sql`.
async fn prepared_name(conn: &crate::postgres::Conn, sql: &str) -> crate::Result<String> {
    Ok(conn
        .query_one(
            "SELECT name FROM pg_prepared_statements WHERE statement = $1",
            &[&sql],
        )
        .await?
        .get(0))
}

/// The generic plan (Hub's default) of prepared history statement `name` for the one
/// series there is, over `[from, to)`.
async fn generic_plan(
    conn: &crate::postgres::Conn,
    name: &str,
    from: i64,
    to: i64,
) -> crate::Result<String> {
    let series: i64 = conn
        .query_one("SELECT id FROM ts_series", &[])
        .await?
        .get(0);
    conn.batch_execute("SET plan_cache_mode = force_generic_plan")
        .await?;
    let explain = format!("EXPLAIN EXECUTE {name}({series}, {from}, {to})");
    let lines: Vec<String> = conn
        .query(explain.as_str(), &[])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    conn.batch_execute("RESET plan_cache_mode").await?;
    Ok(lines.join("\n"))
}

/// The rows of `plan` read narrow on `conn`, with nothing kept but `partitions`.
async fn read_with(
    conn: &mut crate::postgres::Conn,
    plan: &hub_query::timeseries::NarrowHistory,
    partitions: &PartitionState,
) -> crate::Result<Vec<Vec<Cell>>> {
    let mut rows = Vec::new();
    let caches = NarrowCaches {
        provenances: &Default::default(),
        wide: &Default::default(),
        selections: &Default::default(),
        partitions,
    };
    assert!(read_narrow(conn, plan, &caches, Sink::Rows(&mut rows)).await?);
    Ok(rows)
}

/// The admin URL of the test server when its connections prepare named statements (what
/// a narrow read needs); `None` (the test is skipped) otherwise.
fn admin_preparing_statements() -> Option<String> {
    crate::postgres::test_server::admin_with_sessions("history is not read narrow")
}

/// A store on a throwaway database `hub_test_<pid>_<suffix>`, and its backend; `None`
/// (the test is skipped) without a server whose connections prepare statements.
pub(in crate::postgres) fn throwaway_store(
    suffix: &str,
    settings: &PgSettings,
) -> Option<(Arc<PgBackend>, Store)> {
    let admin = admin_preparing_statements()?;
    let name = format!("hub_test_{}_{suffix}", std::process::id());
    let database = ThrowawayDatabase::create(&admin, &name).unwrap();
    let backend = Arc::new(PgBackend::open_throwaway(database, settings).unwrap());
    let store = Store {
        backend: Arc::new(Backend::Postgres(Arc::clone(&backend))),
        counts: Arc::default(),
        orders: Arc::default(),
    };
    Some((backend, store))
}

pub(in crate::postgres) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Station `S` of type `P` with ten-minute `free` values from a day before last month
/// to a day after it: last month, its start and its end.
async fn last_month_of_values(store: &Store) -> (Month, i64, i64) {
    let month = Month::of_ms(chrono::Utc::now().timestamp_millis())
        .unwrap()
        .plus(-1);
    let (start, end) = month.bounds_ms().unwrap();
    one_station(store).await;
    let records = (start - DAY..end + DAY)
        .step_by(600_000)
        .map(|t| record(t, (t / 600_000 % 97) as f64))
        .collect();
    store
        .timeseries()
        .push_records("P".into(), None, records)
        .await
        .unwrap();
    (month, start, end)
}

/// `/v2/flat/P/free/<from>/<to>` by an admin.
fn history_of(from: i64, to: i64) -> TsQuery {
    query_of(Route::History { from, to })
}

/// `/v2/flat/P/free/…` of `route` by an admin.
pub(in crate::postgres) fn query_of(route: Route) -> TsQuery {
    TsQuery {
        route,
        tree: false,
        types: Some(vec!["P".into()]),
        data_types: Some(vec!["free".into()]),
        filter: None,
        select: None,
        distinct: false,
        limit: 0,
        offset: -1,
        access: None,
    }
}

/// A month of one series streamed without a portal, its reader gone after the first
/// batch: the store's only connection answers the next reads whole and in order, and
/// no read's snapshot stays open on it.
#[test]
fn a_series_stream_left_early_leaves_its_connection_answering() {
    let settings = PgSettings {
        pool_size: 1,
        ..PgSettings::for_tests()
    };
    let Some((backend, store)) = throwaway_store("narrow_left", &settings) else {
        return;
    };
    let rt = runtime();
    let (_, start, end) = rt.block_on(last_month_of_values(&store));
    let ts = store.timeseries();
    let compiled = || compile_query(&history_of(start, end), Dialect::Postgres).unwrap();
    let times = |rows: &[Vec<Cell>]| -> Vec<i64> {
        rows.iter()
            .map(|r| match r[0] {
                Cell::Int(t) => t,
                ref other => panic!("time {other:?}"),
            })
            .collect()
    };
    let want: Vec<i64> = (start..end).step_by(600_000).collect();
    // A connection left in a read would keep the next read waiting for ever.
    let reads = async {
        for _ in 0..3 {
            let mut batches = ts.query_batches(compiled());
            let first = batches.next().await.expect("a batch").unwrap();
            assert!(
                first.len() < want.len(),
                "the month comes in several batches"
            );
            drop(batches);
            let rows = ts.query(compiled()).await.unwrap();
            assert_eq!(times(&rows), want);
        }
        let mut batches = ts.query_batches(compiled());
        let mut rows = Vec::new();
        while let Some(batch) = batches.next().await {
            rows.extend(batch.unwrap());
        }
        assert_eq!(times(&rows), want);
        // The reads' snapshots ended: the connection is back outside any transaction
        // (a snapshot left open would keep answering from its old data).
        let isolation: String = backend
            .read(|conn| async move {
                Ok(conn
                    .query_one("SHOW transaction_isolation", &[])
                    .await?
                    .get(0))
            })
            .await
            .unwrap();
        assert_eq!(isolation, "read committed");
    };
    let limit = std::time::Duration::from_secs(60);
    rt.block_on(async { tokio::time::timeout(limit, reads).await })
        .expect("the next reads are answered");
}

/// A provenance the series read did not find (here: provenances kept at the current
/// revision that lack the second collector version, as a read just before it was
/// created would have kept them) ends the read outside a transaction at the first row
/// that names it; the rest is read again in a snapshot, so every row of the month
/// shows its own provenance, once and in order.
#[test]
fn rows_of_a_provenance_newer_than_the_series_read_show_it() {
    let Some((backend, store)) = throwaway_store("narrow_provenance", &PgSettings::for_tests())
    else {
        return;
    };
    let rt = runtime();
    let month = Month::of_ms(chrono::Utc::now().timestamp_millis())
        .unwrap()
        .plus(-1);
    let (start, end) = month.bounds_ms().unwrap();
    let middle = start + 10 * DAY;
    rt.block_on(async {
        one_station(&store).await;
        let ts = store.timeseries();
        for (version, from, to) in [("1", start, middle), ("2", middle, end)] {
            let uuid = ts
                .provenance(ProvenanceInput {
                    uuid: format!("test-provenance-{version}"),
                    lineage: "test".into(),
                    data_collector: "collector".into(),
                    data_collector_version: version.into(),
                })
                .await
                .unwrap();
            let records = (from..to)
                .step_by(600_000)
                .map(|t| record(t, 1.0))
                .collect();
            ts.push_records("P".into(), Some(uuid), records)
                .await
                .unwrap();
        }
    });
    let compiled = || compile_query(&history_of(start, end), Dialect::Postgres).unwrap();
    let plan = compiled().narrow.expect("a history read narrow");
    let read = plan.provenance.clone().expect("provenances read apart");
    let sql = format!(
        "{} WHERE pr.data_collector_version = '1'",
        read.sql.as_sql()
    );
    let (revision, first) = rt
        .block_on(backend.read(move |conn| async move {
            let revision: i64 = conn.query_one(REVISION_SQL, &[]).await?.get(0);
            let mut first = Provenances::default();
            let mut shared = SharedText::default();
            for row in conn.query(sql.as_str(), &[]).await? {
                let mut cells = row_cells(&row, &mut shared)?;
                let Cell::Int(id) = cells.remove(0) else {
                    panic!("a provenance id");
                };
                first.insert(id, cells);
            }
            Ok((revision, first))
        }))
        .unwrap();
    assert_eq!(first.len(), 1, "the first version only");
    let times: Vec<i64> = (start..end).step_by(600_000).collect();
    let check = |rows: &[Vec<Cell>]| {
        let got: Vec<i64> = rows
            .iter()
            .map(|r| match r[0] {
                Cell::Int(t) => t,
                ref other => panic!("time {other:?}"),
            })
            .collect();
        assert_eq!(got, times, "every row once, in order");
        for (row, t) in rows.iter().zip(&times) {
            let shown: Vec<&Cell> = read.positions.iter().map(|&at| &row[at]).collect();
            let version = if *t < middle { "1" } else { "2" };
            assert!(
                shown
                    .iter()
                    .any(|c| matches!(c, Cell::Text(v) if &**v == version)),
                "the row at {t} shows version {version}: {shown:?}"
            );
        }
    };
    for _ in 0..2 {
        backend.ts_provenances.keep(&read, revision, first.clone());
        let rows = rt.block_on(store.timeseries().query(compiled())).unwrap();
        check(&rows);
        backend.ts_provenances.keep(&read, revision, first.clone());
        let rows = rt.block_on(async {
            let mut batches = store.timeseries().query_batches(compiled());
            let mut rows = Vec::new();
            while let Some(batch) = batches.next().await {
                rows.extend(batch.unwrap());
            }
            rows
        });
        check(&rows);
    }
}
