//! Indexed `rawfilter` paths (issue 18): a store whose configured paths have an index
//! answers every filter exactly as one without it — same matches, order, totals and
//! type errors — also after a write. SQLite builds the index (the store test in
//! `hub-store` checks the plan uses it); PostgreSQL keeps the paths' values in each
//! row (its store test checks a filter reads them). Both backends.

use serde_json::{json, Value};

use super::support::{self, get, TestApp};

/// (id, altitude, German title, city): altitudes of every JSON type, titles with case
/// and umlauts, cities present, null, missing or not text.
fn documents() -> Vec<(&'static str, Value)> {
    let rows: &[(&str, Value, Value, Value)] = &[
        ("r-high", json!(1200), json!("Alm am Berg"), json!("Bozen")),
        ("r-low", json!(300), json!("Talhof"), json!("Meran")),
        ("r-edge", json!(500), json!("Hütte A"), json!("Brixen")),
        (
            "r-real",
            json!(500.5),
            json!("ÄRGER AM HOF"),
            json!("Bruneck"),
        ),
        ("r-nocity", json!(2000), json!("Gipfel am See"), json!(null)),
        ("r-nocity2", json!(2100), json!("Grat"), Value::Null),
        ("r-notitle", json!(900), json!(null), json!("Sterzing")),
        ("r-numtitle", json!(900), json!(42), json!("Klausen")),
        (
            "r-cityobj",
            json!(900),
            json!("Schlucht am Bach"),
            json!({"x": 1}),
        ),
        ("r-noalt", Value::Null, json!("Wald"), json!("Lana")),
        ("r-nullalt", json!(null), json!("Wasserfall"), json!("Nals")),
    ];
    rows.iter()
        .map(|(id, altitude, title, city)| {
            let mut doc = json!({
                "Id": id,
                "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "idm", "LastChange": "2024-01-01T00:00:00", "Reduced": false},
                "Shortname": id,
                "Active": true,
                "HasLanguage": ["de"],
                "Detail": {"de": {"Title": title}},
                "ContactInfos": {"de": {}},
                "GpsInfo": [{"Gpstype": "position", "Latitude": 46.5, "Longitude": 11.3}],
            });
            if !altitude.is_null() || *id == "r-nullalt" {
                doc["GpsInfo"][0]["Altitude"] = altitude.clone();
            }
            if !city.is_null() || *id == "r-nocity" {
                doc["ContactInfos"]["de"]["City"] = city.clone();
            }
            ("HubActivityPoi", doc)
        })
        .collect()
}

