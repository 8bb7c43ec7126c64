//! Regression against the reference: the ODH DATEX service's golden output
//! (`fixtures/datex/golden-SituationPublication.xml`, rendered by the legacy .NET app)
//! for its input (`announcements-input.json`), compared situation by situation.
//!
//! Differences that are decided (design.md, reference A.4/A.5, crate README) and
//! therefore expected:
//!
//! 1. Situations 3 (animal-on-road → AnimalPresenceObstruction) and 6 (weather-related →
//!    PoorEnvironmentConditions) are published: the legacy app dropped them through a
//!    class-name bug that the current reference (Go) fixed.
//! 2. Situation 8 (prohibition) is published: the category is enabled in the
//!    reference's production configuration, disabled only in its legacy seed.
//! 3. `headerInformation/urgency` (normalUrgency) is written; the legacy app never
//!    serialised it.
//! 4. SpeedManagement records carry `speedManagementType` after `complianceOption` (XSD
//!    order); the legacy app never wrote the element, the Go service wrote it first.
//! 5. A language without text gets no comment value (golden situation 5 has an empty
//!    `de` value because the legacy app always wrote it).
//! 6. Comments carry every language the document has (situation 1 also has `en`); the
//!    reference writes only `it` and `de`.
//! 7. `situation/@version` follows the update history like the record's version (the
//!    reference always writes "1").
//! 8. The root binds only `xsi:` (the legacy root also declared an unused `xsd:`); the
//!    XSI prefix is `xsi:` as in the golden file (the Go service used
//!    `_XMLSchema-instance:`); `publicationTime` is the render time.
//!
//! Times are compared as instants; both documents happen to write them in Europe/Rome.

use chrono::{DateTime, Utc};
use hub_datex::{render_situation_publication, DatexConfig};
use serde_json::Value;

use crate::support::{fixture, utc, validate, El};

/// Situations the golden file lacks and Hub publishes (differences 1 and 2).
const ADDED: [&str; 3] = ["3", "6", "8"];

fn instant(text: Option<&str>) -> Option<DateTime<Utc>> {
    text.map(|t| {
        DateTime::parse_from_rfc3339(t)
            .unwrap_or_else(|e| panic!("{t}: {e}"))
            .with_timezone(&Utc)
    })
}

