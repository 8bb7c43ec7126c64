//! Utility endpoints: GeoShapes (with the real EPSG:32632 Bolzano province), GeoConverter
//! (every fixture, three ways), Location, Find, Distinct, Source.

use super::*;

#[tokio::test]
async fn geoshapes_list_filter_and_transform() {
    let (status, body) = get("/v1/GeoShapes").await;
    assert_eq!(status, 200);
    // Order: Type, then Name.
    assert_eq!(item_ids(&body), ["test_merano", "test_province"]);
    let item = &body["Items"][1];
    let keys: Vec<&str> = item
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "Id",
            "Self",
            "Name",
            "Source",
            "Type",
            "Country",
            "_Meta",
            "LicenseInfo",
            "Mapping",
            "Srid",
            "Geometry"
        ]
    );
    assert_eq!(item["Srid"], "EPSG:4326");
    assert_eq!(item["Geometry"]["type"], "Polygon");
    assert_eq!(item["Geometry"]["coordinates"][0][0], json!([10.3, 46.2]));

    let (_, alias) = get("/v1/GeoShape?type=municipality").await;
    assert_eq!(item_ids(&alias), ["test_merano"]);
    let (_, found) = get("/v1/GeoShapes?searchfilter=provinz").await;
    assert_eq!(item_ids(&found), ["test_province"]);
    let (_, near_bz) = get(&format!(
        "/v1/GeoShapes?polygon={}",
        enc("POINT(11.3548 46.4983)")
    ))
    .await;
    assert_eq!(item_ids(&near_bz), ["test_province"]);
    let (_, paged) = get("/v1/GeoShapes?pagesize=1&pagenumber=2").await;
    assert_eq!(item_ids(&paged), ["test_province"]);
    assert_eq!(paged["TotalPages"], 2);
    // The list parameters every dataset takes mean the same here.
    let (_, every) = get("/v1/GeoShapes?pagesize=-1").await;
    assert_eq!(item_ids(&every), ["test_merano", "test_province"]);
    assert_eq!(
        (every["TotalPages"].clone(), every["CurrentPage"].clone()),
        (json!(1), json!(1))
    );
    let (_, id_array) = get("/v1/GeoShapes?getasidarray=true&type=municipality").await;
    assert_eq!(id_array, json!(["test_merano"]));

    let (_, utm) = get("/v1/GeoShapes/test_province?srid=EPSG:32632").await;
    assert_eq!(utm["Srid"], "EPSG:32632");
    let corner = &utm["Geometry"]["coordinates"][0][0];
    // 10.3 E 46.2 N in UTM 32N: about 600 km east, 5117 km north.
    assert!(
        (corner[0].as_f64().unwrap() - 600_000.0).abs() < 5_000.0,
        "{corner}"
    );
    assert!(
        (corner[1].as_f64().unwrap() - 5_117_000.0).abs() < 5_000.0,
        "{corner}"
    );
    let (_, merc) = get("/v1/GeoShape/TEST_PROVINCE?srid=3857").await;
    assert_eq!(merc["Srid"], "EPSG:3857");
    assert!(
        (merc["Geometry"]["coordinates"][0][0][0].as_f64().unwrap() - 1_146_594.0).abs() < 10.0
    );

    let (status, body) = get("/v1/GeoShapes/nope").await;
    assert_eq!(status, 404, "{body}");
    let body = problem("/v1/GeoShapes?srid=2056").await;
    assert_eq!(body["parameter"], "srid");
    let body = problem("/v1/GeoShapes?polygon=POLYGON((1%202").await;
    assert_eq!(body["parameter"], "polygon");
    assert_eq!(body["position"], 13);
}

/// Reads the WKT out of the INSERT of the real Bolzano province shape.
fn bolzano_province_wkt() -> Option<String> {
    let path = format!("{FIXTURES}/content/geoshape-province-bolzano.sql");
    let Ok(sql) = std::fs::read_to_string(&path) else {
        eprintln!("skipping: {path} is not there");
        return None;
    };
    let start = sql.find("'SRID=").expect("the geometry literal") + 1;
    let end = start + sql[start..].find('\'').expect("its end");
    Some(sql[start..end].to_string())
}

