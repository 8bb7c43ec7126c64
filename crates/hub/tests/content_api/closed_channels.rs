//! Closed data through every input channel (issue 13): two stores whose documents differ
//! only in closed values (accommodation availability and room info, every closed room
//! field) must give an anonymous caller byte-identical answers for every closed path in
//! every channel that can select, sort, search or count — while a reader still gets
//! answers that follow the closed values. Runs on both backends through `backend()`.

use hub_content::closed::CLOSED_ACCOMMODATION_FIELDS;
use hub_store::auth::UserRecord;
use serde_json::{json, Value};

use super::support::{self, encode, TestApp};

/// One store variant: `a` and `b` differ only in closed values.
fn fixtures(variant: char) -> Vec<(&'static str, Value)> {
    let (price_1, price_2, free, room_name, room_price, tag, latitude) = match variant {
        'a' => (147, 200, true, "Suite Panorama", 90, "wellness", 46.49),
        _ => (300, 100, false, "Zimmer Alpin", 250, "family", 46.70),
    };
    let acco = |id: &str, name: &str, price: i64| {
        json!({
            "Id": id,
            "_Meta": {"Id": id, "Type": "accommodation", "Source": "lts", "LastChange": "2024-01-01T00:00:00", "Reduced": false},
            "Shortname": name,
            "Active": true,
            "AccoDetail": {"de": {"Name": name}},
            "HasLanguage": ["de"],
            "Availability": [{"Date": "2025-07-01", "Available": free, "PriceFrom": price}],
            "AccoRoomInfo": [{"Id": format!("{id}-{variant}"), "Source": "lts", "PriceFrom": price}],
        })
    };
    let room = |id: &str, acco: &str| {
        json!({
            "Id": id,
            "A0RID": acco,
            "_Meta": {"Id": id, "Type": "accommodationroom", "Source": "lts", "LastChange": "2024-01-01T00:00:00", "Reduced": false},
            "Shortname": "Zimmer",
            "Active": true,
            "HasLanguage": ["de"],
            "AccoRoomDetail": {"de": {"Name": room_name}},
            "PriceFrom": room_price,
            "Tags": [{"Id": tag, "Source": "lts"}],
            "HubTags": [{"Id": tag}],
            "GpsInfo": [{"Gpstype": "position", "Latitude": latitude, "Longitude": 11.35}],
            "LocationInfo": {"RegionInfo": {"Id": format!("REG-{variant}")}},
        })
    };
    vec![
        ("Accommodation", acco("acco-1", "Hotel Sonnenhof", price_1)),
        (
            "Accommodation",
            acco("acco-2", "Pension Edelweiss", price_2),
        ),
        ("AccommodationRoom", room("room-1", "acco-1")),
        ("AccommodationRoom", room("room-2", "acco-2")),
    ]
}

async fn app_with(variant: char) -> TestApp {
    let (store, dir) = support::backend();
    let loader = store.clone();
    tokio::task::spawn_blocking(move || {
        loader
            .content()
            .put_batch_blocking(&fixtures(variant), &mut |_| {})
            .expect("loading fixtures")
    })
    .await
    .unwrap();
    store
        .auth()
        .user_add(UserRecord {
            id: "id-reader".into(),
            username: "reader".into(),
            password_hash: hub_auth::secrets::hash_password("reader-password"),
            roles: vec!["AccoReader".into()],
            created_at: 0,
        })
        .await
        .unwrap();
    TestApp {
        router: hub::router(store.clone(), &support::test_config()),
        store,
        _dir: dir,
    }
}

async fn reader_token(app: &TestApp) -> String {
    support::password_token(app, "reader", "reader-password").await
}

/// Status and body bytes, anonymous or with a token.
async fn answer(app: &TestApp, uri: &str, token: Option<&str>) -> (u16, String) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", a.as_str())).collect();
    let response = support::request_with(app, uri, &headers).await;
    let status = response.status().as_u16();
    let body = String::from_utf8(support::body_bytes(response).await).unwrap();
    (status, body)
}

