//! Real GIS clients against the real server: GDAL (`ogrinfo`, `ogr2ogr`, its OAPIF and
//! GeoJSON drivers) and OWSLib read Hub's OGC API – Features and GeoJSON output on a
//! loopback port over the demo data, and what they get is compared with the Content
//! API's answer for the same question. Runs on SQLite, and on PostgreSQL with
//! `HUB_TEST_DATABASE`. Without GDAL or OWSLib each test prints why and skips, unless
//! `HUB_REQUIRE_TOOLS=1` (CI), which makes that a failure.

mod support;

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// The other demo suites' anchor: nothing here depends on dates (each client's answer is
/// compared with the Content API's), and a test pass keeps one demo per anchor.
const ANCHOR: &str = "2025-06-15T12:00:00Z";
/// Around Bolzano/Bozen: some hundred demo POIs, several pages.
const BBOX: [f64; 4] = [11.3, 46.4, 11.5, 46.6];

/// A served demo app: its base URL and every request target it has answered.
struct Served {
    base: String,
    seen: Arc<Mutex<Vec<String>>>,
}

/// One server per test binary (loading the demo is the slow part), on a thread and
/// runtime of its own so it outlives each test's runtime.
fn serve() -> &'static Served {
    static SERVED: std::sync::OnceLock<Served> = std::sync::OnceLock::new();
    SERVED.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async move {
                let (served, app) = start().await;
                tx.send(served).unwrap();
                let _keep = app;
                std::future::pending::<()>().await
            })
        });
        rx.recv().expect("the server starts")
    })
}

async fn start() -> (Served, support::TestApp) {
    let app = support::demo_app(ANCHOR).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let config = hub::Config {
        content_base_url: Some(base.clone()),
        ..support::test_config()
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let router = hub::router(app.store.clone(), &config).layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            log.lock().unwrap().push(request.uri().to_string());
            next.run(request)
        },
    ));
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (Served { base, seen }, app)
}

/// True when `program --version` runs; otherwise prints why the test skips (or fails
/// under `HUB_REQUIRE_TOOLS=1`).
fn tool(program: &str, args: &[&str], install: &str) -> bool {
    let ok = Command::new(program)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        let why = format!(
            "{program} {} does not run; install {install}",
            args.join(" ")
        );
        if std::env::var("HUB_REQUIRE_TOOLS").as_deref() == Ok("1") {
            panic!("HUB_REQUIRE_TOOLS=1: {why}");
        }
        println!("SKIPPED: {why}");
    }
    ok
}

fn gdal() -> bool {
    tool("ogrinfo", &["--version"], "gdal-bin")
}

