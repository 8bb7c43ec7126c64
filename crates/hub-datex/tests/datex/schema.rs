//! Rendered documents validate against the DATEX II v2.0 XSD and say what the
//! announcements say.

use chrono::Duration;
use hub_datex::{
    render_feed, render_situation_publication, DatexConfig, ProviderConfig, CATEGORIES,
    DATEX_NAMESPACE, MAX_CHARS,
};
use serde_json::{json, Value};

use crate::support::{demo_like, utc, validate, Doc, El};

fn provider(name: &str) -> ProviderConfig {
    DatexConfig::default().provider(name).unwrap().clone()
}

fn render(provider: &ProviderConfig, docs: &[Value], now: &str) -> Vec<u8> {
    render_situation_publication(provider, docs, utc(now), "Europe/Rome").unwrap()
}

const NOW: &str = "2025-06-15T10:00:00Z";

#[test]
fn demo_like_feeds_of_two_providers_validate_and_hold_current_and_future_situations() {
    let now = utc(NOW);
    let docs = demo_like(120, now);
    let bz = render(&provider("province-bz"), &docs, NOW);
    let a22 = render(&provider("a22"), &docs, NOW);
    validate("demo-like", &[&bz, &a22]);

    for (doc, supplier, id_prefix) in [(&bz, "ITPBZ", "PROVINCE_BZ-"), (&a22, "IT492", "A22-")] {
        let root = El::parse(doc);
        assert_eq!(root.name, "d2LogicalModel");
        assert_eq!(root.attr("xmlns"), Some(DATEX_NAMESPACE));
        assert_eq!(root.attr("modelBaseVersion"), Some("2"));
        assert_eq!(
            root.text_at("exchange/supplierIdentification/nationalIdentifier"),
            Some(supplier)
        );
        assert_eq!(
            root.text_at("payloadPublication/publicationCreator/nationalIdentifier"),
            Some(supplier)
        );
        assert_eq!(
            root.at("payloadPublication").unwrap().attr("xsi:type"),
            Some("SituationPublication")
        );
        assert_eq!(
            root.text_at("payloadPublication/publicationTime"),
            Some("2025-06-15T12:00:00.000+02:00")
        );
        let situations = root.situations();
        assert!(
            situations
                .iter()
                .all(|s| s.attr("id").unwrap().starts_with(id_prefix)),
            "each provider has only its own source"
        );
        let statuses: Vec<&str> = situations
            .iter()
            .map(|s| {
                s.text_at("situationRecord/validity/validityStatus")
                    .unwrap()
            })
            .collect();
        assert!(
            statuses.contains(&"active"),
            "current situations are published"
        );
        assert!(
            statuses.contains(&"definedByValidityTimeSpec"),
            "future short-lived situations are published"
        );
        // Expired ones (every third document) are not.
        assert!(
            situations.len() < 120 * 2 / 3 + 1,
            "{} situations",
            situations.len()
        );
        let ids: Vec<&str> = situations.iter().map(|s| s.attr("id").unwrap()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted, "situations are sorted by id");
    }
}

#[test]
fn an_empty_provider_is_a_valid_feed_without_situations() {
    let nobody = ProviderConfig {
        name: "nobody".into(),
        source: "NOBODY".into(),
        country: "at".into(),
        national_identifier: "AT-X".into(),
    };
    let docs = demo_like(10, utc(NOW));
    let empty_source = render(&nobody, &docs, NOW);
    let no_docs = render(&provider("a22"), &[], NOW);
    validate("empty", &[&empty_source, &no_docs]);
    assert!(El::parse(&empty_source).situations().is_empty());
    assert_eq!(
        El::parse(&empty_source).text_at("exchange/supplierIdentification/country"),
        Some("at")
    );
    assert!(El::parse(&no_docs).situations().is_empty());
}

#[test]
fn every_category_becomes_its_record_type_and_validates() {
    let now = utc(NOW);
    let docs: Vec<Value> = CATEGORIES
        .iter()
        .map(|c| {
            Doc::new(
                c.tag,
                "PROVINCE_BZ",
                c.tag,
                now - Duration::hours(1),
                Some(now + Duration::hours(5)),
            )
            .value
        })
        .collect();
    let xml = render(&provider("province-bz"), &docs, NOW);
    validate("categories", &[&xml]);
    let root = El::parse(&xml);
    assert_eq!(root.situations().len(), CATEGORIES.len());
    for category in CATEGORIES {
        let situation = root
            .situations()
            .into_iter()
            .find(|s| s.attr("id") == Some(category.tag))
            .unwrap();
        let record = situation.child("situationRecord").unwrap();
        assert_eq!(
            record.attr("xsi:type"),
            Some(category.record.xsi_type()),
            "{}",
            category.tag
        );
        assert_eq!(
            situation.text_at("overallSeverity"),
            Some(category.severity)
        );
        let tail: Vec<(&str, &str)> = category.record.elements();
        let names = record.child_names();
        let after_location =
            &names[names.iter().position(|n| *n == "groupOfLocations").unwrap() + 1..];
        assert_eq!(
            after_location,
            tail.iter().map(|(n, _)| *n).collect::<Vec<_>>().as_slice(),
            "{}",
            category.tag
        );
    }
    let speed = root
        .situations()
        .into_iter()
        .find(|s| s.attr("id") == Some("speed-camera"))
        .unwrap();
    assert_eq!(
        speed.text_at("situationRecord/complianceOption"),
        Some("mandatory")
    );
    assert_eq!(
        speed.text_at("situationRecord/speedManagementType"),
        Some("policeSpeedChecksInOperation")
    );
}

