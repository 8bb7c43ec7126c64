//! History answers over several series: rows of interleaved series in time order, each
//! with its own station, parent and data type, filtered on station and measurement
//! fields, closed types hidden from anonymous callers. A `where` whose items each read
//! one side (station or measurement) is read narrow on SQLite (series merged in the
//! store); the same conditions inside one `and(…)` item are answered by the compiled
//! query: both must answer the same bytes in every shape (flat and tree, `select`,
//! `distinct`, `offset`/`limit`, `timezone`, `shownull`). The real router against a
//! real store (SQLite, or PostgreSQL with `HUB_TEST_DATABASE`).

mod support;

use axum::http::StatusCode;
use hub_store::Store;
use hub_timeseries::TimeseriesState;
use serde_json::{json, Value};

const T0: i64 = 1_705_312_800_000; // 2024-01-15T10:00:00Z
const MIN: i64 = 60_000;

async fn call(
    state: &TimeseriesState,
    uri: &str,
    body: Option<Value>,
    roles: Option<&[&str]>,
) -> (StatusCode, Vec<u8>) {
    let method = if body.is_some() { "POST" } else { "GET" };
    let (status, _, bytes) = support::send(state, method, uri, body, roles).await;
    (status, bytes)
}

async fn post(state: &TimeseriesState, path: &str, body: Value) {
    let (s, b) = call(state, path, Some(body), Some(&["WRITER"])).await;
    assert!(
        s.is_success(),
        "{path}: {s} {}",
        String::from_utf8_lossy(&b)
    );
}

/// Registers release `version` of the meteo collector; its provenance, as pushes name it.
async fn register_collector(state: &TimeseriesState, version: &str) -> Value {
    let body =
        json!({"lineage": "meteo", "dataCollector": "collector", "dataCollectorVersion": version});
    let (s, b) = call(state, "/v2/json/provenance", Some(body), Some(&["WRITER"])).await;
    assert!(s.is_success(), "{}", String::from_utf8_lossy(&b));
    serde_json::from_slice(&b).unwrap()
}

/// Three stations (one with a parent) × an open and a closed double type at two periods,
/// and a string type; times collide across series and some series skip steps.
async fn store() -> (tempfile::TempDir, TimeseriesState) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_for_tests(dir.path()).unwrap();
    let state = support::state_opening(&store, &["MeteoStation"], &["temp", "state"]);
    post(
        &state,
        "/v2/json/syncDataTypes",
        json!([{"name": "temp", "unit": "°C"}, {"name": "secret", "unit": "x"}, {"name": "state", "unit": ""}]),
    )
    .await;
    post(
        &state,
        "/v2/json/syncStations/Area",
        json!([{"id": "P", "name": "Parent", "origin": "O"}]),
    )
    .await;
    post(
        &state,
        "/v2/json/syncStations/MeteoStation",
        json!([
            {"id": "A1", "name": "Alpha", "origin": "O", "latitude": 46.5, "longitude": 11.3, "metaData": {"city": "Bolzano"}},
            {"id": "A10", "name": "Alpha 10", "origin": "O", "latitude": 46.6, "longitude": 11.2, "metaData": {"city": "Bolzano Sud"}, "parentStation": "P", "parentStationType": "Area"},
            {"id": "B2", "name": "Beta", "origin": "O", "latitude": 46.7, "longitude": 11.1},
        ]),
    )
    .await;
    let mut branch = serde_json::Map::new();
    for (k, code) in ["A1", "A10", "B2"].iter().enumerate() {
        let k = k as i64;
        let doubles = |dtype: i64, period: i64| -> Vec<Value> {
            (0..30)
                .filter(|i| (i + k + dtype) % 4 != 0)
                .map(|i| json!({"timestamp": T0 + i * period / 60 * MIN, "value": ((i * 7 + k * 3 + dtype) % 11) as f64 / 2.0, "period": period}))
                .collect()
        };
        let mut temp = doubles(0, 60);
        temp.extend(doubles(0, 300));
        let strings: Vec<Value> = (0..20)
            .filter(|i| i % 3 != k)
            .map(|i| json!({"timestamp": T0 + i * 2 * MIN, "value": (["on", "off", "idle"][(i % 3) as usize]), "period": 120}))
            .collect();
        branch.insert(
            code.to_string(),
            json!({"branch": {"temp": {"data": temp}, "secret": {"data": doubles(1, 60)}, "state": {"data": strings}}}),
        );
    }
    let prov = register_collector(&state, "1").await;
    post(
        &state,
        "/v2/json/pushRecords/MeteoStation",
        json!({"name": "(default)", "provenance": prov, "data": [], "branch": branch}),
    )
    .await;
    // JSON values (a series of their own): `select=mvalue.a` reads a path of them.
    let documents: Vec<Value> = (0..12)
        .map(|i| json!({"timestamp": T0 + i * 2 * MIN + MIN, "value": {"a": i, "b": ["x", i]}, "period": 120}))
        .collect();
    post(
        &state,
        "/v2/json/pushRecords/MeteoStation",
        json!({"name": "(default)", "data": [], "branch": {"A1": {"branch": {"state": {"data": documents}}}, "B2": {"branch": {"state": {"data": documents}}}}}),
    )
    .await;
    // Later values of one series without a provenance: NULL provenance columns.
    let later: Vec<Value> = (30..36)
        .map(|i| json!({"timestamp": T0 + i * MIN, "value": i as f64, "period": 60}))
        .collect();
    post(
        &state,
        "/v2/json/pushRecords/MeteoStation",
        json!({"name": "(default)", "data": [], "branch": {"A1": {"branch": {"temp": {"data": later}}}}}),
    )
    .await;
    (dir, state)
}

