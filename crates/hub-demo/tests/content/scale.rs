use hub_demo::{content_document_count, content_documents, DemoOptions};

use crate::*;

#[test]
fn same_options_give_byte_identical_documents() {
    let first = docs();
    let mut i = 0;
    content_documents(
        &DemoOptions {
            scale: 1,
            anchor: anchor(),
        },
        &mut |e, d| {
            let (e0, d0) = &first[i];
            assert_eq!(*e0, e, "entity order differs at document {i}");
            assert_eq!(
                serde_json::to_string(d0).unwrap(),
                serde_json::to_string(&d).unwrap(),
                "document {i} differs"
            );
            i += 1;
        },
    );
    assert_eq!(i, first.len());
}

#[test]
fn scale_one_is_large_and_its_count_is_predicted() {
    let c = counts(docs().iter().map(|(e, _)| *e));
    let total: u64 = c.values().sum();
    assert!(total >= 20_000, "only {total} documents");
    assert_eq!(total, content_document_count(1));
    for (entity, _) in ENTITIES {
        assert!(
            c.get(entity).copied().unwrap_or(0) > 0,
            "no {entity} documents"
        );
    }
    assert_eq!(
        c.len(),
        ENTITIES.len(),
        "unexpected entity names: {:?}",
        c.keys()
    );
    for (entity, n) in [
        ("HubActivityPoi", 7000),
        ("Accommodation", 4000),
        ("Event", 2500),
        ("Article", 1200),
        ("EventShort", 600),
        ("WebcamInfo", 300),
        ("Announcement", 120),
        ("Region", 11),
        ("Municipality", 116),
        ("WeatherDistrict", 7),
        ("WeatherForecast", 116),
    ] {
        assert_eq!(c[entity], n, "{entity}");
    }
    for (entity, lo, hi) in [
        ("Tag", 60, 160),
        ("Source", 10, 15),
        ("District", 250, 400),
        ("Area", 80, 120),
        ("SkiArea", 25, 35),
        ("SkiRegion", 6, 10),
        ("TourismAssociation", 30, 50),
        ("WeatherRealtime", 50, 70),
        ("AccommodationRoom", 5000, 9000),
    ] {
        assert!((lo..=hi).contains(&c[entity]), "{entity}: {}", c[entity]);
    }
}

#[test]
fn scale_two_doubles_the_large_types_and_keeps_the_rest() {
    let one = counts(docs().iter().map(|(e, _)| *e));
    let mut entities = Vec::new();
    let mut first_pois = Vec::new();
    content_documents(
        &DemoOptions {
            scale: 2,
            anchor: anchor(),
        },
        &mut |e, d| {
            if e == "HubActivityPoi" && first_pois.len() < 20 {
                first_pois.push(d["Id"].as_str().unwrap().to_owned());
            }
            entities.push(e);
        },
    );
    let two = counts(entities.iter().copied());
    assert_eq!(two.values().sum::<u64>(), content_document_count(2));
    for (entity, n) in &one {
        if entity == "AccommodationRoom" {
            let ratio = two[entity] as f64 / *n as f64;
            assert!((1.9..2.1).contains(&ratio), "rooms grew by {ratio}");
        } else if LARGE.contains(&entity.as_str()) {
            assert_eq!(two[entity], 2 * n, "{entity}");
        } else {
            assert_eq!(two[entity], *n, "{entity}");
        }
    }
    // A larger scale extends the data: the first documents stay the same.
    let first_at_one: Vec<String> = of("HubActivityPoi")
        .iter()
        .take(20)
        .map(|d| d["Id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(first_pois, first_at_one);

    let mut zero = Vec::new();
    content_documents(
        &DemoOptions {
            scale: 0,
            anchor: anchor(),
        },
        &mut |e, _| zero.push(e),
    );
    assert_eq!(zero.len() as u64, content_document_count(0));
    assert!(zero.iter().all(|e| !LARGE.contains(e)));
}
