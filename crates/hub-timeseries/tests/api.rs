//! API tests: the real router against a real SQLite store (one per test binary), data
//! ingested through the writer endpoints.

use std::collections::BTreeSet;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use hub_query::timeseries::AccessRule;
use hub_store::timeseries::{EdgeInput, EventInput, StationInput};
use hub_store::Store;
use hub_timeseries::{router, Roles, TimeseriesConfig, TimeseriesState};
use serde_json::{json, Value};
use tokio::sync::OnceCell;
use tower::ServiceExt;

struct Env {
    _dir: tempfile::TempDir,
    state: TimeseriesState,
}

static ENV: OnceCell<Env> = OnceCell::const_new();

fn config() -> TimeseriesConfig {
    let mut c = TimeseriesConfig {
        base_url: "http://hub.test/v2".into(),
        ..Default::default()
    };
    c.open_rules = vec![
        AccessRule {
            station_types: vec!["ParkingStation".into()],
            origins: vec!["FAMAS".into()],
            ..Default::default()
        },
        AccessRule {
            station_types: vec!["EChargingStation".into(), "EChargingPlug".into()],
            ..Default::default()
        },
    ];
    c.role_rules.insert(
        "SECRET".into(),
        vec![AccessRule {
            origins: vec!["SECRET".into()],
            ..Default::default()
        }],
    );
    c
}

const T0: i64 = 1_705_312_800_000; // 2024-01-15T10:00:00Z
const MIN10: i64 = 600_000;