#[tokio::test]
async fn the_real_bolzano_province_in_epsg_32632_lands_in_south_tyrol() {
    let Some(ewkt) = bolzano_province_wkt() else {
        return;
    };
    // Loaded the way a client's polygon is: the EWKT prefix names EPSG:32632.
    let spec = hub_query::content::polygon::parse_polygon(&ewkt).expect("the fixture parses");
    let hub_query::content::polygon::PolygonSpec::Coordinates {
        geometry, original, ..
    } = spec
    else {
        panic!("coordinates expected")
    };
    let rect = hub_geo::geo::BoundingRect::bounding_rect(&geometry).unwrap();
    assert!(
        rect.min().y > 46.2 && rect.max().y < 47.1,
        "latitudes {rect:?}"
    );
    assert!(
        rect.min().x > 10.3 && rect.max().x < 12.5,
        "longitudes {rect:?}"
    );
    // Back to UTM: the round trip is exact to the millimetre.
    let back =
        hub_geo::srid::transform(&geometry, hub_geo::Srid::Wgs84, hub_geo::Srid::Utm32N).unwrap();
    let pairs = hub_geo::geo::CoordsIter::coords_iter(&back)
        .zip(hub_geo::geo::CoordsIter::coords_iter(&original));
    for (a, b) in pairs {
        assert!(
            (a.x - b.x).abs() < 1e-3 && (a.y - b.y).abs() < 1e-3,
            "{a:?} != {b:?}"
        );
    }

    // As a stored GeoShape: filtering by it and serving it in 4326 and 32632.
    let (store, _dir) = support::backend();
    let shape_doc = shape(
        "41_istat",
        "province",
        "Bolzano",
        hub_geo::geojson::to_geojson(&geometry),
    );
    let mut docs = fixtures();
    docs.retain(|(e, _)| *e != "GeoShape");
    docs.push(shape_doc);
    store
        .content()
        .put_batch_blocking(&docs, &mut |_| {})
        .unwrap();
    let router = hub::router(store, &support::test_config());
    let call = |uri: &'static str| {
        let router = router.clone();
        async move {
            let response = router
                .oneshot(Request::get(uri).body(Body::empty()).unwrap())
                .await
                .unwrap();
            serde_json::from_slice::<Value>(
                &response.into_body().collect().await.unwrap().to_bytes(),
            )
            .unwrap()
        }
    };
    let inside = call("/v1/HubActivityPoi?polygon=41_istat&pagesize=50").await;
    assert_eq!(item_ids(&inside), ["geo-br", "geo-bz", "geo-me"]);
    let by_name = call("/v1/HubActivityPoi?polygon=IT.province.Bolzano&pagesize=50").await;
    assert_eq!(item_ids(&by_name), ["geo-br", "geo-bz", "geo-me"]);
    let utm = call("/v1/GeoShapes/41_istat?srid=32632").await;
    assert_eq!(utm["Geometry"]["type"], "MultiPolygon");
    let served = hub_geo::geojson::from_geojson(&utm["Geometry"]).unwrap();
    for (a, b) in hub_geo::geo::CoordsIter::coords_iter(&served)
        .zip(hub_geo::geo::CoordsIter::coords_iter(&original))
    {
        assert!(
            (a.x - b.x).abs() < 1e-3 && (a.y - b.y).abs() < 1e-3,
            "{a:?} != {b:?}"
        );
    }
}

/// Every converter fixture: (input file, expected GeoJSON file, endpoint).
fn converter_fixtures() -> Option<Vec<(String, String, &'static str)>> {
    let dir = format!("{FIXTURES}/geoconverter");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipping: {dir} is not there");
        return None;
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry.unwrap().path();
        let endpoint = match path.extension().and_then(|e| e.to_str()) {
            Some("kml") => "KmlToGeoJson",
            Some("gpx") => "GpxToGeoJson",
            _ => continue,
        };
        out.push((
            path.display().to_string(),
            path.with_extension("json").display().to_string(),
            endpoint,
        ));
    }
    out.sort();
    Some(out)
}

fn read_json(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(text.trim_start_matches('\u{feff}')).unwrap()
}

