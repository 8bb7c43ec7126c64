use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::*;

#[test]
fn every_document_has_the_common_fields() {
    let types: HashMap<&str, &str> = ENTITIES.iter().copied().collect();
    let no_detail = [
        "Tag",
        "WeatherDistrict",
        "WeatherForecast",
        "WeatherRealtime",
    ];
    let mut ids: HashSet<(&str, &str)> = HashSet::new();
    for (entity, d) in docs() {
        let id = str_of(d, "Id");
        assert!(!id.is_empty());
        assert!(ids.insert((entity, id)), "duplicate {entity} id {id}");
        let meta = &d["_Meta"];
        assert_eq!(meta["Id"], d["Id"], "{entity} {id}: _Meta.Id");
        assert_eq!(meta["Type"], types[entity], "{entity} {id}: _Meta.Type");
        assert!(!str_of(meta, "Source").is_empty());
        assert_eq!(meta["Reduced"], false);
        assert!(!str_of(meta, "LastChange").is_empty());
        assert!(
            !str_of(d, "Shortname").is_empty(),
            "{entity} {id}: Shortname"
        );
        assert!(d["Active"].is_boolean(), "{entity} {id}: Active");
        assert!(!str_of(d, "Source").is_empty());
        let first = parse_time(str_of(d, "FirstImport"));
        let last = parse_time(str_of(d, "LastChange"));
        assert!(first <= last, "{entity} {id}: FirstImport after LastChange");
        assert!(last <= now(), "{entity} {id}: LastChange after the anchor");
        let langs: Vec<&str> = d["HasLanguage"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        assert!(
            !langs.is_empty() && langs.iter().all(|l| ["de", "it", "en", "ld"].contains(l)),
            "{entity} {id}: {langs:?}"
        );
        let license = &d["LicenseInfo"];
        assert!(
            ["CC0", "CC-BY"].contains(&str_of(license, "License")),
            "{entity} {id}"
        );
        assert_eq!(license["ClosedData"], false);
        if no_detail.contains(entity) {
            continue;
        }
        let detail = d["Detail"]
            .as_object()
            .unwrap_or_else(|| panic!("{entity} {id}: no Detail"));
        let keys: HashSet<&str> = detail.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            langs.iter().copied().collect::<HashSet<_>>(),
            "{entity} {id}: Detail languages"
        );
        for (lang, text) in detail {
            assert!(
                !str_of(text, "Title").is_empty(),
                "{entity} {id}: empty {lang} title"
            );
        }
    }
}

#[test]
fn some_documents_lack_languages_coordinates_or_are_inactive() {
    for entity in ["HubActivityPoi", "Accommodation", "Event", "Article"] {
        let all = of(entity);
        let langs = |d: &Value| {
            d["HasLanguage"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert!(
            all.iter().any(|d| !langs(d).contains(&"en".to_owned())),
            "{entity}: all have en"
        );
        assert!(
            all.iter().any(|d| !langs(d).contains(&"de".to_owned())),
            "{entity}: all have de"
        );
        assert!(
            all.iter()
                .filter(|d| langs(d) == ["de", "it", "en"])
                .count()
                * 2
                > all.len(),
            "{entity}: most should have all three"
        );
    }
    let ladin = of("HubActivityPoi")
        .iter()
        .filter(|d| d["Detail"].get("ld").is_some())
        .count();
    assert!(ladin > 20, "only {ladin} Ladin POIs");

    let pois = of("HubActivityPoi");
    let without = pois
        .iter()
        .filter(|d| {
            d.get("GpsInfo")
                .is_none_or(|g| g.as_array().unwrap().is_empty())
        })
        .count();
    let share = without as f64 / pois.len() as f64;
    assert!(
        (0.02..0.09).contains(&share),
        "{share} of POIs without coordinates"
    );

    let inactive = docs().iter().filter(|(_, d)| d["Active"] == false).count();
    let share = inactive as f64 / docs().len() as f64;
    assert!((0.02..0.09).contains(&share), "{share} inactive");
}

#[test]
fn coordinates_are_inside_south_tyrol() {
    let inside = |lat: f64, lon: f64| (46.2..=47.1).contains(&lat) && (10.4..=12.5).contains(&lon);
    let mut checked = 0;
    for (entity, d) in docs() {
        if let Some(gps) = d.get("GpsInfo").and_then(Value::as_array) {
            for g in gps {
                let (lat, lon) = (
                    g["Latitude"].as_f64().unwrap(),
                    g["Longitude"].as_f64().unwrap(),
                );
                assert!(inside(lat, lon), "{entity} {}: {lat},{lon}", d["Id"]);
                assert_eq!(g["Gpstype"], "position");
                checked += 1;
            }
        }
        if let Some(p) = d.get("Geo") {
            let p = &p["position"];
            assert!(
                inside(
                    p["Latitude"].as_f64().unwrap(),
                    p["Longitude"].as_f64().unwrap()
                ),
                "{}",
                d["Id"]
            );
        }
    }
    assert!(checked > 14_000, "{checked}");
}

#[test]
fn titles_are_diverse_and_share_common_words() {
    let pois = of("HubActivityPoi");
    let title = |d: &Value, lang: &str| {
        d["Detail"]
            .get(lang)
            .map(|t| str_of(t, "Title").to_lowercase())
    };
    let de: Vec<String> = pois.iter().filter_map(|d| title(d, "de")).collect();
    let en: Vec<String> = pois.iter().filter_map(|d| title(d, "en")).collect();
    assert!(
        de.iter().filter(|t| t.contains("hütte")).count() * 10 > de.len(),
        "few Hütte titles"
    );
    assert!(
        en.iter().filter(|t| t.contains("hut")).count() * 10 > en.len(),
        "few hut titles"
    );
    let distinct: HashSet<&String> = de.iter().collect();
    assert!(
        distinct.len() * 2 > de.len(),
        "only {} distinct German titles of {}",
        distinct.len(),
        de.len()
    );
    let text: String = docs()
        .iter()
        .filter_map(|(_, d)| d.get("Detail"))
        .map(|d| d.to_string())
        .collect();
    for needle in [
        "ü",
        "ä",
        "ß",
        "Città",
        "Bozen",
        "Bolzano",
        "Meran",
        "Brixen",
        "Bruneck",
        "Sterzing",
        "Kastelruth",
        "Würstel",
    ] {
        assert!(text.contains(needle), "no {needle:?} in any Detail");
    }
}

/// Whether a text still contains a `{name}` template placeholder.
fn has_placeholder(s: &str) -> bool {
    s.split('{').skip(1).any(|rest| {
        rest.find('}')
            .is_some_and(|end| end > 0 && rest[..end].chars().all(|c| c.is_ascii_lowercase()))
    })
}

fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[test]
fn no_text_keeps_a_template_placeholder() {
    assert!(has_placeholder("Wanderung zur {h}") && !has_placeholder("Lago {} di {X}"));
    for (entity, d) in docs() {
        let mut all = Vec::new();
        strings(d, &mut all);
        for s in all {
            assert!(!has_placeholder(s), "{entity} {}: {s:?}", d["Id"]);
        }
    }
}
