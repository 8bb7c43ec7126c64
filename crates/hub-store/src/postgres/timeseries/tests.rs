use crate::timeseries::{DataTypeInput, RecordInput, RecordValue, StationInput, SyncFlags};
use crate::{Backend, Store};

/// A double value of the free places of station `S` (10-minute period) at `t`.
pub(super) fn record(t: i64, v: f64) -> RecordInput {
    RecordInput {
        station_code: "S".into(),
        data_type: "free".into(),
        period: 600,
        timestamp: t,
        value: RecordValue::Double(v),
    }
}

/// A history row newer than the latest value (tables that disagree) does not fail a
/// push: the insert falls back to ignoring conflicts, as SQLite's INSERT OR IGNORE does.
#[test]
fn push_survives_history_rows_newer_than_latest() {
    use crate::postgres::Queries;
    if std::env::var("HUB_TEST_DATABASE")
        .map(|v| v.trim().is_empty())
        .unwrap_or(true)
    {
        println!("skipped: HUB_TEST_DATABASE not set");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ts = store.timeseries();
    rt.block_on(async {
        ts.sync_data_types(vec![DataTypeInput { name: "free".into(), ..Default::default() }]).await.unwrap();
        let s = StationInput { code: "S".into(), name: "s".into(), ..Default::default() };
        ts.sync_stations("P".into(), vec![s], SyncFlags::default()).await.unwrap();
        ts.push_records("P".into(), None, vec![record(1000, 1.0)]).await.unwrap();
        let Backend::Postgres(b) = &*store.backend else { panic!("not PostgreSQL") };
        b.write(|conn| async move {
            conn.execute("INSERT INTO ts_history (series_id, timestamp, created_on, double_value) SELECT series_id, 3000, 0, 99 FROM ts_latest", &[])
                .await?;
            Ok(())
        })
        .await
        .unwrap();
        let sum = ts.push_records("P".into(), None, vec![record(2000, 2.0), record(3000, 3.0)]).await.unwrap();
        assert_eq!((sum.inserted, sum.skipped_older), (2, 0));
        assert_eq!(ts.last_record("P".into(), "S".into(), None, None).await.unwrap(), 3000);
        let kept: f64 = b
            .read(|conn| async move { Ok(conn.query_one("SELECT double_value FROM ts_history WHERE timestamp = 3000", &[]).await?.get(0)) })
            .await
            .unwrap();
        assert_eq!(kept, 99.0);
    });
}