#[test]
fn the_reference_fixture_renders_like_the_golden_output() {
    let (Some(input), Some(golden)) = (
        fixture("datex/announcements-input.json"),
        fixture("datex/golden-SituationPublication.xml"),
    ) else {
        return;
    };
    let input: Value = serde_json::from_slice(&std::fs::read(input).unwrap()).unwrap();
    let items = input["Items"].as_array().unwrap();
    let golden = El::parse(&std::fs::read(golden).unwrap());
    // The golden file's own publication time.
    let now = utc("2026-08-03T15:10:52Z");
    let provider = DatexConfig::default()
        .provider("province-bz")
        .unwrap()
        .clone();
    let ours_xml = render_situation_publication(&provider, items, now, "Europe/Rome").unwrap();
    validate("golden-regression", &[&ours_xml]);
    let ours = El::parse(&ours_xml);

    // Document level.
    for path in [
        "exchange/supplierIdentification/country",
        "exchange/supplierIdentification/nationalIdentifier",
        "payloadPublication/publicationCreator/nationalIdentifier",
    ] {
        assert_eq!(ours.text_at(path), golden.text_at(path), "{path}");
    }
    assert_eq!(
        ours.at("payloadPublication").unwrap().xsi_type(),
        Some("SituationPublication")
    );
    assert_eq!(
        ours.at("payloadPublication").unwrap().attr("lang"),
        golden.at("payloadPublication").unwrap().attr("lang")
    );

    // Same situations, in the same order, plus the decided additions.
    let golden_ids: Vec<&str> = golden
        .situations()
        .iter()
        .map(|s| s.attr("id").unwrap())
        .collect();
    let our_ids: Vec<&str> = ours
        .situations()
        .iter()
        .map(|s| s.attr("id").unwrap())
        .collect();
    let mut expected = golden_ids.clone();
    expected.extend(ADDED);
    expected.sort();
    assert_eq!(our_ids, expected);

    for g in golden.situations() {
        let id = g.attr("id").unwrap();
        let o = *ours
            .situations()
            .iter()
            .find(|s| s.attr("id") == Some(id))
            .unwrap();
        let (gr, or) = (
            g.child("situationRecord").unwrap(),
            o.child("situationRecord").unwrap(),
        );
        let ctx = |what: &str| format!("situation {id}: {what}");
        assert_eq!(
            o.text_at("overallSeverity"),
            g.text_at("overallSeverity"),
            "{}",
            ctx("severity")
        );
        assert_eq!(or.xsi_type(), gr.xsi_type(), "{}", ctx("record type"));
        assert_eq!(or.attr("id"), gr.attr("id"), "{}", ctx("record id"));
        assert_eq!(
            or.attr("version"),
            gr.attr("version"),
            "{}",
            ctx("record version")
        );
        for path in [
            "situationRecordCreationReference",
            "probabilityOfOccurrence",
            "validity/validityStatus",
            "source/sourceCountry",
            "source/sourceIdentification",
            "source/sourceName/values/value",
            "source/sourceType",
            "source/reliable",
            "generalPublicComment/commentType",
        ] {
            assert_eq!(or.text_at(path), gr.text_at(path), "{}", ctx(path));
        }
        for path in [
            "situationRecordCreationTime",
            "situationRecordVersionTime",
            "validity/validityTimeSpecification/overallStartTime",
            "validity/validityTimeSpecification/overallEndTime",
            "generalPublicComment/commentDateTime",
        ] {
            assert_eq!(
                instant(or.text_at(path)),
                instant(gr.text_at(path)),
                "{}",
                ctx(path)
            );
        }
        for path in [
            "groupOfLocations/pointByCoordinates/pointCoordinates/latitude",
            "groupOfLocations/pointByCoordinates/pointCoordinates/longitude",
        ] {
            let number = |el: &El| el.text_at(path).map(|t| t.parse::<f64>().unwrap());
            assert_eq!(number(or), number(gr), "{}", ctx(path));
        }
        // Comments: the golden values that have text (difference 5), then any other
        // language of the document (difference 6).
        let golden_comments: Vec<_> = gr
            .at("generalPublicComment/comment")
            .unwrap()
            .values()
            .into_iter()
            .filter(|(_, t)| !t.is_empty())
            .collect();
        let our_comments = or.at("generalPublicComment/comment").unwrap().values();
        assert_eq!(
            our_comments[..golden_comments.len()],
            golden_comments,
            "{}",
            ctx("comments")
        );
        let item = items
            .iter()
            .find(|i| i["Id"].as_str().unwrap().ends_with(&format!(":{id}")))
            .unwrap();
        for (lang, text) in &our_comments[golden_comments.len()..] {
            assert_eq!(
                *text,
                format!(
                    "{} {}",
                    item["Detail"][lang]["Title"].as_str().unwrap(),
                    item["Detail"][lang]["BaseText"].as_str().unwrap()
                ),
                "{}",
                ctx(lang)
            );
        }

        // Element order: the golden record's elements, in order, plus only the decided
        // additions (difference 4).
        let ours_names = or.child_names();
        let golden_names = gr.child_names();
        let extra: Vec<&str> = ours_names
            .iter()
            .copied()
            .filter(|n| !golden_names.contains(n))
            .collect();
        let allowed: &[&str] = if gr.xsi_type() == Some("SpeedManagement") {
            &["speedManagementType"]
        } else {
            &[]
        };
        assert_eq!(extra, allowed, "{}", ctx("added elements"));
        let common: Vec<&str> = ours_names
            .iter()
            .copied()
            .filter(|n| golden_names.contains(n))
            .collect();
        assert_eq!(common, golden_names, "{}", ctx("element order"));
        for name in [
            "accidentType",
            "abnormalTrafficType",
            "roadMaintenanceType",
            "publicEventType",
            "complianceOption",
            "roadOrCarriagewayOrLaneManagementType",
            "winterEquipmentManagementType",
        ] {
            assert_eq!(or.text_at(name), gr.text_at(name), "{}", ctx(name));
        }
        // Difference 7.
        assert_eq!(g.attr("version"), Some("1"));
        assert_eq!(
            o.attr("version"),
            or.attr("version"),
            "{}",
            ctx("situation version")
        );
        // Difference 3.
        assert_eq!(g.text_at("headerInformation/urgency"), None);
        assert_eq!(
            o.text_at("headerInformation/urgency"),
            Some("normalUrgency")
        );
    }

    // The additions are what the reference's table says.
    let added = |id: &str| {
        ours.situations()
            .into_iter()
            .find(|s| s.attr("id") == Some(id))
            .unwrap()
            .child("situationRecord")
            .unwrap()
            .clone()
    };
    assert_eq!(added("3").xsi_type(), Some("AnimalPresenceObstruction"));
    assert_eq!(
        added("3").text_at("animalPresenceType"),
        Some("animalsOnTheRoad")
    );
    assert_eq!(added("6").xsi_type(), Some("PoorEnvironmentConditions"));
    assert_eq!(added("6").text_at("poorEnvironmentType"), Some("fog"));
    assert_eq!(
        added("8").xsi_type(),
        Some("RoadOrCarriagewayOrLaneManagement")
    );
    assert_eq!(
        added("8").text_at("roadOrCarriagewayOrLaneManagementType"),
        Some("other")
    );
}