/// Percent-encodes the characters of `where` values a URI cannot hold.
fn enc(s: &str) -> String {
    s.replace('"', "%22")
        .replace('^', "%5E")
        .replace(' ', "%20")
}

/// `base` asked with `where=station,measurement` (read narrow: the conditions split
/// between station and measurement) and with the same inside one `and(…)` (compiled):
/// both succeed with the same bytes, returned.
async fn narrow_and_compiled(
    state: &TimeseriesState,
    base: &str,
    (station, measurement): (&str, &str),
    roles: Option<&[&str]>,
) -> Vec<u8> {
    let split = format!("{base}&where={}", enc(&format!("{station},{measurement}")));
    let joined = format!(
        "{base}&where={}",
        enc(&format!("and({station},{measurement})"))
    );
    let (s1, b1) = call(state, &split, None, roles).await;
    let (s2, b2) = call(state, &joined, None, roles).await;
    for (uri, status, body) in [(&split, s1, &b1), (&joined, s2, &b2)] {
        assert_eq!(
            status,
            StatusCode::OK,
            "{uri}: {}",
            String::from_utf8_lossy(body)
        );
    }
    if b1 != b2 {
        let at = b1.iter().zip(&b2).take_while(|(a, b)| a == b).count();
        panic!(
            "{split} as {roles:?}: the narrow and the compiled answers differ from byte {at}: {:?} vs {:?}",
            String::from_utf8_lossy(&b1[at..(at + 200).min(b1.len())]),
            String::from_utf8_lossy(&b2[at..(at + 200).min(b2.len())]),
        );
    }
    b1
}