#[test]
fn comments_come_in_every_language_the_document_has() {
    let now = utc(NOW);
    let doc = Doc::new(
        "ml",
        "PROVINCE_BZ",
        "road-work",
        now - Duration::days(1),
        None,
    )
    .with(|v| {
        v["Detail"] = json!({
            "en": {"Title": "Road works", "BaseText": "near Brixen"},
            "de": {"Title": "Baustelle", "BaseText": ""},
            "it": {"Title": "Cantiere", "BaseText": "presso Bressanone"},
            "lad": {"Title": "Lurs", "BaseText": null},
            "ru": {"Title": "", "BaseText": ""}
        });
    });
    let xml = render(&provider("province-bz"), &[doc.value], NOW);
    validate("multilingual", &[&xml]);
    let root = El::parse(&xml);
    let comment = root.situations()[0]
        .at("situationRecord/generalPublicComment/comment")
        .unwrap();
    let values = comment.values();
    let expected = [
        ("it", "Cantiere presso Bressanone"),
        ("de", "Baustelle"),
        ("en", "Road works near Brixen"),
        ("lad", "Lurs"),
    ];
    assert_eq!(
        values,
        expected
            .map(|(l, t)| (l.to_string(), t.to_string()))
            .to_vec(),
        "languages without text are left out"
    );
}

#[test]
fn a_situation_without_coordinates_has_a_point_without_coordinates() {
    let now = utc(NOW);
    let no_geo = Doc::new(
        "nogeo",
        "PROVINCE_BZ",
        "closure",
        now - Duration::days(1),
        None,
    )
    .with(|v| {
        v.as_object_mut().unwrap().remove("Geo");
    });
    let zero = Doc::new(
        "zero",
        "PROVINCE_BZ",
        "closure",
        now - Duration::days(1),
        None,
    )
    .with(|v| {
        v["Geo"] = json!({"position": {"Latitude": 0, "Longitude": 0}});
    });
    let xml = render(&provider("province-bz"), &[no_geo.value, zero.value], NOW);
    validate("no-coordinates", &[&xml]);
    for situation in El::parse(&xml).situations() {
        let location = situation.at("situationRecord/groupOfLocations").unwrap();
        assert_eq!(location.attr("xsi:type"), Some("Point"));
        assert!(
            location.children.is_empty(),
            "no invented 0,0 point: {location:?}"
        );
    }
    assert!(!String::from_utf8_lossy(&xml).contains("<latitude>0</latitude>"));
}

#[test]
fn long_texts_are_cut_to_the_schema_limit_and_special_characters_survive() {
    let now = utc(NOW);
    let special = "Coda <km 12> & \"uscita\" l'Adige ]]> ümlaut 🚧";
    let long = format!("{special} {}", "Brennerautobahn gesperrt. ".repeat(100));
    let doc = Doc::new(
        "long",
        "A22",
        "congestion",
        now - Duration::hours(1),
        Some(now + Duration::hours(1)),
    )
    .with(|v| {
        v["Detail"]["it"] = json!({"Title": special, "BaseText": ""});
        v["Detail"]["de"] = json!({"Title": "Stau", "BaseText": long});
        v["Mapping"] = json!({"ProviderA22": {"Id": "x".repeat(2000)}});
        v["Id"] = json!("urn:announcements:a22:id<&>\"'");
        v["_Meta"]["Source"] = json!("a22");
    });
    let xml = render(&provider("a22"), &[doc.value], NOW);
    validate("long-and-special", &[&xml]);
    let root = El::parse(&xml);
    let situation = root.situations()[0];
    assert_eq!(situation.attr("id"), Some("id<&>\"'"));
    let values = situation
        .at("situationRecord/generalPublicComment/comment")
        .unwrap()
        .values();
    assert_eq!(
        values[0].1, special,
        "escaped on the way out, identical after parsing"
    );
    let de = &values[1].1;
    assert_eq!(de.chars().count(), MAX_CHARS);
    assert!(de.starts_with(&format!("Stau {special} Brennerautobahn gesperrt.")));
    assert!(de.ends_with('…'));
    assert_eq!(
        situation
            .text_at("situationRecord/situationRecordCreationReference")
            .unwrap()
            .chars()
            .count(),
        MAX_CHARS
    );
    assert_eq!(
        situation.text_at("situationRecord/source/sourceName/values/value"),
        Some("a22")
    );
}

