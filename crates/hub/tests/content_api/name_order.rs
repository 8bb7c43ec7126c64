//! `rawsort=Shortname` (issue 18): lists sorted by name read the `shortname` column
//! where it holds the name and the document where it does not, in the one `rawsort`
//! order of every other path: numbers and booleans by value, then text bytewise (arrays
//! and objects as their JSON text among it), missing and null last, ties by id. Whole
//! reads and pages agree, before and after writes that change a name's type. Both
//! backends.

use serde_json::{json, Value};

use super::support::{self, get, item_ids, TestApp};

/// POIs whose names are of every JSON type: bytewise order puts `Zebra` before `["b"]`
/// before `apple` before `{"de":"Objekt"}` before `Äpfel`; `true` sorts as 1.
fn names() -> Vec<(&'static str, Value)> {
    vec![
        ("n-10", json!("Zebra")),
        ("n-11", json!("apple")),
        ("n-12", json!("Äpfel")),
        ("n-13", json!("Zebra")),
        ("n-14", json!(42)),
        ("n-15", json!(7.5)),
        ("n-16", json!(true)),
        ("n-17", json!({"de": "Objekt"})),
        ("n-18", json!(["b"])),
        ("n-19", Value::Null),
        ("n-20", json!("missing")),
        ("n-21", json!("")),
    ]
}

fn poi(id: &str, name: &Value) -> Value {
    let mut doc = json!({
        "Id": id,
        "_Meta": {"Id": id, "Type": "hubactivitypoi", "Source": "lts", "Reduced": false},
        "Active": true,
        "Shortname": name,
    });
    if id == "n-20" {
        doc.as_object_mut().unwrap().remove("Shortname");
    }
    doc
}

fn app() -> TestApp {
    let docs: Vec<(&'static str, Value)> = names()
        .iter()
        .map(|(id, name)| ("HubActivityPoi", poi(id, name)))
        .collect();
    support::app_with_documents(&docs, &support::test_config())
}

/// The whole list in `order`, and each page of three of it, which must be its slices.
async fn sorted(app: &TestApp, order: &str) -> Vec<String> {
    let (status, whole) = get(app, &format!("/v1/HubActivityPoi?{order}&pagesize=-1")).await;
    assert_eq!(status, 200, "{order}: {whole}");
    let all = item_ids(&whole);
    for number in 1..=all.len().div_ceil(3) + 1 {
        let uri = format!("/v1/HubActivityPoi?{order}&pagesize=3&pagenumber={number}");
        let (status, page) = get(app, &uri).await;
        assert_eq!(status, 200, "{uri}: {page}");
        let from = ((number - 1) * 3).min(all.len());
        let to = (number * 3).min(all.len());
        assert_eq!(item_ids(&page), all[from..to], "{uri}");
    }
    all
}

#[tokio::test]
async fn lists_sorted_by_name_order_every_type_of_name_as_other_paths_do() {
    let app = app();
    let ascending = [
        "n-16", "n-15", "n-14", "n-21", "n-10", "n-13", "n-18", "n-11", "n-17", "n-12", "n-19",
        "n-20",
    ];
    let descending = [
        "n-12", "n-17", "n-11", "n-18", "n-10", "n-13", "n-21", "n-14", "n-15", "n-16", "n-19",
        "n-20",
    ];
    assert_eq!(sorted(&app, "rawsort=Shortname").await, ascending);
    assert_eq!(sorted(&app, "rawsort=-Shortname").await, descending);
    // A filter and a second key go through the same order.
    assert_eq!(
        sorted(
            &app,
            "rawsort=-Active,Shortname&rawfilter=ne(Id,%22n-13%22)"
        )
        .await,
        ascending
            .iter()
            .filter(|id| **id != "n-13")
            .copied()
            .collect::<Vec<_>>()
    );

    // A number becomes a name and a name a number: both move at once.
    let content = app.store.content();
    for (id, name) in [("n-14", json!("Mango")), ("n-11", json!(3))] {
        let written = content
            .put(
                "HubActivityPoi",
                poi(id, &name),
                "2024-02-01T00:00:00".into(),
                false,
            )
            .await;
        written.unwrap_or_else(|e| panic!("{id}: {e}"));
    }
    assert_eq!(
        sorted(&app, "rawsort=Shortname").await,
        [
            "n-16", "n-11", "n-15", "n-21", "n-14", "n-10", "n-13", "n-18", "n-17", "n-12", "n-19",
            "n-20"
        ]
    );
    assert_eq!(
        sorted(&app, "rawsort=-Shortname").await,
        [
            "n-12", "n-17", "n-18", "n-10", "n-13", "n-14", "n-21", "n-15", "n-11", "n-16", "n-19",
            "n-20"
        ]
    );
}