fn rows(body: &[u8]) -> Vec<Value> {
    let v: Value = serde_json::from_slice(body).unwrap();
    v["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn where_on_station_fields_keeps_each_series_columns_in_time_order() {
    let (_dir, state) = store().await;
    let uri = format!(
        "/v2/flat/MeteoStation/temp,secret/2024-01-15/2024-01-17?limit=-1&where={}",
        enc("scode.in.(\"A10\",\"B2\"),mperiod.eq.60")
    );
    for (roles, types) in [
        (None, &["temp"][..]),
        (Some(&["ADMIN"][..]), &["secret", "temp"][..]),
    ] {
        let (s, body) = call(&state, &uri, None, roles).await;
        assert_eq!(s, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        let got: Vec<(String, String, String, String, Option<String>)> = rows(&body)
            .iter()
            .map(|r| {
                (
                    r["mvalidtime"].as_str().unwrap().to_string(),
                    r["scode"].as_str().unwrap().to_string(),
                    r["sname"].as_str().unwrap().to_string(),
                    r["tname"].as_str().unwrap().to_string(),
                    r["pcode"].as_str().map(str::to_string),
                )
            })
            .collect();
        let mut expected = Vec::new();
        for i in 0..30i64 {
            for (k, code, name, parent) in
                [(1, "A10", "Alpha 10", Some("P")), (2, "B2", "Beta", None)]
            {
                for (dtype, tname) in [(1, "secret"), (0, "temp")] {
                    if types.contains(&tname) && (i + k + dtype) % 4 != 0 {
                        let t = chrono::DateTime::from_timestamp_millis(T0 + i * MIN).unwrap();
                        expected.push((
                            t.format("%Y-%m-%d %H:%M:%S%.3f+0000").to_string(),
                            code.to_string(),
                            name.to_string(),
                            tname.to_string(),
                            parent.map(str::to_string),
                        ));
                    }
                }
            }
        }
        assert_eq!(got, expected, "{roles:?}");
    }
}

#[tokio::test]
async fn split_and_compiled_where_answer_the_same_bytes() {
    let (_dir, state) = store().await;
    let pairs = [
        (
            "scode.in.(\"A1\",\"B2\")",
            "mvalidtime.gteq.2024-01-15T10:05:00",
        ),
        ("or(sname.re.\"^Alpha\",scode.eq.\"B2\")", "mvalue.lt.3"),
        ("pcode.eq.\"P\"", "mtransactiontime.gt.2020-01-01"),
        (
            "smetadata.city.eq.\"Bolzano\"",
            "mvalue.in.(\"on\",\"idle\")",
        ),
        ("mperiod.eq.300", "prname.eq.\"collector\""),
    ];
    let shapes = [
        "limit=-1",
        "limit=7&offset=3",
        "limit=-1&select=scode,mvalue",
        "limit=-1&select=mvalidtime,mvalue&distinct=true",
        "limit=-1&select=tname,mperiod,scode&distinct=true",
        "limit=5&offset=2&select=sname,mvalue&distinct=true",
        "limit=-1&timezone=UTC%2B2&shownull=true&select=scode,mvalidtime,mvalue,pname",
        "limit=-1&shownull=true&select=prname,mvalue,scode,prlineage,mvalidtime",
        // JSON paths of the measurement and of the station in the selection.
        "limit=-1&select=mvalidtime,mvalue.a,smetadata.city,scode",
    ];
    let mut compared = 0;
    for (station, measurement) in pairs {
        for shape in shapes {
            for repr in ["flat", "tree"] {
                for roles in [None, Some(&["ADMIN"][..])] {
                    let base = format!("/v2/{repr}/MeteoStation/*/2024-01-15/2024-01-16?{shape}");
                    let b1 =
                        narrow_and_compiled(&state, &base, (station, measurement), roles).await;
                    if b1.len() > 40 {
                        compared += 1;
                    }
                }
            }
        }
    }
    // Most combinations answer rows (a filter matching nothing would prove little).
    assert!(compared > 100, "only {compared} non-empty answers");
    // A path of JSON values reads the documents' values (the station's text values,
    // another series, have none), narrow as compiled.
    let uri = format!(
        "/v2/flat/MeteoStation/state/2024-01-15/2024-01-16?limit=-1&select=mvalue.a,scode&where={}",
        enc("scode.eq.\"B2\",mvalidtime.lt.2024-01-15T10:06:00")
    );
    let (s, body) = call(&state, &uri, None, None).await;
    assert_eq!(s, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    let values: Vec<Value> = rows(&body).iter().map(|r| r["mvalue.a"].clone()).collect();
    let none = Value::Null;
    assert_eq!(
        values,
        [none.clone(), json!(0), none, json!(1), json!(2)],
        "{uri}"
    );
}

/// 64 series whose rows interleave minute by minute, each with more rows than one fetch
/// of the PostgreSQL narrow read takes (65,536 buffered rows / 64 series): every row
/// comes from a new fetch of another series while the last one is still arriving. Read
/// narrow and compiled, whole and cut by a limit, they answer the same bytes.
#[tokio::test]
async fn series_longer_than_a_fetch_answer_the_same_bytes_merged() {
    use hub_store::timeseries::{RecordInput, RecordValue};
    let codes: Vec<String> = (0..64).map(|n| format!("M{n:02}")).collect();
    let (_dir, store) = support::meteo_stations(&codes).await;
    let ts = store.timeseries();
    let records: Vec<RecordInput> = (0..64i64)
        .flat_map(|n| {
            (0..1_100i64).map(move |i| RecordInput {
                station_code: format!("M{n:02}"),
                data_type: "temp".into(),
                period: 600,
                timestamp: T0 + (i * 64 + n) * MIN,
                value: RecordValue::Double(((i * 13 + n * 7) % 40) as f64 / 4.0),
            })
        })
        .collect();
    let sum = ts
        .push_records("MeteoStation".into(), None, records)
        .await
        .unwrap();
    assert_eq!(sum.inserted, 64 * 1_100);
    let state = support::state_opening(&store, &["MeteoStation"], &["temp"]);
    let (station, measurement) = ("scode.re.\"^M\"", "mvalue.gteq.0");
    for shape in [
        "limit=-1",
        "limit=3000&offset=20000&select=scode,mvalidtime,mvalue",
    ] {
        let base = format!("/v2/flat/MeteoStation/temp/2024-01-15/2024-03-10?{shape}");
        let b1 = narrow_and_compiled(&state, &base, (station, measurement), None).await;
        let got = rows(&b1);
        assert_eq!(
            got.len(),
            if shape == "limit=-1" {
                64 * 1_100
            } else {
                3_000
            }
        );
        // Minute by minute, station after station.
        assert_eq!(
            got[1]["scode"],
            if shape == "limit=-1" { "M01" } else { "M33" }
        );
    }
}

/// Two series over three months at one value a minute: on PostgreSQL each series'
/// history is read a month at a time (a portal per window, the next one asked for while
/// the current one is read), a month taking several fetches. Read narrow and compiled,
/// whole and cut across a month's start by offset and limit, they answer the same bytes.
#[tokio::test]
async fn series_read_month_by_month_answer_the_same_bytes_merged() {
    use hub_store::timeseries::{RecordInput, RecordValue};
    let (_dir, store) = support::meteo_stations(&["W1".to_string(), "W2".to_string()]).await;
    let ts = store.timeseries();
    let start = 1_706_659_200_000; // 2024-01-31T00:00:00Z
    let minutes = 31 * 1_440; // to 2024-03-02
    for (n, code) in ["W1", "W2"].iter().enumerate() {
        let records: Vec<RecordInput> = (0..minutes)
            .filter(|i| (i + n as i64) % 5 != 0)
            .map(|i| RecordInput {
                station_code: code.to_string(),
                data_type: "temp".into(),
                period: 60,
                timestamp: start + i * MIN,
                value: RecordValue::Double(((i * 7 + n as i64) % 50) as f64 / 2.0),
            })
            .collect();
        ts.push_records("MeteoStation".into(), None, records)
            .await
            .unwrap();
    }
    let state = support::state_opening(&store, &["MeteoStation"], &["temp"]);
    let (station, measurement) = ("scode.in.(\"W1\",\"W2\")", "mvalue.gteq.0");
    // Offset 1,600 reaches past the first day (January) into February.
    for shape in [
        "limit=-1&select=scode,mvalidtime,mvalue",
        "limit=70000&offset=1600&select=mvalidtime,scode",
        "limit=30&offset=2290&select=mvalidtime,scode,mvalue",
    ] {
        let base = format!("/v2/flat/MeteoStation/temp/2024-01-31/2024-03-02?{shape}");
        let b1 = narrow_and_compiled(&state, &base, (station, measurement), None).await;
        let got = rows(&b1);
        let all = 2 * minutes as usize * 4 / 5;
        let expected = match shape.split('&').next() {
            Some("limit=-1") => all,
            Some("limit=70000") => 70_000.min(all - 1_600),
            _ => 30,
        };
        assert_eq!(got.len(), expected, "{shape}");
    }
}

/// The `data` of an answer: what differs between a latest answer read unordered
/// (`limit=-1`) and one read with the compiled `ORDER BY` (a limit above the row count)
/// is only the envelope's `limit`.
fn data_bytes(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap();
    v["data"].to_string()
}

/// Latest values without a limit are read in any order and sorted by the store: they
/// answer the rows, in the order, the compiled query answers with a limit, whatever the
/// shape, `select`, `distinct`, `offset`, `where` or caller.
#[tokio::test]
async fn latest_values_sorted_in_the_store_answer_as_the_compiled_order() {
    let (_dir, state) = store().await;
    for roles in [None, Some(&["ADMIN"][..])] {
        for repr in ["flat", "tree"] {
            for params in [
                "",
                "&offset=3",
                "&offset=100",
                "&select=scode,tname,mvalue",
                "&select=scode,tname,mvalue,prname,tunit&distinct=false&offset=2",
                "&select=pname,pmetadata,smetadata,tmetadata,prlineage&distinct=false&shownull=true",
                "&select=sname&distinct=true",
                "&select=mvalue.a,mperiod",
                "&select=mvalidtime,pcode&shownull=true",
                &format!("&where={}", enc("pcode.eq.\"P\"")),
                &format!("&where={}", enc("or(sname.eq.\"Beta\",mperiod.eq.300)")),
                "&timezone=Europe/Rome&offset=1",
            ] {
                let base = format!("/v2/{repr}/MeteoStation/*/latest?");
                let (s1, unordered) =
                    call(&state, &format!("{base}limit=-1{params}"), None, roles).await;
                let (s2, ordered) =
                    call(&state, &format!("{base}limit=1000{params}"), None, roles).await;
                assert_eq!(
                    s1,
                    StatusCode::OK,
                    "{}",
                    String::from_utf8_lossy(&unordered)
                );
                assert_eq!(s2, StatusCode::OK, "{}", String::from_utf8_lossy(&ordered));
                assert_eq!(
                    data_bytes(&unordered),
                    data_bytes(&ordered),
                    "{repr} {params} as {roles:?}"
                );
            }
        }
    }
    // The rows are there and in order: time, station code, type, period.
    let (_, body) = call(
        &state,
        "/v2/flat/MeteoStation/*/latest?limit=-1&select=mvalidtime,scode,tname,mperiod",
        None,
        Some(&["ADMIN"]),
    )
    .await;
    let got: Vec<(String, String, String, i64)> = rows(&body)
        .iter()
        .map(|r| {
            (
                r["mvalidtime"].as_str().unwrap().to_string(),
                r["scode"].as_str().unwrap().to_string(),
                r["tname"].as_str().unwrap().to_string(),
                r["mperiod"].as_i64().unwrap(),
            )
        })
        .collect();
    // 3 stations × (temp at 60 and 300, secret, state as strings), and JSON values of
    // two of them (a series of their own) = 14 series.
    assert_eq!(got.len(), 14, "{got:?}");
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(got, sorted);
}

/// More latest rows than the store sorts in memory: the store stops reading them and
/// answers with the compiled query, streamed in its order; nothing is answered twice.
#[tokio::test]
async fn latest_values_beyond_the_in_memory_bound_are_answered_by_the_ordered_query() {
    use hub_query::timeseries::{compile_query, Route, TsQuery};
    use hub_store::timeseries::{RecordInput, RecordValue};
    let codes: Vec<String> = (0..40).map(|n| format!("L{:02}", (n * 7) % 40)).collect();
    let (_dir, store) = support::meteo_stations(&codes).await;
    let ts = store.timeseries();
    let records = codes
        .iter()
        .enumerate()
        .map(|(n, code)| RecordInput {
            station_code: code.clone(),
            data_type: "temp".into(),
            period: 60,
            timestamp: T0 + (n as i64 % 3) * MIN,
            value: RecordValue::Double(n as f64),
        })
        .collect();
    ts.push_records("MeteoStation".into(), None, records)
        .await
        .unwrap();
    let q = TsQuery {
        route: Route::Latest,
        tree: false,
        types: Some(vec!["MeteoStation".into()]),
        data_types: None,
        filter: None,
        select: Some("scode,mvalue".into()),
        distinct: false,
        limit: -1,
        offset: 5,
        access: None,
    };
    let read = |max_rows: Option<usize>| {
        let mut compiled = compile_query(&q, ts.dialect()).unwrap();
        match max_rows {
            Some(max) => {
                compiled
                    .unordered
                    .as_mut()
                    .expect("latest without limit")
                    .max_rows = max
            }
            None => compiled.unordered = None,
        }
        let mut batches = ts.query_batches(compiled);
        async move {
            let mut rows = Vec::new();
            while let Some(batch) = batches.next().await {
                rows.extend(batch.unwrap());
            }
            rows
        }
    };
    let ordered = read(None).await;
    assert_eq!(ordered.len(), 35);
    for max_rows in [1, 39, 40, 41, 10_000] {
        assert_eq!(read(Some(max_rows)).await, ordered, "max_rows {max_rows}");
    }
}

/// Latest answers after stations, a parent and a data type changed show the changes at
/// once: on PostgreSQL their columns come from a catalog the store keeps between reads,
/// used only at the row versions the read finds.
#[tokio::test]
async fn latest_values_show_station_parent_and_type_changes_at_once() {
    let (_dir, state) = store().await;
    // Without `distinct` (a `SELECT DISTINCT` is answered by the compiled query).
    let uri = "/v2/flat/MeteoStation/temp/latest?limit=-1&distinct=false&select=scode,sname,smetadata,pname,pcode,tunit,tmetadata,mperiod";
    let admin = Some(&["ADMIN"][..]);
    let answer = |uri: String| {
        let state = state.clone();
        async move {
            let (s, body) = call(&state, &uri, None, admin).await;
            assert_eq!(s, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
            rows(&body)
        }
    };
    let before = answer(uri.to_string()).await;
    let a10 = before.iter().find(|r| r["scode"] == "A10").unwrap();
    assert_eq!(a10["sname"], "Alpha 10");
    assert_eq!(a10["pname"], "Parent");
    assert_eq!(a10["tunit"], "°C");
    post(
        &state,
        "/v2/json/syncStations/Area",
        json!([{"id": "P", "name": "Parent renamed", "origin": "O"}, {"id": "Q", "name": "Other parent", "origin": "O"}]),
    )
    .await;
    post(
        &state,
        "/v2/json/syncStations/MeteoStation",
        json!([
            {"id": "A1", "name": "Alpha", "origin": "O", "latitude": 46.5, "longitude": 11.3, "metaData": {"city": "Bozen"}, "parentStation": "Q", "parentStationType": "Area"},
            {"id": "A10", "name": "Alpha ten", "origin": "O", "latitude": 46.6, "longitude": 11.2, "metaData": {"city": "Bolzano Sud"}, "parentStation": "P", "parentStationType": "Area"},
            {"id": "B2", "name": "Beta", "origin": "O", "latitude": 46.7, "longitude": 11.1},
        ]),
    )
    .await;
    post(
        &state,
        "/v2/json/syncDataTypes",
        json!([{"name": "temp", "unit": "K", "metaData": {"scale": 2}}]),
    )
    .await;
    let after = answer(uri.to_string()).await;
    let ordered = answer(uri.replace("limit=-1", "limit=1000")).await;
    assert_eq!(after, ordered);
    let by_code = |code: &str| after.iter().find(|r| r["scode"] == code).unwrap().clone();
    assert_eq!(by_code("A10")["sname"], "Alpha ten");
    assert_eq!(by_code("A10")["pname"], "Parent renamed");
    assert_eq!(by_code("A1")["smetadata"], json!({"city": "Bozen"}));
    assert_eq!(by_code("A1")["pcode"], "Q");
    assert_eq!(by_code("B2")["tunit"], "K");
    assert_eq!(by_code("B2")["tmetadata"], json!({"scale": 2}));
}

/// The provenances of a history answer read narrow are kept between reads (the store
/// reads them again only when `ts_provenance` changed): values pushed under a collector
/// version registered after a read show that version in the next read, at once, as the
/// compiled query shows it.
#[tokio::test]
async fn history_shows_a_provenance_registered_after_a_read_at_once() {
    let (_dir, state) = store().await;
    let base = format!(
        "/v2/flat/MeteoStation/temp/{}/{}?limit=-1&select=mvalidtime,mvalue,prname,prversion",
        "2024-01-15T10:00:00.000Z", "2024-01-15T12:00:00.000Z"
    );
    let split = ("scode.eq.\"A1\"", "mvalue.gteq.0");
    let versions = |body: &[u8]| -> Vec<Value> {
        let mut seen: Vec<Value> = Vec::new();
        for row in rows(body) {
            if !seen.contains(&row["prversion"]) {
                seen.push(row["prversion"].clone());
            }
        }
        seen
    };
    // Read twice, so the second read takes the provenances kept by the first.
    narrow_and_compiled(&state, &base, split, None).await;
    let before = narrow_and_compiled(&state, &base, split, None).await;
    // The store's later values of A1 have no provenance.
    assert_eq!(versions(&before), vec![json!("1"), Value::Null]);

    let prov = register_collector(&state, "2").await;
    let newer: Vec<Value> = (40..45)
        .map(|i| json!({"timestamp": T0 + i * MIN, "value": i as f64, "period": 60}))
        .collect();
    post(
        &state,
        "/v2/json/pushRecords/MeteoStation",
        json!({"name": "(default)", "provenance": prov, "data": [], "branch": {"A1": {"branch": {"temp": {"data": newer}}}}}),
    )
    .await;

    let after = narrow_and_compiled(&state, &base, split, None).await;
    assert_eq!(versions(&after), vec![json!("1"), Value::Null, json!("2")]);
    let pushed = rows(&after)
        .into_iter()
        .find(|r| r["mvalue"].as_f64() == Some(44.0))
        .unwrap();
    assert_eq!(pushed["prname"], "collector");
    assert_eq!(pushed["prversion"], "2");
}
