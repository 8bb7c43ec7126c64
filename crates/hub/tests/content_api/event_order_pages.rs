//! Pages of events in their next-begin order (`sort=asc|desc|upcoming`, issue 18): each
//! page sorts only the events' keys and next begins, then reads its documents. Whatever
//! the page, a client sees the slice of the whole read in that order (one statement
//! over the documents), events without a next begin last, ties broken by id. Both
//! backends.

use serde_json::{json, Value};

use super::support::{self, get, item_ids, TestApp};

const EVENTS: usize = 300;

/// Event `i`: no dates (every seventh), a date that is over (every eleventh, so no next
/// begin), or one or two ranges in 2030 whose begins repeat every 40 events (ties), the
/// second, over, only for odd events.
fn event(i: usize) -> Value {
    let id = format!("ev-{i:04}");
    let day = |d: usize| format!("2030-{:02}-{:02}T00:00:00", 6 + d / 28, 1 + d % 28);
    let dates = match i {
        _ if i.is_multiple_of(7) => json!([]),
        _ if i.is_multiple_of(11) => {
            json!([{"From": "2024-03-01T00:00:00", "To": "2024-03-02T00:00:00"}])
        }
        _ if i % 2 == 1 => json!([
            {"From": day(i % 40), "To": day(i % 40 + 1)},
            {"From": "2024-02-01T00:00:00", "To": "2024-02-02T00:00:00"},
        ]),
        _ => json!([{"From": day(i % 40), "To": day(i % 40)}]),
    };
    json!({
        "Id": id,
        "_Meta": {"Id": id, "Type": "event", "Source": "lts", "Reduced": false},
        "Shortname": format!("event {}", EVENTS - i),
        "Active": !i.is_multiple_of(3),
        "Detail": {"en": {"Title": format!("Event {i}")}},
        "EventDate": dates,
    })
}

fn app() -> TestApp {
    let docs: Vec<(&'static str, Value)> = (0..EVENTS).map(|i| ("Event", event(i))).collect();
    support::app_with_documents(&docs, &support::test_config())
}

#[tokio::test]
async fn pages_of_the_next_begin_order_are_slices_of_the_whole_read() {
    let app = app();
    // Without `begindate` the next begin is measured from now: every event is listed.
    let lists = [
        "sort=asc",
        "sort=desc",
        "sort=asc&active=true",
        "sort=desc&active=false",
        "sort=upcoming&begindate=2030-06-20",
    ];
    for list in lists {
        let (status, whole) = get(&app, &format!("/v1/Event?{list}&pagesize=-1")).await;
        assert_eq!(status, 200, "{list}: {whole}");
        let all = item_ids(&whole);
        let listed = |i: &usize| match list {
            _ if list.ends_with("active=true") => !i.is_multiple_of(3),
            _ if list.ends_with("active=false") => i.is_multiple_of(3),
            _ => true,
        };
        if !list.contains("begindate") {
            assert_eq!(all.len(), (0..EVENTS).filter(listed).count(), "{list}");
            // Events without a next begin come last, in id order.
            let mut undated: Vec<String> = (0..EVENTS)
                .filter(|i| listed(i) && (i.is_multiple_of(7) || i.is_multiple_of(11)))
                .map(|i| format!("ev-{i:04}"))
                .collect();
            undated.sort();
            assert_eq!(all[all.len() - undated.len()..], undated, "{list}");
            assert_ne!(all[..7], undated[..7], "{list}");
        } else {
            assert!(
                all.len() > 20 && all.len() < EVENTS,
                "{list}: {}",
                all.len()
            );
        }

        let last = all.len().div_ceil(7);
        for number in [1, 2, 5, last - 1, last, last + 1] {
            let uri = format!("/v1/Event?{list}&pagesize=7&pagenumber={number}");
            let (status, body) = get(&app, &uri).await;
            assert_eq!(status, 200, "{uri}: {body}");
            let start = ((number - 1) * 7).min(all.len());
            let end = (start + 7).min(all.len());
            assert_eq!(item_ids(&body), all[start..end], "{uri}");
            assert_eq!(body["TotalResults"], all.len(), "{uri}");
        }
    }
}

#[tokio::test]
async fn pages_of_the_next_begin_order_follow_writes_at_once() {
    // The order's keys are kept between pages (measured from now, they hold until a
    // date range ends): a write must show at once.
    let app = app();
    let page = |number: usize| format!("/v1/Event?sort=asc&pagesize=7&pagenumber={number}");
    let (_, before) = get(&app, &page(1)).await;
    let (_, second) = get(&app, &page(2)).await;
    let total = before["TotalResults"].as_u64().unwrap();

    // An event whose one range begins before every other: first now.
    let mut first = event(1);
    first["Id"] = json!("ev-new");
    first["_Meta"]["Id"] = json!("ev-new");
    first["EventDate"] = json!([{"From": "2029-01-01T00:00:00", "To": "2029-01-02T00:00:00"}]);
    app.store
        .content()
        .put("Event", first, "2024-02-01T00:00:00".into(), false)
        .await
        .unwrap();
    let (_, after) = get(&app, &page(1)).await;
    let mut expected = vec!["ev-new".to_string()];
    expected.extend_from_slice(&item_ids(&before)[..6]);
    assert_eq!(item_ids(&after), expected);
    assert_eq!(after["TotalResults"], total + 1);

    let deleted = app.store.content().delete("Event", "ev-new").await;
    assert!(deleted.unwrap());
    assert_eq!(get(&app, &page(1)).await.1, before);
    assert_eq!(get(&app, &page(2)).await.1, second);
}