/// Same structure, numbers within 1e-9.
fn assert_close(actual: &Value, expected: &Value, at: &str) {
    match (actual, expected) {
        (Value::Number(a), Value::Number(e)) => {
            assert!(
                (a.as_f64().unwrap() - e.as_f64().unwrap()).abs() <= 1e-9,
                "{at}: {a} != {e}"
            )
        }
        (Value::Array(a), Value::Array(e)) => {
            assert_eq!(a.len(), e.len(), "{at}: lengths");
            for (i, (x, y)) in a.iter().zip(e).enumerate() {
                assert_close(x, y, &format!("{at}[{i}]"));
            }
        }
        (Value::Object(a), Value::Object(e)) => {
            assert_eq!(
                a.keys().collect::<Vec<_>>(),
                e.keys().collect::<Vec<_>>(),
                "{at}: keys"
            );
            for (k, v) in e {
                assert_close(&a[k], v, &format!("{at}.{k}"));
            }
        }
        _ => assert_eq!(actual, expected, "{at}"),
    }
}

async fn post(uri: &str, content_type: &str, body: Vec<u8>) -> (u16, String, Vec<u8>) {
    send(
        Request::post(uri)
            .header("content-type", content_type)
            .body(Body::from(body))
            .unwrap(),
    )
    .await
}

/// Serves `dir` on 127.0.0.1 for the duration of one test.
async fn file_server(dir: String) -> std::net::SocketAddr {
    use axum::extract::Path;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route(
            "/files/{name}",
            axum::routing::get(move |Path(name): Path<String>| {
                let dir = dir.clone();
                async move {
                    match std::fs::read(format!("{dir}/{name}")) {
                        Ok(bytes) => (http::StatusCode::OK, bytes),
                        Err(_) => (http::StatusCode::NOT_FOUND, Vec::new()),
                    }
                }
            }),
        )
        .route(
            "/moved",
            axum::routing::get(|| async {
                axum::response::Redirect::temporary("/files/Sample1.gpx")
            }),
        )
        .route(
            "/big",
            axum::routing::get(|| async { vec![b' '; 3 * 1024 * 1024] }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

#[tokio::test]
async fn geoconverter_converts_every_fixture_three_ways() {
    let Some(files) = converter_fixtures() else {
        return;
    };
    assert!(files.len() >= 6, "{files:?}");
    let addr = file_server(format!("{FIXTURES}/geoconverter")).await;
    for (input, expected, endpoint) in files {
        let expected = read_json(&expected);
        let bytes = std::fs::read(&input).unwrap();
        let name = std::path::Path::new(&input)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let uri = format!("/v1/GeoConverter/{endpoint}");

        let (status, content_type, body) = post(&uri, "application/xml", bytes.clone()).await;
        assert_eq!(
            (status, content_type.as_str()),
            (200, "application/geo+json"),
            "{name}: {}",
            String::from_utf8_lossy(&body)
        );
        assert_close(&serde_json::from_slice(&body).unwrap(), &expected, &name);

        let boundary = "hub-test-boundary";
        let mut form = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").into_bytes();
        form.extend_from_slice(&bytes);
        form.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let (status, _, body) = post(
            &uri,
            &format!("multipart/form-data; boundary={boundary}"),
            form,
        )
        .await;
        assert_eq!(
            status,
            200,
            "{name} multipart: {}",
            String::from_utf8_lossy(&body)
        );
        assert_close(
            &serde_json::from_slice(&body).unwrap(),
            &expected,
            &format!("{name} multipart"),
        );

        let (status, content_type, body) = send(
            Request::get(format!(
                "{uri}?url={}",
                enc(&format!("http://{addr}/files/{name}"))
            ))
            .body(Body::empty())
            .unwrap(),
        )
        .await;
        assert_eq!(
            (status, content_type.as_str()),
            (200, "application/geo+json"),
            "{name} url: {}",
            String::from_utf8_lossy(&body)
        );
        assert_close(
            &serde_json::from_slice(&body).unwrap(),
            &expected,
            &format!("{name} url"),
        );
    }
    // Redirects are followed (and checked).
    let (status, _, _) = send(
        Request::get(format!(
            "/v1/GeoConverter/GpxToGeoJson?url={}",
            enc(&format!("http://{addr}/moved"))
        ))
        .body(Body::empty())
        .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    // A remote 404 is a 404; a file over the limit is a 413.
    let (status, body) = get(&format!(
        "/v1/GeoConverter/KmlToGeoJson?url={}",
        enc(&format!("http://{addr}/files/none.kml"))
    ))
    .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = get(&format!(
        "/v1/GeoConverter/KmlToGeoJson?url={}",
        enc(&format!("http://{addr}/big"))
    ))
    .await;
    assert_eq!(status, 413, "{body}");
}

#[tokio::test]
async fn geoconverter_bad_input_is_a_problem() {
    let cases: &[(&str, &str, u16, &str)] = &[
        (
            "/v1/GeoConverter/KmlToGeoJson",
            "url",
            400,
            "give the address",
        ),
        (
            "/v1/GeoConverter/KmlToGeoJson?url=notaurl",
            "url",
            400,
            "not an absolute address",
        ),
        (
            "/v1/GeoConverter/GpxToGeoJson?url=ftp%3A%2F%2Fexample.org%2Fa.gpx",
            "url",
            400,
            "scheme 'ftp'",
        ),
    ];
    for (uri, parameter, status, phrase) in cases {
        let (s, body) = get(uri).await;
        assert_eq!(s, *status, "{uri}: {body}");
        assert_eq!(body["parameter"], *parameter, "{uri}");
        assert!(
            body["detail"].as_str().unwrap().contains(phrase),
            "{uri}: {body}"
        );
    }
    let (status, _, body) = post(
        "/v1/GeoConverter/GpxToGeoJson",
        "application/xml",
        b"<gpx><wpt lat=\"x\" lon=\"1\"/></gpx>".to_vec(),
    )
    .await;
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));
    let (status, _, body) = post(
        "/v1/GeoConverter/KmlToGeoJson",
        "application/xml",
        b"<kml><coordinates>1,2</kml>".to_vec(),
    )
    .await;
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));
    let (status, _, _) = post(
        "/v1/GeoConverter/KmlToGeoJson",
        "application/xml",
        Vec::new(),
    )
    .await;
    assert_eq!(status, 400);
    let (status, _, _) = post(
        "/v1/GeoConverter/KmlToGeoJson",
        "application/xml",
        vec![b' '; 3 * 1024 * 1024],
    )
    .await;
    assert_eq!(status, 413);
}