async fn env() -> &'static Env {
    ENV.get_or_init(|| async {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_sqlite(dir.path()).unwrap();
        let state = TimeseriesState::new(store.clone(), config());
        let w = |path: &str, body: Value| {
            let state = state.clone();
            let path = path.to_string();
            async move {
                let (s, v) = call_state(&state, "POST", &path, Some(body), Some(&["WRITER"])).await;
                assert!(s.is_success(), "{path}: {s} {v}");
                v
            }
        };
        let prov = w("/v2/json/provenance", json!({"lineage": "el-parking", "dataCollector": "parking-collector", "dataCollectorVersion": "f4f0"})).await;
        let prov = prov.as_str().unwrap().to_string();
        w("/v2/json/syncDataTypes", json!([
            {"name": "free", "unit": "", "description": "free", "rtype": "Instantaneous", "metaData": {}},
            {"name": "occupied", "description": "occupied", "rtype": "Instantaneous"},
            {"name": "status", "description": "plug state"},
            {"name": "report", "description": "json report"}
        ])).await;
        w("/v2/json/syncStations/ParkingStation", json!([
            {"id": "103", "name": "P03 - Piazza Walther", "origin": "FAMAS", "latitude": 46.497805, "longitude": 11.355115, "metaData": {"capacity": 403, "municipality": "Bolzano - Bozen"}},
            {"id": "104", "name": "P04 - Stazione", "origin": "FAMAS", "latitude": 46.49, "longitude": 11.36, "metaData": {"capacity": 120, "municipality": "Bolzano - Bozen"}},
            {"id": "200", "name": "P200 - Private", "origin": "SECRET", "latitude": 46.6, "longitude": 11.1, "metaData": {"capacity": 10}}
        ])).await;
        w("/v2/json/syncStations/EChargingStation", json!([{"id": "E1", "name": "Charger", "origin": "ALPERIA", "latitude": 46.5, "longitude": 11.3, "metaData": {"outlets": [{"id": "1", "maxPower": 22.5}], "state": "ACTIVE"}}])).await;
        w("/v2/json/syncStations/EChargingPlug", json!([{"id": "E1-1", "name": "Charger plug", "origin": "ALPERIA", "latitude": 46.5, "longitude": 11.3, "parentStation": "E1", "parentStationType": "EChargingStation"}])).await;
        let rec = |t: i64, v: Value| json!({"timestamp": t, "value": v, "period": 600});
        w(&format!("/v2/json/pushRecords/ParkingStation"), json!({"name": "(default)", "provenance": prov, "data": [], "branch": {
            "103": {"data": [], "branch": {
                "free": {"data": [rec(T0, json!(192)), rec(T0 + MIN10, json!(190.5)), rec(T0 + 2 * MIN10, json!(188))]},
                "occupied": {"data": [rec(T0, json!(211)), rec(T0 + MIN10, json!(212.5)), rec(T0 + 2 * MIN10, json!(215))]}}},
            "104": {"branch": {"free": {"data": [rec(T0 + MIN10, json!(50))]}}},
            "200": {"branch": {"free": {"data": [rec(T0 + MIN10, json!(7))]}}}
        }})).await;
        w(&format!("/v2/json/pushRecords?provenance={prov}"), json!({
            "EChargingPlug": {"E1-1": {"status": [rec(T0, json!("AVAILABLE")), rec(T0 + MIN10, json!("OCCUPIED"))]}},
            "EChargingStation": {"E1": {"report": [rec(T0 + MIN10, json!({"sky": "sunny", "n": 3}))]}}
        })).await;
        let sta = |code: &str, x: f64| StationInput { code: code.into(), name: format!("sensor {code}"), origin: Some("A22".into()), coordinate: Some((x, 46.4)), ..Default::default() };
        store.ts_sync_stations("TrafficSensor".into(), vec![sta("T1", 11.0), sta("T2", 11.2)], false, false).await.unwrap();
        store.ts_put_edges(vec![EdgeInput {
            station_type: "LinkStation".into(),
            station: StationInput { code: "T1->T2".into(), name: "tis -> cfirmiano".into(), origin: Some("NOI".into()), ..Default::default() },
            begin: Some(("TrafficSensor".into(), "T1".into())),
            end: Some(("TrafficSensor".into(), "T2".into())),
            directed: true,
            line: vec![(11.0, 46.4), (11.1, 46.41), (11.2, 46.4)],
        }]).await.unwrap();
        let ev = |uuid: &str, series: &str, start: i64, end: Option<i64>| EventInput {
            uuid: uuid.into(), origin: "PROVINCE_BZ".into(), category: "roadworks".into(), series_uuid: series.into(), name: uuid.into(),
            description: Some("works".into()), location_description: Some("km 3".into()),
            geometry: Some(json!({"type": "Point", "coordinates": [11.3, 46.5]})), start: Some(start), end, provenance_uuid: Some(prov.clone()), ..Default::default()
        };
        store.ts_put_events(vec![ev("ev1", "s1", T0, Some(T0 + MIN10)), ev("ev2", "s1", T0 + MIN10, None), ev("ev3", "s2", T0, Some(T0 + 1))]).await.unwrap();
        Env { _dir: dir, state }
    })
    .await
}