#[test]
fn validity_times_and_versions_come_from_the_document() {
    let now = utc(NOW);
    let future = Doc::new(
        "future",
        "PROVINCE_BZ",
        "accident",
        utc("2025-06-20T08:00:00Z"),
        Some(utc("2025-06-20T12:00:00Z")),
    )
    .with(|v| {
        v["_Meta"]["UpdateInfo"]["UpdateHistory"] = json!([{}, {}, {}, {}]);
        v["LastChange"] = json!("2025-06-14T09:30:00.250Z");
        v["FirstImport"] = json!("2025-06-14T09:00:00+02:00");
    });
    let open = Doc::new(
        "open",
        "PROVINCE_BZ",
        "road-work",
        now - Duration::days(30),
        None,
    );
    let xml = render(&provider("province-bz"), &[future.value, open.value], NOW);
    validate("validity", &[&xml]);
    let root = El::parse(&xml);
    let find = |id: &str| {
        root.situations()
            .into_iter()
            .find(|s| s.attr("id") == Some(id))
            .unwrap()
            .clone()
    };
    let future = find("future");
    let record = future.child("situationRecord").unwrap();
    assert_eq!(record.attr("version"), Some("4"));
    assert_eq!(future.attr("version"), Some("4"));
    assert_eq!(record.text_at("probabilityOfOccurrence"), Some("probable"));
    assert_eq!(
        record.text_at("validity/validityStatus"),
        Some("definedByValidityTimeSpec")
    );
    assert_eq!(
        record.text_at("validity/validityTimeSpecification/overallStartTime"),
        Some("2025-06-20T10:00:00+02:00")
    );
    assert_eq!(
        record.text_at("validity/validityTimeSpecification/overallEndTime"),
        Some("2025-06-20T14:00:00+02:00")
    );
    assert_eq!(
        record.text_at("situationRecordCreationTime"),
        Some("2025-06-14T09:00:00+02:00")
    );
    assert_eq!(
        record.text_at("situationRecordVersionTime"),
        Some("2025-06-14T11:30:00.250+02:00")
    );
    assert_eq!(
        record.text_at("generalPublicComment/commentDateTime"),
        Some("2025-06-14T11:30:00.250+02:00")
    );
    let open = find("open");
    assert_eq!(
        open.text_at("situationRecord/validity/validityStatus"),
        Some("active")
    );
    assert_eq!(
        open.text_at("situationRecord/probabilityOfOccurrence"),
        Some("certain")
    );
    assert!(open
        .at("situationRecord/validity/validityTimeSpecification/overallEndTime")
        .is_none());
}

#[test]
fn today_is_decided_in_the_configured_time_zone() {
    // An open-ended congestion that started at 23:30 UTC on 14 June: in Rome that is
    // already 15 June, so at 10:00 UTC on 15 June it is "today" in Rome but not in UTC.
    let doc = Doc::new(
        "late",
        "PROVINCE_BZ",
        "congestion",
        utc("2025-06-14T23:30:00Z"),
        None,
    )
    .value;
    let p = provider("province-bz");
    let rome = render_feed(&p, std::slice::from_ref(&doc), utc(NOW), "Europe/Rome").unwrap();
    let utc_feed = render_feed(&p, std::slice::from_ref(&doc), utc(NOW), "UTC").unwrap();
    assert_eq!((rome.situations, utc_feed.situations), (1, 0));
    assert_eq!(
        rome.valid_until,
        Some(utc("2025-06-15T22:00:00Z")),
        "the situation leaves the feed at midnight in Rome"
    );
    let utc_doc = El::parse(&utc_feed.body);
    assert_eq!(
        utc_doc.text_at("payloadPublication/publicationTime"),
        Some("2025-06-15T10:00:00.000+00:00")
    );
    validate("utc", &[&utc_feed.body]);
}

#[test]
fn the_entity_tag_ignores_the_publication_time_but_not_the_content() {
    let now = utc(NOW);
    let docs = demo_like(30, now);
    let p = provider("province-bz");
    let first = render_feed(&p, &docs, now, "Europe/Rome").unwrap();
    let later = render_feed(&p, &docs, now + Duration::seconds(1), "Europe/Rome").unwrap();
    assert_ne!(first.body, later.body, "the publication time moved");
    assert_eq!(first.etag, later.etag);
    let mut edited = docs.clone();
    edited[0]["Detail"]["it"]["Title"] = json!("Coda modificata");
    assert_ne!(
        render_feed(&p, &edited, now, "Europe/Rome").unwrap().etag,
        first.etag
    );
}

#[test]
fn an_unknown_time_zone_is_an_error_not_a_guess() {
    let err = render_situation_publication(&provider("a22"), &[], utc(NOW), "Europe/Atlantis")
        .unwrap_err();
    assert!(err.to_string().contains("Europe/Atlantis"), "{err}");
}