#[tokio::test]
async fn geoconverter_refuses_private_addresses_by_default() {
    let (store, _dir) = support::backend();
    let router = hub::router(store, &support::test_config());
    for url in [
        "http://127.0.0.1:9/a.kml",
        "http://localhost:9/a.kml",
        "http://[::1]:9/a.kml",
        "http://169.254.169.254/latest",
        "http://10.0.0.1/a.kml",
    ] {
        let uri = format!("/v1/GeoConverter/KmlToGeoJson?url={}", enc(url));
        let response = router
            .clone()
            .oneshot(Request::get(&uri).body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{url}");
        let body: Value =
            serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes())
                .unwrap();
        assert_eq!(body["parameter"], "url");
        assert!(
            body["detail"]
                .as_str()
                .unwrap()
                .contains("loopback or private"),
            "{url}: {body}"
        );
    }
}

#[tokio::test]
async fn location_lists_locfilter_tokens_in_type_order() {
    let (status, body) = get("/v1/Location?language=de").await;
    assert_eq!(status, 200);
    let entries: Vec<(String, String, String)> = body["Items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["typ"].as_str().unwrap().into(),
                i["id"].as_str().unwrap().into(),
                i["name"].as_str().unwrap().into(),
            )
        })
        .collect();
    let expected = [
        ("reg", "R2", "Burggrafenamt"),
        ("reg", "R1", "Eisacktal"),
        ("tvs", "T1", "Bozen"),
        ("mun", "M1", "Bozen"),
        ("fra", "D1", "Gries"),
    ];
    assert_eq!(
        entries,
        expected.map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
    // Without language, name is a map; typ+id is a working locfilter token.
    let (_, all) = get("/v1/Location?type=reg").await;
    assert_eq!(
        all["Items"][1]["name"],
        json!({"de": "Eisacktal", "it": "Valle Isarco"})
    );
    let token = format!(
        "{}{}",
        all["Items"][1]["typ"].as_str().unwrap(),
        all["Items"][1]["id"].as_str().unwrap()
    );
    assert_eq!(
        poi_ids(&format!("locfilter={token}")).await,
        ["geo-br", "geo-bz", "geo-none"]
    );
    // showall=false: only entries visible in search.
    let (_, visible) = get("/v1/Location?showall=false").await;
    assert_eq!(
        visible["Items"],
        json!([{"typ": "reg", "name": {"de": "Burggrafenamt", "it": "Burgraviato"}, "id": "R2"}])
    );
    for (uri, parameter) in [
        ("/v1/Location?type=xyz", "type"),
        ("/v1/Location?language=xx", "language"),
        ("/v1/Location?showall=perhaps", "showall"),
    ] {
        assert_eq!(problem(uri).await["parameter"], parameter, "{uri}");
    }
}

