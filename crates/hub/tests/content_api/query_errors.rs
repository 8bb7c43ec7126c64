//! Query errors found while a query runs (a `rawfilter`-language comparison whose field
//! holds another JSON type than the value) name the parameter the expression came from
//! and the value's position in it — whichever endpoint compiled it, on either backend.

use std::sync::OnceLock;

use serde_json::json;

use crate::support::{self, encode, get, TestApp};

/// This module's app: an event whose `PriceFrom` is text (as in the demo data).
fn app() -> &'static TestApp {
    static APP: OnceLock<TestApp> = OnceLock::new();
    APP.get_or_init(|| {
        let (store, dir) = support::backend();
        let event = json!({
            "Id": "EV-QUERY-1",
            "Shortname": "Concert",
            "Active": true,
            "EventDate": [{"From": "2030-01-01T00:00:00", "To": "2030-01-02T00:00:00", "PriceFrom": "12"}]
        });
        store
            .content()
            .put_batch_blocking(&[("Event", event)], &mut |_| {})
            .expect("loading fixtures");
        TestApp {
            router: hub::router(store.clone(), &support::test_config()),
            store,
            _dir: dir,
        }
    })
}

#[tokio::test]
async fn type_mismatches_name_the_parameter_that_carried_the_expression() {
    // (endpoint with the expression's parameter, expression, parameter, position)
    let cases = [
        (
            "/v1/Event?rawfilter=",
            "gt(EventDate.0.PriceFrom,0)",
            "rawfilter",
            26,
        ),
        (
            "/v1/Filter?type=Event&expression=",
            "gt(EventDate.0.PriceFrom,0)",
            "expression",
            26,
        ),
        (
            "/v1/Filter?type=Event&expression=",
            "and(eq(Active,true),gt(EventDate.0.PriceFrom,0))",
            "expression",
            46,
        ),
        (
            "/v1/Event?rawfilter=",
            "or(eq(Shortname,'x'),eq(Active,1))",
            "rawfilter",
            32,
        ),
    ];
    for (endpoint, expression, parameter, position) in cases {
        let (status, body) = get(app(), &format!("{endpoint}{}", encode(expression))).await;
        assert_eq!(status, 400, "{endpoint}{expression}: {body}");
        assert_eq!(
            body["type"], "urn:hub:problem:type-mismatch",
            "{expression}"
        );
        assert_eq!(body["parameter"], parameter, "{endpoint}{expression}");
        assert_eq!(body["position"], position, "{endpoint}{expression}");
        assert!(
            body["detail"]
                .as_str()
                .unwrap()
                .ends_with(&format!("(the value at position {position})")),
            "{body}"
        );
    }
}

#[tokio::test]
async fn the_filter_endpoint_names_expression_for_the_event_price_mismatch() {
    let (status, body) = get(
        app(),
        &format!(
            "/v1/Filter?type=Event&expression={}",
            encode("gt(EventDate.0.PriceFrom,0)")
        ),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["detail"],
        "the field holds text but the value compared with it is a number; write the value as the field's type (the value at position 26)"
    );
    assert_eq!(
        (body["parameter"].as_str(), body["position"].as_u64()),
        (Some("expression"), Some(26))
    );
}

/// Values an engine cannot use are blamed on the parameter they came from, never on a
/// fixed one, and are never server errors.
#[tokio::test]
async fn unusable_filter_values_name_the_filter_endpoints_parameter() {
    let filters = [
        r"likein(Shortname,'\p{L}+')",
        r"likein(Shortname,'[[:alpha:]')",
        "gt(EventDate.0.From,'0000-01-01T24:00:00')",
    ];
    for filter in filters {
        let uri = format!("/v1/Filter?type=Event&expression={}", encode(filter));
        let (status, body) = get(app(), &uri).await;
        assert!(status == 200 || status == 400, "{filter}: {status} {body}");
        if status == 400 {
            assert_eq!(body["parameter"], "expression", "{filter}: {body}");
        }
    }
}