/// Every closed path form of an accommodation, from the reduction table itself: dotted
/// and bracketed indexes, `[*]`, the field alone, and other spellings.
fn accommodation_paths() -> Vec<String> {
    CLOSED_ACCOMMODATION_FIELDS
        .iter()
        .flat_map(|f| {
            [
                format!("{f}.0.PriceFrom"),
                format!("{f}[0].PriceFrom"),
                format!("{f}.[*].PriceFrom"),
                f.to_string(),
                format!("{}.0.pricefrom", f.to_lowercase()),
                format!("{}.0.PriceFrom", f.to_uppercase()),
            ]
        })
        .collect()
}

/// Closed paths of a room: every field the fixture has beyond the open ones.
const ROOM_PATHS: &[&str] = &[
    "PriceFrom",
    "pricefrom",
    "AccoRoomDetail.de.Name",
    "Tags.[*].Id",
    "Tags.0.Id",
    "HubTags[0].Id",
    "GpsInfo.0.Latitude",
    "LocationInfo.RegionInfo.Id",
];

/// Every input channel over `path` of `entity`, as request URIs.
fn channels(entity: &str, path: &str) -> Vec<String> {
    let p = encode(path);
    let search = if entity == "Accommodation" {
        "hotel"
    } else {
        "room"
    };
    vec![
        format!(
            "/v1/{entity}?rawfilter={}",
            encode(&format!("isnotnull({path})"))
        ),
        format!(
            "/v1/{entity}?rawfilter={}",
            encode(&format!("eq({path},147)"))
        ),
        format!(
            "/v1/{entity}?rawfilter={}",
            encode(&format!("or(eq(Active,false),gt({path},100))"))
        ),
        format!("/v1/{entity}?rawsort=-{p}"),
        format!("/v1/{entity}?rawsort=Shortname,{p}"),
        format!("/v1/Find?q={search}&type={entity}&filteronfields={p}"),
        format!(
            "/v1/Find?q={search}&type={entity}&rawfilter={}",
            encode(&format!("isnull({path})"))
        ),
        format!("/v1/Find?q={search}&type={entity}&rawsort={p}"),
        format!(
            "/v1/Filter?type={entity}&expression={}",
            encode(&format!("isnotnull({path})"))
        ),
        format!("/v1/Filter?type={entity}&expression=eq(Active,true)&rawsort=-{p}"),
        format!("/v1/Distinct?type={entity}&fields={p}"),
        format!(
            "/v1/Distinct?type={entity}&fields=Id&rawfilter={}",
            encode(&format!("isnotnull({path})"))
        ),
        format!("/v1/Distinct?type={entity}&fields=Id&rawsort=-{p}"),
    ]
}

/// Channels without a path: searches over closed titles, tags, positions, availability.
fn pathless_channels() -> Vec<String> {
    [
        "/v1/AccommodationRoom?searchfilter=Panorama",
        "/v1/AccommodationRoom?searchfilter=Alpin",
        "/v1/AccommodationRoom?searchfilter=room-1",
        "/v1/Find?q=Panorama&type=AccommodationRoom",
        "/v1/Find?q=Panorama&type=AccommodationRoom&searchbasetext=true",
        "/v1/AccommodationRoom?tagfilter=or(wellness,family)",
        "/v1/AccommodationRoom?odhtagfilter=or(wellness,family)",
        "/v1/AccommodationRoom?latitude=46.49&longitude=11.35&radius=1000",
        "/v1/AccommodationRoom?locfilter=regREG-a",
        "/v1/Accommodation?availabilitycheck=true&arrival=2025-07-01&departure=2025-07-02",
        "/v1/Distinct?type=Accommodation&fields=Id&tagfilter=or(wellness,family)",
    ]
    .iter()
    .map(|u| u.to_string())
    .collect()
}