async fn run(program: &'static str, args: Vec<String>) -> (String, String) {
    let output = tokio::task::spawn_blocking(move || Command::new(program).args(&args).output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        output.status.success(),
        "{program} failed:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

async fn get_json(url: &str) -> Value {
    let url = url.to_string();
    tokio::task::spawn_blocking(move || {
        ureq::get(&url)
            .call()
            .unwrap_or_else(|e| panic!("{url}: {e}"))
            .into_string()
            .map(|text| serde_json::from_str::<Value>(&text).unwrap())
            .unwrap()
    })
    .await
    .unwrap()
}

/// The ids the Content API lists for `query` (all pages), in its order.
async fn content_ids(base: &str, entity: &str, query: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for page in 1.. {
        let body = get_json(&format!(
            "{base}/v1/{entity}?{query}&fields=Id&pagesize=1000&pagenumber={page}"
        ))
        .await;
        let items = body["Items"].as_array().unwrap();
        ids.extend(items.iter().map(|i| i["Id"].as_str().unwrap().to_string()));
        if page as u64 >= body["TotalPages"].as_u64().unwrap() {
            break;
        }
    }
    ids
}

fn bbox_polygon([x0, y0, x1, y1]: [f64; 4]) -> String {
    support::encode(&format!("bbi({x0} {y0}, {x1} {y0}, {x1} {y1}, {x0} {y1})"))
}

/// The `Id`s of the features of a GDAL-readable dataset, through GDAL's GeoJSON writer.
async fn ids_via_gdal(source: String, layer: Option<String>) -> BTreeSet<String> {
    let mut args = vec!["-f".into(), "GeoJSON".into(), "/vsistdout/".into(), source];
    args.extend(layer);
    let (out, _) = run("ogr2ogr", args).await;
    feature_ids(&out)
}

/// GDAL keeps a GeoJSON feature's string `id` as the field `id` (and renames the
/// document's own `Id` beside it), so the id is read from there.
fn feature_ids(geojson: &str) -> BTreeSet<String> {
    let collection: Value =
        serde_json::from_str(geojson).unwrap_or_else(|e| panic!("{e}: {geojson}"));
    collection["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let p = &f["properties"];
            p["id"].as_str().or(p["Id"].as_str()).unwrap().to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gdal_lists_copies_and_filters_through_the_ogc_api() {
    if !gdal() {
        return;
    }
    let served = tokio::task::spawn_blocking(serve).await.unwrap();
    let base = &served.base;
    let ogc = format!("OAPIF:{base}/ogc");

    // Every collection, by id.
    let (out, _) = run("ogrinfo", vec!["-ro".into(), "-so".into(), ogc.clone()]).await;
    for entity in hub_model::ENTITY_TYPES {
        assert!(
            out.contains(&format!(": {} (title: {})", entity.meta_type, entity.name)),
            "{} missing from:\n{out}",
            entity.meta_type
        );
    }

    // GDAL takes a layer's extent and time range from the collection document.
    let collection = get_json(&format!("{base}/ogc/collections/hubactivitypoi")).await;
    let b: Vec<f64> = serde_json::from_value(collection["extent"]["spatial"]["bbox"][0].clone())
        .expect("a collection box");
    let (layer, _) = run(
        "ogrinfo",
        vec![
            "-ro".into(),
            "-so".into(),
            ogc.clone(),
            "hubactivitypoi".into(),
        ],
    )
    .await;
    let extent = format!(
        "Extent: ({:.6}, {:.6}) - ({:.6}, {:.6})",
        b[0], b[1], b[2], b[3]
    );
    assert!(layer.contains(&extent), "{extent} missing from:\n{layer}");
    let first = collection["extent"]["temporal"]["interval"][0][0]
        .as_str()
        .unwrap();
    assert!(
        layer.contains(&format!("TEMPORAL_INTERVAL_MIN={first}")),
        "{layer}"
    );

    // A bbox copy into a GeoPackage holds exactly what the Content API returns for it.
    let dir = tempfile::tempdir().unwrap();
    let gpkg = dir.path().join("bbox.gpkg").to_string_lossy().to_string();
    let mut args: Vec<String> = vec!["-f".into(), "GPKG".into(), gpkg.clone(), ogc.clone()];
    args.push("hubactivitypoi".into());
    args.push("-spat".into());
    args.extend(BBOX.iter().map(|v| v.to_string()));
    run("ogr2ogr", args).await;
    let copied = ids_via_gdal(gpkg, None).await;
    let expected = content_ids(
        base,
        "HubActivityPoi",
        &format!("polygon={}", bbox_polygon(BBOX)),
    )
    .await;
    assert!(expected.len() > 100, "the box holds several pages");
    assert_eq!(copied.len(), expected.len());
    assert_eq!(copied, expected.into_iter().collect::<BTreeSet<_>>());

    // A -where GDAL cannot express as a property parameter travels as a CQL filter.
    let shortname = {
        let first = get_json(&format!(
            "{base}/v1/HubActivityPoi?pagesize=1&fields=Shortname"
        ))
        .await;
        first["Items"][0]["Shortname"].as_str().unwrap().to_string()
    };
    let prefix: String = shortname.chars().take(3).collect();
    let where_clause = format!(
        "Shortname LIKE '{}%' OR Shortname = '{}'",
        prefix.replace('\'', "''"),
        shortname.replace('\'', "''")
    );
    let filtered = {
        let (out, _) = run(
            "ogr2ogr",
            vec![
                "-f".into(),
                "GeoJSON".into(),
                "/vsistdout/".into(),
                ogc.clone(),
                "hubactivitypoi".into(),
                "-where".into(),
                where_clause,
            ],
        )
        .await;
        feature_ids(&out)
    };
    let rawfilter = support::encode(&format!(
        "or(like(Shortname,'{prefix}'),eq(Shortname,'{shortname}'))"
    ));
    let expected: BTreeSet<String> =
        content_ids(base, "HubActivityPoi", &format!("rawfilter={rawfilter}"))
            .await
            .into_iter()
            // `like` is a substring test; LIKE 'abc%' a prefix test.
            .collect();
    assert!(!filtered.is_empty());
    assert!(filtered.is_subset(&expected));
    assert!(
        served
            .seen
            .lock()
            .unwrap()
            .iter()
            .any(|uri| uri.contains("/ogc/collections/hubactivitypoi/items")
                && uri.contains("filter=")),
        "GDAL sent the filter to the server"
    );
    let prefix_lower = prefix.to_lowercase();
    for id in &filtered {
        let doc = get_json(&format!("{base}/v1/HubActivityPoi/{id}")).await;
        let name = doc["Shortname"].as_str().unwrap();
        assert!(
            name.to_lowercase().starts_with(&prefix_lower) || name == shortname,
            "{name} does not match the filter"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gdal_lists_and_copies_station_collections() {
    if !gdal() {
        return;
    }
    let served = tokio::task::spawn_blocking(serve).await.unwrap();
    let base = &served.base;
    let ogc = format!("OAPIF:{base}/ogc");

    // One collection per station type the Time Series API lists.
    let (out, _) = run("ogrinfo", vec!["-ro".into(), "-so".into(), ogc.clone()]).await;
    let types = get_json(&format!("{base}/v2/flat")).await;
    let types: Vec<&str> = types
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(types.contains(&"ParkingStation"));
    for stype in &types {
        let id = format!("station-{}", stype.to_lowercase());
        assert!(
            out.contains(&format!(": {id} (title: {stype} stations)")),
            "{id} missing from:\n{out}"
        );
    }

    // A copy of one station collection holds as many features as the flat station list.
    let (out, _) = run(
        "ogr2ogr",
        vec![
            "-f".into(),
            "GeoJSON".into(),
            "/vsistdout/".into(),
            ogc,
            "station-parkingstation".into(),
        ],
    )
    .await;
    let copied: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let flat = get_json(&format!("{base}/v2/flat/ParkingStation?limit=-1")).await;
    let rows = flat["data"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert_eq!(copied["features"].as_array().unwrap().len(), rows.len());
    let codes: BTreeSet<&str> = rows.iter().map(|r| r["scode"].as_str().unwrap()).collect();
    let copied_codes: BTreeSet<&str> = copied["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["properties"]["scode"].as_str().unwrap())
        .collect();
    assert_eq!(copied_codes, codes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gdal_geojson_driver_reads_the_content_api() {
    if !gdal() {
        return;
    }
    let served = tokio::task::spawn_blocking(serve).await.unwrap();
    let url = format!(
        "{}/v1/HubActivityPoi?format=geojson&pagesize=1000",
        served.base
    );
    let read = ids_via_gdal(url.clone(), None).await;
    let listed = get_json(&format!(
        "{}/v1/HubActivityPoi?fields=Id&pagesize=1000",
        served.base
    ))
    .await;
    let expected: BTreeSet<String> = listed["Items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["Id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(read.len(), 1000);
    assert_eq!(read, expected);
    // GDAL sees points where the documents have positions.
    let (info, _) = run(
        "ogrinfo",
        vec!["-ro".into(), "-so".into(), "-al".into(), url],
    )
    .await;
    assert!(info.contains("Geometry: Point"), "{info}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owslib_lists_pages_and_fetches_like_the_content_api() {
    let has_owslib = Command::new("python3")
        .args(["-c", "import owslib.ogcapi.features"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !has_owslib {
        if std::env::var("HUB_REQUIRE_TOOLS").as_deref() == Ok("1") {
            panic!("HUB_REQUIRE_TOOLS=1: OWSLib cannot be imported (pip install OWSLib)");
        }
        println!("SKIPPED: OWSLib cannot be imported (pip install OWSLib)");
        return;
    }
    let served = tokio::task::spawn_blocking(serve).await.unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/ogc_owslib_check.py"
    );
    let mut args = vec![
        script.to_string(),
        served.base.clone(),
        "hubactivitypoi".into(),
    ];
    args.extend(BBOX.iter().map(|v| v.to_string()));
    args.push("100".into());
    let (out, _) = run("python3", args).await;
    let result: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let collections: Vec<&str> = result["collections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    // The Content datasets, then one collection per Time Series station type.
    let types = get_json(&format!("{}/v2/flat", served.base)).await;
    let stations: Vec<String> = types
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("station-{}", t["id"].as_str().unwrap().to_lowercase()))
        .collect();
    let expected: Vec<&str> = hub_model::ENTITY_TYPES
        .iter()
        .map(|e| e.meta_type)
        .chain(stations.iter().map(String::as_str))
        .collect();
    assert_eq!(collections, expected);
    let ids: Vec<String> = result["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap().to_string())
        .collect();
    // The same documents in the same order as the Content API's pages.
    let listed = content_ids(
        &served.base,
        "HubActivityPoi",
        &format!("polygon={}", bbox_polygon(BBOX)),
    )
    .await;
    assert_eq!(ids, listed);
    assert!(result["pages"].as_u64().unwrap() >= 2);
    assert_eq!(result["matched"].as_u64(), Some(listed.len() as u64));
    // The fetched item is the first document, at its position.
    assert_eq!(result["item"], listed[0].as_str());
    let doc = get_json(&format!("{}/v1/HubActivityPoi/{}", served.base, listed[0])).await;
    let (latitude, longitude) = hub_store::index::coordinates(&doc).expect("a position");
    assert_eq!(
        result["item_geometry"]["coordinates"],
        serde_json::json!([longitude, latitude])
    );
}

/// The body of a GET, as bytes.
async fn get_bytes(url: &str) -> Vec<u8> {
    let url = url.to_string();
    tokio::task::spawn_blocking(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut ureq::get(&url)
                .call()
                .unwrap_or_else(|e| panic!("{url}: {e}"))
                .into_reader(),
            &mut bytes,
        )
        .unwrap();
        bytes
    })
    .await
    .unwrap()
}

/// GDAL's MVT driver reads Hub's vector tiles: the world tile holds every
/// located POI the items endpoint lists, and a Bolzano tile's points, put back into
/// WGS 84 by GDAL, lie where the items endpoint puts the same documents (within one
/// tile unit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gdal_mvt_driver_reads_the_vector_tiles() {
    if !gdal() {
        return;
    }
    let served = tokio::task::spawn_blocking(serve).await.unwrap();
    let base = &served.base;
    let tiles = format!("{base}/ogc/collections/hubactivitypoi/tiles/WebMercatorQuad");
    let located = |body: &Value| -> Vec<(String, f64, f64)> {
        body["features"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| !f["geometry"].is_null())
            .map(|f| {
                let c = &f["geometry"]["coordinates"];
                let id = f["id"].as_str().unwrap().to_string();
                (id, c[0].as_f64().unwrap(), c[1].as_f64().unwrap())
            })
            .collect()
    };

    // CLIP=NO: GDAL drops the points in a tile's buffer by default.
    let open = |z: u32, x: u32, y: u32| {
        [
            "-oo",
            &format!("Z={z}"),
            "-oo",
            &format!("X={x}"),
            "-oo",
            &format!("Y={y}"),
            "-oo",
            "CLIP=NO",
        ]
        .map(String::from)
    };
    // The driver recognises a single tile by its file name (GDAL 3.6 does not open an
    // extension-less URL as one), so each tile is fetched over HTTP into a file.
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world.mvt");
    std::fs::write(&world, get_bytes(&format!("{tiles}/0/0/0")).await).unwrap();
    let mut args: Vec<String> = vec!["-ro".into(), "-so".into(), "-al".into()];
    args.extend(open(0, 0, 0));
    args.push(world.display().to_string());
    let (info, _) = run("ogrinfo", args).await;
    // A page of 10,000 features is more than `get_json` reads as text.
    let all: Value = serde_json::from_slice(
        &get_bytes(&format!(
            "{base}/ogc/collections/hubactivitypoi/items?limit=10000"
        ))
        .await,
    )
    .unwrap();
    assert!(all["numberMatched"].as_u64().unwrap() <= 10_000);
    let count = located(&all).len();
    assert!(
        info.contains(&format!("Feature Count: {count}")),
        "{count} features expected:\n{info}"
    );
    assert!(info.contains("Shortname: String"), "{info}");

    // Bolzano at z=12: column 2177, row 1448.
    let (z, x, y) = (12, 2177, 1448);
    let file = dir.path().join("bolzano.mvt");
    std::fs::write(&file, get_bytes(&format!("{tiles}/{z}/{x}/{y}")).await).unwrap();
    let mut args: Vec<String> = ["-f", "GeoJSON", "-t_srs", "EPSG:4326", "/vsistdout/"]
        .map(String::from)
        .to_vec();
    args.extend(open(z, x, y));
    args.push(file.display().to_string());
    let (out, _) = run("ogr2ogr", args).await;
    let read: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let n = (1u32 << z) as f64;
    let lon = |col: f64| col / n * 360.0 - 180.0;
    let lat = |row: f64| {
        (std::f64::consts::PI * (1.0 - 2.0 * row / n))
            .sinh()
            .atan()
            .to_degrees()
    };
    let b = 64.0 / 4096.0;
    let (x, y) = (x as f64, y as f64);
    let bbox = format!(
        "{},{},{},{}",
        lon(x - b),
        lat(y + 1.0 + b),
        lon(x + 1.0 + b),
        lat(y - b)
    );
    let listed = get_json(&format!(
        "{base}/ogc/collections/hubactivitypoi/items?limit=10000&bbox={bbox}"
    ))
    .await;
    let expected = located(&listed);
    assert!(!expected.is_empty());
    let features = read["features"].as_array().unwrap();
    assert_eq!(features.len(), expected.len(), "{out}");
    // One tile unit at z=12 is 360° / 2^24 of longitude, less of latitude here.
    let unit = 360.0 / f64::from(1u32 << 24);
    for (id, lon, lat) in &expected {
        let f = features
            .iter()
            .find(|f| f["properties"]["Id"] == id.as_str())
            .unwrap_or_else(|| panic!("{id} not in the tile:\n{out}"));
        let c = &f["geometry"]["coordinates"];
        let (glon, glat) = (c[0].as_f64().unwrap(), c[1].as_f64().unwrap());
        assert!(
            (glon - lon).abs() <= unit && (glat - lat).abs() <= unit,
            "{id}: GDAL reads {glon},{glat}, the items endpoint says {lon},{lat}"
        );
    }
}
