use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::*;

#[test]
fn tag_ids_used_by_documents_are_tag_documents() {
    let tags: HashSet<&str> = of("Tag").iter().map(|t| str_of(t, "Id")).collect();
    for (entity, d) in docs().iter().filter(|(e, _)| *e != "Announcement") {
        let Some(ids) = d.get("TagIds").and_then(Value::as_array) else {
            continue;
        };
        for id in ids {
            assert!(
                tags.contains(id.as_str().unwrap()),
                "{entity} {} uses unknown tag {id}",
                d["Id"]
            );
        }
        let tag_objects: Vec<&Value> = d["Tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["Id"])
            .collect();
        assert_eq!(
            tag_objects,
            ids.iter().collect::<Vec<_>>(),
            "Tags and TagIds disagree"
        );
    }
    let pois = of("HubActivityPoi");
    let with = |tag: &str| {
        pois.iter()
            .filter(|d| d["TagIds"].as_array().unwrap().iter().any(|t| t == tag))
            .count()
    };
    assert!(
        with("hiking") > 500,
        "tagfilter=hiking finds {}",
        with("hiking")
    );
    assert!(
        with("mountain bike") > 200,
        "tagfilter=mountain bike finds {}",
        with("mountain bike")
    );
    for d in &pois {
        let infos = d["AdditionalPoiInfos"].as_object().unwrap();
        assert!(
            infos
                .values()
                .all(|i| !i["Categories"].as_array().unwrap().is_empty()),
            "{} has no categories",
            d["Id"]
        );
        assert_eq!(
            d["HubTags"].as_array().unwrap().len(),
            d["SrcTags"].as_array().unwrap().len()
        );
    }
    for t in of("Tag") {
        let valid = t["ValidForEntity"].as_array().unwrap();
        assert!(
            !valid.iter().any(|v| v == "odhactivitypoi"),
            "Hub spelling expected in {}",
            t["Id"]
        );
    }
}

#[test]
fn tag_ids_exist_in_the_reference_vocabulary() {
    let Some(path) = fixture("content/tags.json") else {
        eprintln!("skipped: ../shared/fixtures/content/tags.json is absent");
        return;
    };
    let reference: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let by_id: HashMap<&str, &Value> = reference
        .iter()
        .map(|t| (t["Id"].as_str().unwrap(), t))
        .collect();
    for t in of("Tag") {
        let id = str_of(t, "Id");
        let r = by_id
            .get(id)
            .unwrap_or_else(|| panic!("tag {id} is not in tags.json"));
        for lang in ["de", "it", "en"] {
            assert_eq!(
                t["TagName"][lang], r["TagName"][lang],
                "tag {id} name in {lang}"
            );
        }
        assert_eq!(t["Source"], r["Source"], "tag {id} source");
    }
    for entity in ["Accommodation", "AccommodationRoom"] {
        for d in of(entity) {
            for f in d["Features"].as_array().unwrap() {
                assert!(
                    by_id.contains_key(str_of(f, "Id")),
                    "feature {} is not in tags.json",
                    f["Id"]
                );
            }
        }
    }
}