fn total(body: &str) -> u64 {
    let v: Value = serde_json::from_str(body).unwrap();
    v["TotalResults"]
        .as_u64()
        .or_else(|| v["totalResults"].as_u64())
        .or_else(|| v.as_array().map(|a| a.len() as u64))
        .unwrap_or_else(|| panic!("no count in {body}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_answers_do_not_depend_on_closed_values() {
    let (a, b) = (app_with('a').await, app_with('b').await);
    let mut uris: Vec<String> = accommodation_paths()
        .iter()
        .flat_map(|p| channels("Accommodation", p))
        .collect();
    uris.extend(
        ROOM_PATHS
            .iter()
            .flat_map(|p| channels("AccommodationRoom", p)),
    );
    uris.extend(pathless_channels());

    let mut leaks = Vec::new();
    for uri in &uris {
        let (answer_a, answer_b) = (answer(&a, uri, None).await, answer(&b, uri, None).await);
        assert!(answer_a.0 < 500, "{uri}: {answer_a:?}");
        if answer_a != answer_b {
            leaks.push(format!("{uri}\n  a: {answer_a:?}\n  b: {answer_b:?}"));
        }
    }
    assert!(
        leaks.is_empty(),
        "{} of {} answers depend on closed values:\n{}",
        leaks.len(),
        uris.len(),
        leaks.join("\n")
    );

    // The rule is a refusal naming the parameter and the path, not an empty answer.
    let (status, body) = answer(
        &a,
        "/v1/Accommodation?rawfilter=eq(Availability.0.PriceFrom,147)",
        None,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("rawfilter") && body.contains("Availability.0.PriceFrom"),
        "{body}"
    );
    let (status, body) = answer(&a, "/v1/Accommodation?rawsort=-accoroominfo.0.Id", None).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("rawsort") && body.contains("accoroominfo.0.Id"),
        "{body}"
    );
    let (status, body) = answer(
        &a,
        "/v1/Find?q=x&filteronfields=Availability.[*].Date",
        None,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("filteronfields"), "{body}");
    let (status, body) = answer(&a, "/v1/Filter?expression=isnull(Availability)", None).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("expression"), "{body}");
    // Open paths and ordinary requests stay answered.
    for uri in [
        "/v1/Accommodation?rawfilter=eq(Active,true)&rawsort=-Shortname",
        "/v1/AccommodationRoom?rawfilter=eq(A0RID,'acco-1')",
        "/v1/Filter?expression=eq(Active,true)",
        "/v1/Find?q=hotel",
        "/v1/Distinct?type=Accommodation&fields=Id&rawfilter=eq(Active,true)",
    ] {
        assert_eq!(answer(&a, uri, None).await.0, 200, "{uri}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_still_filter_sort_and_search_by_closed_values() {
    let (a, b) = (app_with('a').await, app_with('b').await);
    let (token_a, token_b) = (reader_token(&a).await, reader_token(&b).await);
    // (uri, results in store a, results in store b)
    let cases: &[(&str, u64, u64)] = &[
        (
            "/v1/Accommodation?rawfilter=eq(Availability.0.PriceFrom,147)",
            1,
            0,
        ),
        (
            "/v1/Accommodation?rawfilter=eq(Availability[0].Available,true)",
            2,
            0,
        ),
        ("/v1/AccommodationRoom?rawfilter=gt(PriceFrom,100)", 0, 2),
        ("/v1/AccommodationRoom?searchfilter=Panorama", 2, 0),
        ("/v1/Find?q=Panorama&type=AccommodationRoom", 2, 0),
        (
            "/v1/Filter?type=Accommodation&expression=eq(Availability.0.PriceFrom,147)",
            1,
            0,
        ),
        (
            "/v1/Distinct?type=Accommodation&fields=Id&rawfilter=eq(Availability.0.PriceFrom,147)",
            1,
            0,
        ),
        ("/v1/Distinct?type=AccommodationRoom&fields=PriceFrom", 1, 1),
        ("/v1/AccommodationRoom?tagfilter=wellness", 2, 0),
        (
            "/v1/Accommodation?availabilitycheck=true&arrival=2025-07-01&departure=2025-07-02",
            2,
            0,
        ),
    ];
    for (uri, in_a, in_b) in cases {
        let (status, body) = answer(&a, uri, Some(&token_a)).await;
        assert_eq!((status, total(&body)), (200, *in_a), "{uri} in a: {body}");
        let (status, body) = answer(&b, uri, Some(&token_b)).await;
        assert_eq!((status, total(&body)), (200, *in_b), "{uri} in b: {body}");
    }
    // Sorting by a closed value follows it.
    let first = |body: &str| -> String {
        let v: Value = serde_json::from_str(body).unwrap();
        v["Items"][0]["Id"].as_str().unwrap().to_string()
    };
    let uri = "/v1/Accommodation?rawsort=Availability.0.PriceFrom";
    assert_eq!(first(&answer(&a, uri, Some(&token_a)).await.1), "acco-1");
    assert_eq!(first(&answer(&b, uri, Some(&token_b)).await.1), "acco-2");
}