#[tokio::test]
async fn find_searches_across_types_with_counts() {
    let (status, body) = get("/v1/Find?q=bozen").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["searchTerm"], "bozen");
    assert_eq!(body["totalResults"], 1);
    assert_eq!(body["detailedResults"]["tourismassociation"], 1);
    assert_eq!(body["detailedResults"]["hubactivitypoi"], 0);
    assert_eq!(
        body["Items"],
        json!([{"Id": "T1", "Detail.en.Title": null, "_Meta.Type": "tourismassociation", "Self": "http://hub.test/v1/TourismAssociation/T1"}])
    );

    let (_, places) =
        get("/v1/Find?term=place&type=hubactivitypoi,municipality&limitto=2&language=de").await;
    assert_eq!(
        places["detailedResults"],
        json!({"hubactivitypoi": 6, "municipality": 0})
    );
    assert_eq!(places["totalResults"], 6);
    assert_eq!(places["Items"].as_array().unwrap().len(), 2);
    assert_eq!(places["Items"][0]["Detail.de.Title"], "Ort geo-br");
    for (uri, parameter) in [
        ("/v1/Find", "q"),
        ("/v1/Find?q=x&limitto=0", "limitto"),
        ("/v1/Find?q=x&type=nothing", "type"),
        ("/v1/Find?q=x&language=xx", "language"),
    ] {
        assert_eq!(problem(uri).await["parameter"], parameter, "{uri}");
    }
}

#[tokio::test]
async fn distinct_values_of_fields() {
    let (status, body) = get("/v1/Distinct?type=tag&fields=Types.[*]&getasarray=true").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!(["activity", "summer", "winter"]));
    let (_, objects) = get("/v1/Distinct?odhtype=tag&fields=Types[*]").await;
    assert_eq!(
        objects,
        json!([{"Types[*]": "activity"}, {"Types[*]": "summer"}, {"Types[*]": "winter"}])
    );
    let (_, types) = get("/v1/Distinct?hubtype=hubmetadata&fields=Type&getasarray=true").await;
    assert!(
        types.as_array().unwrap().contains(&json!("hubactivitypoi")),
        "{types}"
    );
    let (_, two) = get("/v1/Distinct?type=region&fields=Id,Detail.it.Title").await;
    assert_eq!(
        two,
        json!([{"Id": "R1", "Detail.it.Title": "Valle Isarco"}, {"Id": "R2", "Detail.it.Title": "Burgraviato"}])
    );
    let (_, sources) =
        get("/v1/Distinct?type=hubactivitypoi&fields=_Meta.Source&getasarray=true").await;
    assert_eq!(sources, json!(["idm"]));

    let cases = [
        ("/v1/Distinct?fields=Id", "type", "give the entity type"),
        ("/v1/Distinct?type=tag", "fields", "give the field paths"),
        (
            "/v1/Distinct?type=nothing&fields=Id",
            "type",
            "not an entity type",
        ),
        (
            "/v1/Distinct?type=tag&fields=Id,Types.[*]",
            "fields",
            "only field",
        ),
        (
            "/v1/Distinct?type=tag&fields=Id,Shortname&getasarray=true",
            "getasarray",
            "exactly one",
        ),
        ("/v1/Distinct?type=tag&fields=Types..x", "fields", ""),
    ];
    for (uri, parameter, phrase) in cases {
        let body = problem(uri).await;
        assert_eq!(body["parameter"], parameter, "{uri}");
        assert!(
            body["detail"].as_str().unwrap().contains(phrase),
            "{uri}: {body}"
        );
    }
    assert_eq!(
        problem("/v1/Distinct?type=tag&fields=Types..x").await["position"],
        7
    );
}

