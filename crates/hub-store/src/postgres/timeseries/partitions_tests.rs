//! PostgreSQL tests of the `ts_history` partitions (run when `HUB_TEST_DATABASE` is set).

use super::super::tests::{one_station, record};
use crate::postgres::session::Queries;
use crate::timeseries::history::{self, HistoryPolicy, Month};
use crate::{Backend, Store};

fn ms(s: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap()
        .timestamp_millis()
}

fn postgres_store() -> Option<(Store, tempfile::TempDir)> {
    if std::env::var("HUB_TEST_DATABASE")
        .map(|v| v.trim().is_empty())
        .unwrap_or(true)
    {
        println!("skipped: HUB_TEST_DATABASE not set");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    Some((store, dir))
}

/// (partition months, rows in each partition and in DEFAULT), as the catalog says.
async fn layout(store: &Store) -> Vec<(String, i64)> {
    let Backend::Postgres(b) = &*store.backend else {
        panic!("not PostgreSQL")
    };
    b.read(|conn| async move {
        let rows = conn
            .query(
                "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
                 WHERE i.inhparent = 'ts_history'::regclass ORDER BY 1",
                &[],
            )
            .await?;
        let mut out = Vec::new();
        for r in rows {
            let name: String = r.get(0);
            // Names come from the catalog of the test's own database.
            let n: i64 = conn
                .query_one(&format!("SELECT count(*) FROM {name}"), &[])
                .await?
                .get(0);
            out.push((name, n));
        }
        Ok(out)
    })
    .await
    .unwrap()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Records two years apart get a partition each as they are pushed (DEFAULT stays
/// empty), and a maintenance pass makes the months ahead.
#[test]
fn pushes_make_the_months_they_reach() {
    let Some((store, _dir)) = postgres_store() else {
        return;
    };
    rt().block_on(async {
        one_station(&store).await;
        let ts = store.timeseries();
        let (old, new) = (ms("2023-03-10T08:00:00Z"), ms("2025-03-10T08:00:00Z"));
        let sum = ts
            .push_records("P".into(), None, vec![record(old, 1.0), record(new, 2.0)])
            .await
            .unwrap();
        assert_eq!(sum.inserted, 2);
        assert_eq!(
            layout(&store).await,
            [
                ("ts_history_default".to_string(), 0),
                ("ts_history_y2023m03".to_string(), 1),
                ("ts_history_y2025m03".to_string(), 1),
            ]
        );
        let done = ts
            .maintain_history(ms("2025-03-20T00:00:00Z"), HistoryPolicy::default())
            .await
            .unwrap();
        let m = |year, month| Month { year, month };
        assert_eq!(done.created, [m(2025, 4), m(2025, 5), m(2025, 6)]);
        assert_eq!(layout(&store).await.len(), 6);
        // A second pass (another process, say) finds nothing to do.
        let again = ts
            .maintain_history(ms("2025-03-20T00:00:00Z"), HistoryPolicy::default())
            .await
            .unwrap();
        assert_eq!(again, Default::default());
    });
}

/// One push reaching more months than it may make: the newest get partitions, the
/// rest wait in DEFAULT (still read back) until the next maintenance pass moves them.
#[test]
fn a_push_makes_at_most_its_share_of_months_and_a_pass_makes_the_rest() {
    let Some((store, _dir)) = postgres_store() else {
        return;
    };
    rt().block_on(async {
        one_station(&store).await;
        let ts = store.timeseries();
        let first = Month {
            year: 2020,
            month: 1,
        };
        let months: Vec<Month> = (0..15).map(|n| first.plus(n)).collect();
        let records = months
            .iter()
            .enumerate()
            .map(|(i, m)| record(m.start_ms().unwrap() + 3_600_000, i as f64))
            .collect();
        let sum = ts.push_records("P".into(), None, records).await.unwrap();
        assert_eq!(sum.inserted, 15);
        let l = layout(&store).await;
        assert_eq!(l.len(), 1 + history::MAX_ON_DEMAND_PER_PUSH, "{l:?}");
        assert!(l.contains(&("ts_history_default".into(), 3)), "{l:?}");
        assert!(
            l.contains(&("ts_history_y2021m03".into(), 1)),
            "newest made: {l:?}"
        );
        let done = ts
            .maintain_history(ms("2021-03-15T00:00:00Z"), HistoryPolicy::default())
            .await
            .unwrap();
        assert_eq!(&done.created[..3], &months[..3]);
        let l = layout(&store).await;
        assert!(l.contains(&("ts_history_default".into(), 0)), "{l:?}");
        assert_eq!(l.iter().map(|(_, n)| n).sum::<i64>(), 15);
    });
}

/// Rows that reached DEFAULT (a database from before partitions, a copy by `hub
/// migrate`, a push past the window) move into their month's partition when it is
/// made; the retention then drops whole months and DEFAULT rows before its cutoff.
#[test]
fn default_rows_move_into_new_partitions_and_retention_drops_old_months() {
    let Some((store, _dir)) = postgres_store() else {
        return;
    };
    rt().block_on(async {
        one_station(&store).await;
        let Backend::Postgres(b) = &*store.backend else {
            panic!("not PostgreSQL")
        };
        let ts = store.timeseries();
        let (t2023, t2024, t2025) = (
            ms("2023-06-01T00:00:00Z"),
            ms("2024-06-30T23:59:59.999Z"),
            ms("2025-01-15T00:00:00Z"),
        );
        ts.push_records("P".into(), None, vec![record(t2025, 3.0)])
            .await
            .unwrap();
        // Older rows written straight into DEFAULT, as a pre-partition database has them.
        b.write(move |conn| async move {
            conn.execute(
                "INSERT INTO ts_history_default (series_id, timestamp, created_on, double_value) \
                 SELECT series_id, t, 0, 1 FROM ts_latest, unnest($1::int8[]) AS t",
                &[&vec![t2023, t2024, t2024 - 1]],
            )
            .await?;
            Ok(())
        })
        .await
        .unwrap();
        let now = ms("2025-02-01T10:00:00Z");
        let done = ts
            .maintain_history(now, HistoryPolicy::default())
            .await
            .unwrap();
        let m = |year, month| Month { year, month };
        assert_eq!(
            done.created,
            [
                m(2023, 6),
                m(2024, 6),
                m(2025, 2),
                m(2025, 3),
                m(2025, 4),
                m(2025, 5)
            ]
        );
        let l = layout(&store).await;
        assert!(l.contains(&("ts_history_default".into(), 0)), "{l:?}");
        assert!(l.contains(&("ts_history_y2024m06".into(), 2)), "{l:?}");
        assert!(l.contains(&("ts_history_y2023m06".into(), 1)), "{l:?}");

        // Retention of 12 months at 2025-02: 2024-02 onwards stays.
        let keep_a_year = HistoryPolicy {
            months_ahead: 3,
            retention_months: 12,
        };
        let done = ts.maintain_history(now, keep_a_year).await.unwrap();
        assert_eq!(done.dropped, [m(2023, 6)]);
        let l = layout(&store).await;
        assert!(!l.iter().any(|(n, _)| n == "ts_history_y2023m06"), "{l:?}");
        assert!(l.contains(&("ts_history_y2024m06".into(), 2)), "{l:?}");
        // A push of a month before the cutoff lands in DEFAULT (no partition is made
        // for a month about to go) and the next pass deletes it there.
        let stale = ms("2022-01-01T00:00:00Z");
        b.write(move |conn| async move {
            conn.execute(
                "INSERT INTO ts_history (series_id, timestamp, created_on, double_value) \
                 SELECT series_id, $1, 0, 1 FROM ts_latest",
                &[&stale],
            )
            .await?;
            Ok(())
        })
        .await
        .unwrap();
        let done = ts.maintain_history(now, keep_a_year).await.unwrap();
        assert_eq!((done.created.len(), done.deleted_rows), (0, 1));
    });
}

/// Several processes making the same months at once: each month is made once, no
/// pass fails, and the pushes racing them all land.
#[test]
fn processes_racing_to_make_the_same_months_agree() {
    let Some((store, _dir)) = postgres_store() else {
        return;
    };
    let Backend::Postgres(b) = &*store.backend else {
        panic!("not PostgreSQL")
    };
    // Other "processes": stores of their own (own pools, own partition knowledge)
    // on the same database.
    let name: String = rt()
        .block_on(b.read(|conn| async move {
            Ok(conn
                .query_one("SELECT current_database()::text", &[])
                .await?
                .get(0))
        }))
        .unwrap();
    let admin = std::env::var("HUB_TEST_DATABASE").unwrap();
    let url = crate::postgres::url_with_database(admin.trim(), &name);
    let others: Vec<Store> = (0..3)
        .map(|_| Store::open_postgres(&url, None).unwrap())
        .collect();
    rt().block_on(async {
        one_station(&store).await;
        let now = ms("2025-03-20T00:00:00Z");
        let mut tasks = Vec::new();
        for (i, s) in others.iter().enumerate() {
            let ts = s.timeseries();
            tasks.push(tokio::spawn(async move {
                let pass = ts.maintain_history(now, HistoryPolicy::default()).await;
                let t = ms("2024-01-01T00:00:00Z") + i as i64 * 40 * 86_400_000;
                let push = ts
                    .push_records("P".into(), None, vec![record(t, i as f64)])
                    .await;
                (
                    pass.map(|d| d.created),
                    push.map(|p| (p.inserted, p.skipped_older)),
                )
            }));
        }
        let (mut made, mut inserted) = (Vec::new(), 0);
        for t in tasks {
            let (pass, push) = t.await.unwrap();
            made.extend(pass.unwrap());
            let (stored, skipped) = push.unwrap();
            assert_eq!(stored + skipped, 1);
            inserted += stored as i64;
        }
        made.sort();
        let m = |year, month| Month { year, month };
        assert_eq!(made, [m(2025, 3), m(2025, 4), m(2025, 5), m(2025, 6)]);
        let l = layout(&store).await;
        let rows: i64 = l.iter().map(|(_, n)| n).sum();
        let default_rows = l.iter().find(|(n, _)| n == "ts_history_default").unwrap().1;
        assert_eq!((rows, default_rows), (inserted, 0), "{l:?}");

        // Racing retention passes drop each old month once between them.
        let keep_a_year = HistoryPolicy {
            months_ahead: 3,
            retention_months: 12,
        };
        let passes: Vec<_> = others
            .iter()
            .map(|s| {
                let ts = s.timeseries();
                tokio::spawn(async move { ts.maintain_history(now, keep_a_year).await })
            })
            .collect();
        let mut dropped = Vec::new();
        for p in passes {
            dropped.extend(p.await.unwrap().unwrap().dropped);
        }
        dropped.sort();
        assert_eq!(dropped, [m(2024, 1), m(2024, 2)]);
        let l = layout(&store).await;
        assert!(l.iter().any(|(n, _)| n == "ts_history_y2024m03"), "{l:?}");
        assert!(!l.iter().any(|(n, _)| n == "ts_history_y2024m02"), "{l:?}");
    });
}

/// An operator's own partition (another name) is used, never replaced or dropped: a push
/// into its month lands there without failing, and the retention leaves it alone.
#[test]
fn an_operators_own_partition_is_left_alone() {
    let Some((store, _dir)) = postgres_store() else {
        return;
    };
    rt().block_on(async {
        one_station(&store).await;
        let Backend::Postgres(b) = &*store.backend else {
            panic!("not PostgreSQL")
        };
        let june = Month {
            year: 2021,
            month: 6,
        };
        let (from, to) = june.bounds_ms().unwrap();
        b.write(move |conn| async move {
            conn.batch_execute(&format!(
                "CREATE TABLE ops_history_june PARTITION OF ts_history FOR VALUES FROM ({from}) TO ({to})"
            ))
            .await?;
            Ok(())
        })
        .await
        .unwrap();
        let ts = store.timeseries();
        for t in [from + 1, from + 2] {
            let sum = ts
                .push_records("P".into(), None, vec![record(t, 1.0)])
                .await
                .unwrap();
            assert_eq!(sum.inserted, 1);
        }
        let l = layout(&store).await;
        assert!(l.contains(&("ops_history_june".into(), 2)), "{l:?}");
        assert!(l.contains(&("ts_history_default".into(), 0)), "{l:?}");
        let keep_a_year = HistoryPolicy {
            months_ahead: 0,
            retention_months: 12,
        };
        let done = ts
            .maintain_history(ms("2025-01-10T00:00:00Z"), keep_a_year)
            .await
            .unwrap();
        assert_eq!(done.dropped, []);
        assert!(layout(&store).await.contains(&("ops_history_june".into(), 2)));
    });
}