fn app(docs: &[(&'static str, Value)]) -> TestApp {
    let (store, dir) = support::backend();
    store
        .content()
        .put_batch_blocking(docs, &mut |_| {})
        .expect("loading the documents");
    TestApp {
        router: hub::router(store.clone(), &support::test_config()),
        store,
        _dir: dir,
    }
}

fn ids(body: &Value) -> Vec<String> {
    body["Items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| i["Id"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

const FILTERS: &[&str] = &[
    "and(gt(GpsInfo.0.Altitude,500),like(Detail.de.Title,'a'),isnotnull(ContactInfos.de.City))",
    "gt(GpsInfo.0.Altitude,500)",
    "ge(GpsInfo.0.Altitude,500)",
    "le(GpsInfo.0.Altitude,500.5)",
    "eq(GpsInfo.0.Altitude,900)",
    "ne(GpsInfo.0.Altitude,900)",
    "in(GpsInfo.0.Altitude,300,2000)",
    "isnull(GpsInfo.0.Altitude)",
    "like(Detail.de.Title,'ä')",
    "like(Detail.de.Title,'AM')",
    "likein(Detail.de.Title,'^G','^W')",
    "eq(Detail.de.Title,'Talhof')",
    "gt(Detail.de.Title,'S')",
    "isnull(ContactInfos.de.City)",
    "isnotnull(ContactInfos.de.City)",
    "or(isnull(ContactInfos.de.City),lt(GpsInfo.0.Altitude,400))",
    "not(isnotnull(ContactInfos.de.City))",
    // Type errors stay errors: a text compared with numbers, a number with texts.
    "gt(GpsInfo.0.Altitude,'x')",
    "eq(ContactInfos.de.City,1)",
];

#[tokio::test]
async fn indexed_paths_answer_exactly_as_unindexed_ones() {
    let docs = documents();
    let plain = app(&docs);
    let indexed = app(&docs);
    let paths = hub::Config::default()
        .rawfilter_indexes()
        .expect("the default paths are valid");
    assert_eq!(paths.len(), 3);
    let names = indexed
        .store
        .sync_rawfilter_indexes(&paths)
        .await
        .expect("building the indexes");
    // SQLite builds one index; PostgreSQL keeps the three paths' values in each row,
    // filled here for the documents written before the paths were configured.
    let filled = indexed.store.fill_path_values().await.expect("filling");
    match indexed.store.backend_name() {
        "sqlite" => assert_eq!((names.len(), filled), (1, 0), "{names:?}"),
        _ => assert_eq!((names.len(), filled), (3, docs.len() as u64), "{names:?}"),
    }

    // The rule the three-clause workload states, computed here.
    let expected: Vec<&str> = docs
        .iter()
        .filter(|(_, d)| {
            let altitude = &d["GpsInfo"][0]["Altitude"];
            let title = &d["Detail"]["de"]["Title"];
            let city = &d["ContactInfos"]["de"]["City"];
            altitude.as_f64().is_some_and(|a| a > 500.0)
                && title
                    .as_str()
                    .is_some_and(|t| t.to_lowercase().contains('a'))
                && !city.is_null()
        })
        .map(|(_, d)| d["Id"].as_str().unwrap())
        .collect();
    assert_eq!(expected, ["r-high", "r-real", "r-cityobj"]);

    for round in ["as loaded", "after a write"] {
        for filter in FILTERS {
            let uri = format!(
                "/v1/HubActivityPoi?pagesize=5&rawfilter={}",
                support::encode(filter)
            );
            let (status, body) = get(&plain, &uri).await;
            let (indexed_status, indexed_body) = get(&indexed, &uri).await;
            assert_eq!(indexed_status, status, "{round}: {filter}: {indexed_body}");
            assert_eq!(ids(&indexed_body), ids(&body), "{round}: {filter}");
            assert_eq!(
                indexed_body["TotalResults"], body["TotalResults"],
                "{round}: {filter}"
            );
            // Which mismatching document a 400 describes follows the scan order (see
            // `rawfilter_sql`); that it is a 400 does not.
        }
        let (_, body) = get(
            &indexed,
            &format!(
                "/v1/HubActivityPoi?pagesize=50&rawfilter={}",
                support::encode(FILTERS[0])
            ),
        )
        .await;
        let mut found = ids(&body);
        found.sort();
        let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        if round == "after a write" {
            want.push("r-new".into());
        }
        want.sort();
        assert_eq!(found, want, "{round}");

        // Sorts by configured paths read the index on SQLite, in the order of every
        // path: numbers, then text bytewise (an object as its JSON text), null and
        // missing last, ties by id. `r-new` repeats `r-high`.
        let with_new = |order: &[&'static str]| -> Vec<String> {
            let mut ids: Vec<String> = order.iter().map(|s| s.to_string()).collect();
            if round == "after a write" {
                let at = ids.iter().position(|i| i == "r-high").unwrap();
                ids.insert(at + 1, "r-new".into());
            }
            ids
        };
        let sorts = [
            (
                "Detail.de.Title",
                with_new(&[
                    "r-numtitle",
                    "r-high",
                    "r-nocity",
                    "r-nocity2",
                    "r-edge",
                    "r-cityobj",
                    "r-low",
                    "r-noalt",
                    "r-nullalt",
                    "r-real",
                    "r-notitle",
                ]),
            ),
            (
                "-Detail.de.Title",
                with_new(&[
                    "r-real",
                    "r-nullalt",
                    "r-noalt",
                    "r-low",
                    "r-cityobj",
                    "r-edge",
                    "r-nocity2",
                    "r-nocity",
                    "r-high",
                    "r-numtitle",
                    "r-notitle",
                ]),
            ),
            (
                "ContactInfos.de.City",
                with_new(&[
                    "r-high",
                    "r-edge",
                    "r-real",
                    "r-numtitle",
                    "r-noalt",
                    "r-low",
                    "r-nullalt",
                    "r-notitle",
                    "r-cityobj",
                    "r-nocity",
                    "r-nocity2",
                ]),
            ),
        ];
        for (sort, expected) in &sorts {
            for (name, app) in [("plain", &plain), ("indexed", &indexed)] {
                let uri = format!("/v1/HubActivityPoi?pagesize=-1&rawsort={sort}");
                let (status, body) = get(app, &uri).await;
                assert_eq!(status, 200, "{round}: {name}: {uri}: {body}");
                assert_eq!(&ids(&body), expected, "{round}: {name}: {uri}");
                let (_, page) = get(
                    app,
                    &format!("/v1/HubActivityPoi?pagesize=4&pagenumber=2&rawsort={sort}"),
                )
                .await;
                assert_eq!(
                    ids(&page),
                    expected[4..8],
                    "{round}: {name}: {sort}, page 2"
                );
            }
        }

        // A write through the API's store: the index follows it.
        let mut new = docs[0].1.clone();
        new["Id"] = json!("r-new");
        new["_Meta"]["Id"] = json!("r-new");
        new["Shortname"] = json!("r-new");
        for app in [&plain, &indexed] {
            app.store
                .content()
                .put_batch_blocking(&[("HubActivityPoi", new.clone())], &mut |_| {})
                .expect("writing");
        }
    }
}