#[tokio::test]
async fn source_lists_the_source_identifiers() {
    let (status, body) = get("/v1/Source").await;
    assert_eq!(status, 200);
    assert_eq!(item_ids(&body), ["idm", "lts"]);
    let (_, one) = get("/v1/Source/LTS").await;
    assert_eq!(one["Id"], "lts");
}

#[tokio::test]
async fn find_takes_locfilter_and_fields() {
    let (status, body) = get("/v1/Find?q=place&type=hubactivitypoi&limitto=50&locfilter=regR1&fields=LocationInfo.RegionInfo.Id").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["detailedResults"], json!({"hubactivitypoi": 3}));
    let found: Vec<&str> = body["Items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["Id"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["geo-br", "geo-bz", "geo-none"]);
    assert_eq!(body["Items"][0]["LocationInfo.RegionInfo.Id"], "R1");
    let keys: Vec<&str> = body["Items"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "Id",
            "Detail.en.Title",
            "_Meta.Type",
            "Self",
            "LocationInfo.RegionInfo.Id"
        ]
    );
    assert_eq!(
        problem("/v1/Find?q=place&locfilter=reg").await["parameter"],
        "locfilter"
    ); // Only locfilter is read of the geographic list parameters.
    for uri in [
        "/v1/Find?q=place&type=hubactivitypoi&radius=abc",
        "/v1/Location?polygon=nonsense",
    ] {
        let (status, body) = get(uri).await;
        assert_eq!(status, 200, "{uri}: {body}");
    }
}

#[tokio::test]
async fn location_locfilter_keeps_children_and_skiarea_lists_ska() {
    let entries = |body: &Value| -> Vec<String> {
        body["Items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                format!(
                    "{}{}",
                    i["typ"].as_str().unwrap(),
                    i["id"].as_str().unwrap()
                )
            })
            .collect()
    };
    for (filter, expected) in [
        ("regR1", &["tvsT1", "munM1", "fraD1"][..]),
        ("REGr1", &["tvsT1", "munM1", "fraD1"][..]),
        ("tvsT1", &["munM1", "fraD1"][..]),
        ("munM1", &["fraD1"][..]),
        ("regR2", &[][..]),
        ("regR2,munM1", &["fraD1"][..]),
    ] {
        let (status, body) = get(&format!("/v1/Location?locfilter={filter}")).await;
        assert_eq!(status, 200, "{filter}: {body}");
        assert_eq!(entries(&body), expected, "locfilter={filter}");
    }
    let (_, typed) = get("/v1/Location?locfilter=regR1&type=mun").await;
    assert_eq!(entries(&typed), ["munM1"]);

    let (status, ski) = get("/v1/Location/Skiarea?language=de").await;
    assert_eq!(status, 200, "{ski}");
    assert_eq!(
        ski["Items"],
        json!([{"typ": "ska", "name": "Skigebiet", "id": "S1"}])
    );
    let (_, same) = get("/v1/Location/SkiArea").await;
    assert_eq!(
        same["Items"][0]["name"],
        json!({"de": "Skigebiet", "it": "Area sciistica"})
    );

    for (uri, parameter) in [
        ("/v1/Location?locfilter=xyz1", "locfilter"),
        ("/v1/Location?locfilter=reg", "locfilter"),
        // No meta-regions in the registry: mta tokens are refused as on lists.
        ("/v1/Location?locfilter=mtametaDolomiten", "locfilter"),
        ("/v1/Location/Skiarea?language=xx", "language"),
        ("/v1/Location/Skiarea?showall=perhaps", "showall"),
        ("/v1/Location/Skiarea?type=reg", "type"),
        ("/v1/Location/Skiarea?locfilter=ska1", "locfilter"),
    ] {
        assert_eq!(problem(uri).await["parameter"], parameter, "{uri}");
    }
}