async fn call_state(state: &TimeseriesState, method: &str, uri: &str, body: Option<Value>, roles: Option<&[&str]>) -> (StatusCode, Value) {
    let mut req = Request::builder().method(method).uri(uri);
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let mut req = req
        .body(body.map(|b| Body::from(b.to_string())).unwrap_or_else(Body::empty))
        .unwrap();
    if let Some(r) = roles {
        req.extensions_mut().insert(Roles(r.iter().map(|s| s.to_string()).collect()));
    }
    let resp = router(state.clone()).oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = http_body_util::BodyExt::collect(resp.into_body()).await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

async fn get(uri: &str) -> (StatusCode, Value) {
    call_state(&env().await.state, "GET", uri, None, None).await
}

async fn get_as(uri: &str, roles: &[&str]) -> (StatusCode, Value) {
    call_state(&env().await.state, "GET", uri, None, Some(roles)).await
}

async fn ok(uri: &str) -> Value {
    let (s, v) = get(uri).await;
    assert_eq!(s, StatusCode::OK, "{uri}: {v}");
    v
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

#[tokio::test]
async fn root_and_type_lists() {
    let root = ok("/v2").await;
    assert_eq!(root.as_array().unwrap().len(), 7);
    assert_eq!(root[0]["self"], "http://hub.test/v2/tree,node");
    let flat = ok("/v2/flat").await;
    let ids: Vec<&str> = flat.as_array().unwrap().iter().map(|x| x["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "EChargingPlug",
            "EChargingStation",
            "LinkStation",
            "ParkingStation",
            "TrafficSensor"
        ]
    );
    assert_eq!(
        flat[3]["self.stations+datatypes+measurements"],
        "http://hub.test/v2/flat/ParkingStation/*/latest"
    );
    assert!(flat[3]["description"].is_null() && flat[3].get("description").is_some());
    let tree = ok("/v2/Node,TREE").await;
    assert_eq!(tree[3]["self"]["stations"], "http://hub.test/v2/Node,TREE/ParkingStation");
    assert_eq!(
        ok("/v2/flat,edge").await[0]["self.edges"],
        "http://hub.test/v2/flat,edge/LinkStation"
    );
    assert_eq!(ok("/v2/tree,event").await[0]["id"], "PROVINCE_BZ");
    assert_eq!(ok("/v2/apispec").await["openapi"], "3.0.3");
}

#[tokio::test]
async fn stations_flat_and_tree() {
    let v = ok("/v2/flat/ParkingStation").await;
    assert_eq!((v["offset"].clone(), v["limit"].clone()), (json!(0), json!(200)));
    let d = v["data"].as_array().unwrap();
    assert_eq!(d.len(), 3);
    assert_eq!(
        d[0],
        json!({"sactive": true, "savailable": true, "scode": "103", "scoordinate": {"x": 11.355115, "y": 46.497805, "srid": 4326},
        "smetadata": {"capacity": 403, "municipality": "Bolzano - Bozen"}, "sname": "P03 - Piazza Walther", "sorigin": "FAMAS", "stype": "ParkingStation"})
    );
    let plug = ok("/v2/flat/EChargingPlug").await;
    assert_eq!(plug["data"][0]["pcode"], "E1");
    assert_eq!(plug["data"][0]["pmetadata"]["state"], "ACTIVE");
    let t = ok("/v2/tree/EChargingPlug").await;
    assert!(
        t["data"]["EChargingPlug"]["stations"]["E1-1"].get("sparent").is_none(),
        "no sparent at level 2"
    );
    let t3 = ok("/v2/tree/EChargingPlug/*").await;
    let st = &t3["data"]["EChargingPlug"]["stations"]["E1-1"];
    assert_eq!(st["sparent"]["pcode"], "E1");
    assert_eq!(keys(&st["sdatatypes"]), ["status"]);
    let flat3 = ok("/v2/flat/ParkingStation/free").await;
    assert_eq!(flat3["data"].as_array().unwrap().len(), 3);
    assert_eq!(flat3["data"][0]["tname"], "free");
    assert_eq!(ok("/v2/flat/Unknown").await["data"], json!([]));
    assert_eq!(ok("/v2/tree/Unknown").await["data"], json!({}));
}

#[tokio::test]
async fn latest_and_history() {
    let v = ok("/v2/flat/ParkingStation/free/latest").await;
    let d = v["data"].as_array().unwrap();
    assert_eq!(d.len(), 2, "closed station 200 is absent: {v}");
    assert_eq!(d[0]["_timestamp"], "2024-01-15 10:10:00.000+0000");
    assert_eq!(d[0]["scode"], "104");
    assert_eq!(d[1]["mvalue"], 188);
    assert_eq!(d[1]["prname"], "parking-collector");
    assert_eq!(d[1]["mperiod"], 600);
    let h = ok("/v2/flat/ParkingStation/free/2024-01-15T10:00/2024-01-15T10:20?timezone=Europe/Rome&select=mvalue,scode").await;
    let d = h["data"].as_array().unwrap();
    assert_eq!(d.len(), 3, "half-open range: {h}");
    assert_eq!(
        d[0],
        json!({"_timestamp": "2024-01-15 11:00:00.000+0100", "mvalue": 192, "scode": "103"})
    );
    assert_eq!(d[1]["mvalue"], 190.5);
    let tree = ok("/v2/tree/ParkingStation/free,occupied/latest").await;
    let t = &tree["data"]["ParkingStation"]["stations"]["103"]["sdatatypes"];
    assert_eq!(keys(t), ["free", "occupied"]);
    let m = &t["free"]["tmeasurements"][0];
    assert_eq!(keys(m), ["mperiod", "mprovenance", "mtransactiontime", "mvalidtime", "mvalue"]);
    assert_eq!(keys(&m["mprovenance"]), ["prlineage", "prname", "prversion"]);
    let th = ok("/v2/tree/ParkingStation/free/2024-01-15/2024-01-16").await;
    let ms = th["data"]["ParkingStation"]["stations"]["103"]["sdatatypes"]["free"]["tmeasurements"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        ms.iter().map(|m| m["mvalue"].clone()).collect::<Vec<_>>(),
        [json!(192), json!(190.5), json!(188)]
    );
    let s = ok("/v2/flat/EChargingPlug,EChargingStation/*/latest").await;
    let vals: Vec<Value> = s["data"].as_array().unwrap().iter().map(|r| r["mvalue"].clone()).collect();
    assert!(
        vals.contains(&json!("OCCUPIED")) && vals.contains(&json!({"sky": "sunny", "n": 3})),
        "{vals:?}"
    );
    let md = ok("/v2/tree/ParkingStation/metadata/2000-01-01/2100-01-01").await;
    assert_eq!(
        md["data"]["ParkingStation"]["stations"]["103"]["smetadatahistory"][0]["mhmetadata"]["capacity"],
        403
    );
}

#[tokio::test]
async fn edges_and_events() {
    let e = ok("/v2/flat,edge/LinkStation").await;
    let row = &e["data"][0];
    assert_eq!(row["ename"], "tis -> cfirmiano");
    assert_eq!(row["sbcode"], "T1");
    assert_eq!(row["egeometry"]["bbox"], json!([11, 46.4, 11.2, 46.41]));
    assert_eq!(row["egeometry"]["crs"]["properties"]["name"], "EPSG:4326");
    let t = ok("/v2/tree,edge/*").await;
    let edge = &t["data"]["LinkStation"]["edges"]["T1->T2"];
    assert_eq!(edge["ebegin"]["sbcode"], "T1");
    assert_eq!(edge["eend"]["secode"], "T2");
    let w = ok("/v2/flat,edge/LinkStation?where=egeometry.bbi.(11.09,46.405,11.11,46.42)").await;
    assert_eq!(w["data"].as_array().unwrap().len(), 1);
    let w = ok("/v2/flat,edge/LinkStation?where=egeometry.bbi.(11.09,46.0,11.11,46.1)").await;
    assert_eq!(w["data"], json!([]));
    assert_eq!(get("/v2/flat,edge/LinkStation/x").await.0, StatusCode::NOT_FOUND);
    let ev = ok("/v2/tree,event/PROVINCE_BZ/latest").await;
    let series = &ev["data"]["PROVINCE_BZ"]["eventseries"];
    assert_eq!(keys(&series["s1"]["events"]), ["ev2"]);
    assert_eq!(series["s1"]["events"]["ev2"]["evlocation"]["evldescription"], "km 3");
    let all = ok("/v2/flat,event/*").await;
    assert_eq!(all["data"].as_array().unwrap().len(), 3);
    let at = ok("/v2/flat,event/PROVINCE_BZ/2024-01-15T10:05").await;
    let uuids: Vec<&str> = at["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["evuuid"].as_str().unwrap())
        .collect();
    assert_eq!(uuids, ["ev1", "ev2"]);
}

#[tokio::test]
async fn parameters() {
    let v = ok("/v2/flat/ParkingStation?limit=1&offset=1").await;
    assert_eq!((v["limit"].clone(), v["offset"].clone()), (json!(1), json!(1)));
    assert_eq!(v["data"][0]["scode"], "104");
    assert_eq!(ok("/v2/flat/ParkingStation?limit=-1").await["data"].as_array().unwrap().len(), 3);
    assert_eq!(ok("/v2/flat/ParkingStation?limit=0").await["data"].as_array().unwrap().len(), 3);
    let s = ok("/v2/flat/ParkingStation?select=scode,smetadata.capacity").await;
    assert_eq!(s["data"][0], json!({"scode": "103", "smetadata.capacity": 403}));
    let s = ok("/v2/tree/ParkingStation?select=smetadata.municipality").await;
    assert_eq!(
        s["data"]["ParkingStation"]["stations"]["103"],
        json!({"smetadata": {"municipality": "Bolzano - Bozen"}})
    );
    assert_eq!(
        ok("/v2/flat/ParkingStation?select=sorigin").await["data"].as_array().unwrap().len(),
        2
    );
    assert_eq!(
        ok("/v2/flat/ParkingStation?select=sorigin&distinct=false").await["data"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let n = ok("/v2/flat/ParkingStation?select=scode,pcode&shownull=true").await;
    assert_eq!(n["data"][0], json!({"pcode": null, "scode": "103"}));
    assert_eq!(ok("/v2/flat/ParkingStation?select=pcode").await["data"], json!([]));
    for (w, n) in [
        ("scode.eq.\"103\"", 1),
        ("scode.in.(\"103\",\"104\")", 2),
        ("sname.ire.walther", 1),
        ("sname.nre.^P0", 1),
        ("smetadata.capacity.gt.200", 1),
        ("smetadata.municipality.eq.Bolzano - Bozen", 2),
        ("scoordinate.bbi.(11.35,46.49,11.37,46.50)", 2),
        ("scoordinate.bbc.(11.35,46.49,11.37,46.50,4326)", 2),
        ("scoordinate.dlt.(1000,11.355,46.4978)", 2),
        ("or(scode.eq.\"103\",sorigin.eq.SECRET)", 2),
        ("and(sactive.eq.true,or(scode.eq.\"103\",scode.eq.\"104\"))", 2),
        ("pcode.eq.null", 3),
    ] {
        let v = ok(&format!("/v2/flat/ParkingStation?where={}", urlenc(w))).await;
        assert_eq!(v["data"].as_array().unwrap().len(), n, "where {w}: {v}");
    }
    let m = ok(&format!(
        "/v2/flat/ParkingStation/*/2024-01-15/2024-01-16?where={}",
        urlenc("mvalue.gt.200,scoordinate.bbi.(11,46,12,47)")
    ))
    .await;
    assert_eq!(
        m["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["mvalue"].clone())
            .collect::<Vec<_>>(),
        [json!(211), json!(212.5), json!(215)]
    );
    let j = ok(&format!(
        "/v2/flat/EChargingStation/*/latest?where={}",
        urlenc("mvalue.sky.eq.sunny")
    ))
    .await;
    assert_eq!(j["data"].as_array().unwrap().len(), 1);
    let st = ok(&format!("/v2/flat/EChargingPlug/*/latest?where={}", urlenc("mvalue.eq.OCCUPIED"))).await;
    assert_eq!(st["data"].as_array().unwrap().len(), 1);
    let tz = ok("/v2/flat/ParkingStation/free/latest?timezone=UTC%2B2&select=mvalidtime&where=scode.eq.%22103%22").await;
    assert_eq!(tz["data"][0]["mvalidtime"], "2024-01-15 12:20:00.000+0200");
}

fn urlenc(s: &str) -> String {
    form_urlencoded_encode(s)
}

fn form_urlencoded_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[tokio::test]
async fn errors() {
    let (s, v) = get(&format!("/v2/flat/ParkingStation?where={}", urlenc("a.eq.1)"))).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(
        v["message"],
        "PARSING ERROR: Syntax error at position 6 with character ): <EOL> expected"
    );
    assert_eq!(v["description"], "Syntax error in WHERE-clause");
    assert_eq!(v["info"]["input_marked"], "a.eq.1--->)<---");
    assert_eq!((v["code"].clone(), v["error"].clone()), (json!(400), json!("Bad Request")));
    assert!(v["timestamp"].as_str().unwrap().ends_with('Z'));
    let (s, v) = get(&format!("/v2/flat/ParkingStation?where={}", urlenc("scode.eq.103"))).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(v["message"].as_str().unwrap().contains("must be quoted: scode.eq.'103'"), "{v}");
    let (s, v) = get(&format!("/v2/flat/ParkingStation?where={}", urlenc("scoordinate.bbi(11,46,12,47)"))).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let (s, v) = get("/v2/flat/ParkingStation?where=tname.eq.x").await;
    assert_eq!(
        (s, v["message"].as_str().unwrap()),
        (
            StatusCode::BAD_REQUEST,
            "SELECT EXPANSION ERROR: Syntax Error in WHERE clause: Alias 'tname' does not exist"
        )
    );
    let (s, v) = get("/v2/flat/ParkingStation?select=foo").await;
    assert_eq!((s, v["info"]["targetName"].clone()), (StatusCode::BAD_REQUEST, json!("foo")));
    let (s, v) = get("/v2/flat,foo/ParkingStation").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(v["message"].as_str().unwrap().contains("'flat,foo' is not allowed"));
    let (s, v) = get("/v2/flat/ParkingStation/free/2024-13-01/2024-01-02").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(
        v["message"].as_str().unwrap().starts_with("PARSING ERROR: Invalid date given."),
        "{v}"
    );
    let (s, v) = get("/v2/flat/ParkingStation/free/newest").await;
    assert_eq!(
        (s, v["message"].as_str().unwrap()),
        (StatusCode::NOT_FOUND, "Route does not exist for representation FLAT_NODE")
    );
    assert_eq!(get("/v2/flat/a/b/c/d/e/f").await.0, StatusCode::NOT_FOUND);
    assert_eq!(get("/v2/flat/ParkingStation?limit=ten").await.0, StatusCode::BAD_REQUEST);
    assert_eq!(get("/v2/flat/ParkingStation?distinct=maybe").await.0, StatusCode::BAD_REQUEST);
    assert_eq!(
        get("/v2/flat/ParkingStation/free/latest?timezone=Mars/Base").await.0,
        StatusCode::BAD_REQUEST
    );
    let (s, v) = get(&format!("/v2/flat/ParkingStation?where={}", urlenc("sname.re.[a-"))).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(v["message"].as_str().unwrap().starts_with("Invalid regular expression"), "{v}");
    let (s, v) = get("/v2/flat/ParkingStation/*/latest?where=mvalue.eq.true").await;
    assert_eq!(
        (s, v["message"].as_str().unwrap()),
        (
            StatusCode::BAD_REQUEST,
            "DATA FETCHING ERROR: 'mvalue' can only be used with NULL, NUMBERS or STRINGS: 'BOOLEAN' given."
        )
    );
    let (s, _) = get("/v2/flat/ParkingStation/*?where=mvalue.gt.50").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "mvalue is out of scope at level 3");
}

#[tokio::test]
async fn closed_data_rules() {
    let anon = ok("/v2/flat/ParkingStation/free/latest?select=scode").await;
    let codes = |v: &Value| {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["scode"].as_str().unwrap().to_string())
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(codes(&anon), ["103", "104"].map(String::from).into());
    let (_, secret) = get_as("/v2/flat/ParkingStation/free/latest?select=scode", &["SECRET"]).await;
    assert_eq!(codes(&secret), ["103", "104", "200"].map(String::from).into());
    let (_, admin) = get_as("/v2/flat/ParkingStation/free/2024-01-01/2025-01-01?select=scode", &["BDP_ADMIN"]).await;
    assert!(codes(&admin).contains("200"));
    let (_, other) = get_as("/v2/flat/ParkingStation/free/latest?select=scode", &["OTHER"]).await;
    assert_eq!(codes(&other).len(), 2);
    // Metadata stays open.
    assert_eq!(
        ok("/v2/flat/ParkingStation?select=scode").await["data"].as_array().unwrap().len(),
        3
    );
    assert_eq!(
        ok("/v2/flat/ParkingStation/*?select=scode").await["data"].as_array().unwrap().len(),
        3
    );
}

#[tokio::test]
async fn writer_rules() {
    let st = &env().await.state;
    let (s, _) = call_state(st, "POST", "/v2/json/syncDataTypes", Some(json!([])), None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let (s, _) = call_state(st, "POST", "/v2/json/syncDataTypes", Some(json!([])), Some(&["READER"])).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, v) = call_state(
        st,
        "POST",
        "/v2/json/pushRecords/ParkingStation",
        Some(json!({"104": {"free": [{"timestamp": T0, "value": true, "period": 600}]}})),
        Some(&["WRITER"]),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert_eq!(
        v["message"],
        "$.104.free[0].value: is required: a number, a string or a JSON object"
    );
    let (s, v) = call_state(
        st,
        "POST",
        "/v2/json/syncStations/ParkingStation",
        Some(json!([{"id": "x"}])),
        Some(&["WRITER"]),
    )
    .await;
    assert_eq!(
        (s, v["message"].as_str().unwrap()),
        (StatusCode::BAD_REQUEST, "$[0].name: is required (a non-empty string)")
    );
    // Older and duplicate records are ignored; a new one is stored once.
    let body = json!({"104": {"occupied": [{"timestamp": T0 + 5 * MIN10, "value": 1, "period": 600}, {"timestamp": T0 + 5 * MIN10, "value": 1, "period": 600}]}});
    let (s, v) = call_state(
        st,
        "POST",
        "/v2/json/pushRecords/ParkingStation",
        Some(body.clone()),
        Some(&["WRITER"]),
    )
    .await;
    assert_eq!(
        (s, v["inserted"].clone(), v["skipped_older"].clone()),
        (StatusCode::CREATED, json!(1), json!(1))
    );
    let (_, v) = call_state(st, "POST", "/v2/json/pushRecords/ParkingStation", Some(body), Some(&["WRITER"])).await;
    assert_eq!((v["inserted"].clone(), v["skipped_older"].clone()), (json!(0), json!(2)));
    let (_, v) = call_state(
        st,
        "GET",
        "/v2/json/getDateOfLastRecord/ParkingStation?stationId=104&typeId=occupied",
        None,
        Some(&["WRITER"]),
    )
    .await;
    assert_eq!(v, json!(T0 + 5 * MIN10));
    let (_, v) = call_state(
        st,
        "GET",
        "/v2/json/getDateOfLastRecord/ParkingStation?stationId=104&typeId=status",
        None,
        Some(&["WRITER"]),
    )
    .await;
    assert_eq!(v, json!(-1));
    let (_, v) = call_state(
        st,
        "GET",
        "/v2/json/getDateOfLastRecord/ParkingStation?stationId=nope",
        None,
        Some(&["WRITER"]),
    )
    .await;
    assert_eq!(v, json!(0));
    let (s, v) = call_state(
        st,
        "POST",
        "/v2/json/pushRecords/ParkingStation",
        Some(json!({"provenance": "missing", "branch": {}})),
        Some(&["WRITER"]),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
}

#[tokio::test]
async fn tree_latest_snapshot() {
    let mut v = ok("/v2/tree/EChargingPlug/*/latest").await;
    let m = &mut v["data"]["EChargingPlug"]["stations"]["E1-1"]["sdatatypes"]["status"]["tmeasurements"][0];
    m["mtransactiontime"] = json!("<now>");
    m["mprovenance"]["prversion"] = json!("f4f0");
    insta::assert_json_snapshot!(v);
}

/// Ingests data equivalent to the reference fixture and compares the tree's keys.
#[tokio::test]
async fn fixture_tree_has_the_reference_structure() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/timeseries/echargingtree.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("skipped: fixture {} not found", path.display());
        return;
    };
    let fixture: Value = serde_json::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sqlite(dir.path()).unwrap();
    let state = TimeseriesState::new(store.clone(), TimeseriesConfig::default());
    let stations = fixture["data"]["EChargingStation"]["stations"].as_object().unwrap();
    let sample: Vec<(&String, &Value)> = stations.iter().take(5).collect();
    let mut dtos = Vec::new();
    let mut types = serde_json::Map::new();
    let mut records = serde_json::Map::new();
    let mut prov = None;
    for (code, s) in &sample {
        dtos.push(json!({"id": code, "name": s["sname"], "origin": s["sorigin"], "longitude": s["scoordinate"]["x"], "latitude": s["scoordinate"]["y"], "metaData": s["smetadata"]}));
        let mut per_type = serde_json::Map::new();
        for (tname, t) in s["sdatatypes"].as_object().unwrap() {
            types.insert(
                tname.clone(),
                json!({"name": tname, "description": t["tdescription"], "metaData": t["tmetadata"]}),
            );
            let recs: Vec<Value> = t["tmeasurements"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    let ts = chrono::DateTime::parse_from_str(m["mvalidtime"].as_str().unwrap(), "%Y-%m-%d %H:%M:%S%.3f%z").unwrap();
                    prov.get_or_insert_with(|| m["mprovenance"].clone());
                    json!({"timestamp": ts.timestamp_millis(), "value": m["mvalue"], "period": m["mperiod"]})
                })
                .collect();
            per_type.insert(tname.clone(), Value::Array(recs));
        }
        records.insert(code.to_string(), Value::Object(per_type));
    }
    let p = prov.unwrap();
    let file = json!({
        "provenance": {"lineage": p["prlineage"], "dataCollector": p["prname"], "dataCollectorVersion": p["prversion"]},
        "dataTypes": types.values().cloned().collect::<Vec<_>>(),
        "stations": {"EChargingStation": dtos},
        "records": {"EChargingStation": records},
    });
    hub_timeseries::import_value(&store, &file).await.unwrap();
    let (s, ours) = call_state(&state, "GET", "/v2/tree/EChargingStation/*/latest?limit=-1", None, None).await;
    assert_eq!(s, StatusCode::OK);
    let ours_st = &ours["data"]["EChargingStation"]["stations"];
    assert_eq!(
        keys(&ours).into_iter().collect::<BTreeSet<_>>(),
        keys(&fixture).into_iter().collect::<BTreeSet<_>>()
    );
    for (code, theirs) in sample {
        same_structure(&ours_st[code.as_str()], theirs, &format!("stations.{code}"));
    }
}

/// Same keys (ignoring keys absent on one side because the value was null) and nesting.
fn same_structure(ours: &Value, theirs: &Value, path: &str) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) if !path.ends_with("metadata") => {
            let ka: BTreeSet<&String> = a.keys().collect();
            let kb: BTreeSet<&String> = b.keys().collect();
            assert_eq!(ka, kb, "keys differ at {path}");
            for k in ka {
                same_structure(&a[k], &b[k], &format!("{path}.{k}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "length differs at {path}");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same_structure(x, y, &format!("{path}[{i}]"));
            }
        }
        (a, b) => assert_eq!(
            std::mem::discriminant(a),
            std::mem::discriminant(b),
            "kind differs at {path}: {a} vs {b}"
        ),
    }
}