#[tokio::test]
async fn source_typelist_keeps_sources_of_these_types() {
    for (typelist, expected) in [
        ("accommodation", &["lts"][..]),
        ("event", &["idm", "lts"][..]),
        // Either spelling of a type finds documents storing the other.
        ("hubactivitypoi", &["idm"][..]),
        ("Accommodation,ODHActivityPoi", &["idm", "lts"][..]),
        ("webcam", &[][..]),
    ] {
        let (status, body) = get(&format!("/v1/Source?typelist={typelist}")).await;
        assert_eq!(status, 200, "{typelist}: {body}");
        assert_eq!(item_ids(&body), expected, "typelist={typelist}");
    }
    assert_eq!(
        problem("/v1/Source?typelist=,").await["parameter"],
        "typelist"
    );
}

/// Find, Filter and Distinct read documents outside the list route: closed parts
/// (rooms, availability) stay hidden from anonymous callers there too.
#[tokio::test]
async fn utility_endpoints_keep_closed_parts_hidden() {
    let (store, _dir) = support::backend();
    let doc = json!({"Id": "ACLOSED", "_Meta": {"Id": "ACLOSED", "Type": "accommodation", "Source": "lts"}, "Shortname": "Hotel Closed",
        "Active": true, "AccoDetail": {"en": {"Name": "Hotel Closed"}},
        "AccoRoomInfo": [{"Id": "room1", "Name": "Suite secret", "PriceFrom": 99}],
        "Availability": [{"Date": "2030-01-01", "Available": true, "PriceFrom": 120}]});
    store
        .content()
        .put_batch_blocking(&[("Accommodation", doc)], &mut |_| {})
        .unwrap();
    let router = hub::router(store, &support::test_config());
    let fetch = |uri: String| {
        let router = router.clone();
        async move {
            let response = router
                .oneshot(Request::get(&uri).body(Body::empty()).unwrap())
                .await
                .unwrap();
            assert_eq!(response.status(), 200, "{uri}");
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            serde_json::from_slice::<Value>(&bytes).unwrap()
        }
    };
    let find = fetch(
        "/v1/Find?q=closed&type=accommodation&fields=Availability,AccoRoomInfo.[*].Name".into(),
    )
    .await;
    assert_eq!(find["Items"][0]["Id"], "ACLOSED", "{find}");
    assert_eq!(find["Items"][0]["Availability"], Value::Null, "{find}");
    assert!(!find.to_string().contains("Suite secret"), "{find}");
    let filter = fetch(format!(
        "/v1/Filter?type=accommodation&expression={}&rawsort=Shortname",
        enc("eq(Id,'ACLOSED')")
    ))
    .await;
    assert_eq!(filter["totalResults"], 1, "{filter}");
    assert!(!filter.to_string().contains("Suite secret"), "{filter}");
    assert!(!filter.to_string().contains("2030-01-01"), "{filter}");
    for extra in ["", "&rawsort=Id"] {
        let distinct = fetch(format!(
            "/v1/Distinct?type=accommodation&fields=Availability.[*].Date&getasarray=true{extra}"
        ))
        .await;
        assert_eq!(distinct, json!([]), "{extra}");
        let rooms = fetch(format!(
            "/v1/Distinct?type=accommodation&fields=AccoRoomInfo.[*].Name&getasarray=true{extra}"
        ))
        .await;
        assert!(!rooms.to_string().contains("Suite secret"), "{rooms}");
        // Open paths are read without reducing each document, the mark with it.
        let names = fetch(format!(
            "/v1/Distinct?type=accommodation&fields=AccoDetail.en.Name&getasarray=true{extra}"
        ))
        .await;
        assert_eq!(names, json!(["Hotel Closed"]), "{extra}");
        let marked = fetch(format!(
            "/v1/Distinct?type=accommodation&fields=_Meta.Reduced&getasarray=true{extra}"
        ))
        .await;
        assert_eq!(marked, json!(["true"]), "{extra}");
    }
}
