use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Duration, FixedOffset};
use serde::Deserialize;
use serde_json::Value;

use crate::*;

#[allow(non_snake_case, dead_code)]
#[derive(Deserialize)]
struct FeedItem {
    Id: String,
    TagIds: Vec<String>,
    StartTime: DateTime<FixedOffset>,
    EndTime: Option<DateTime<FixedOffset>>,
    FirstImport: DateTime<FixedOffset>,
    LastChange: DateTime<FixedOffset>,
    CreationTime: DateTime<FixedOffset>,
    VersionTime: DateTime<FixedOffset>,
    _Meta: FeedMeta,
    Geo: Option<FeedGeo>,
    Mapping: BTreeMap<String, BTreeMap<String, Value>>,
    Detail: BTreeMap<String, FeedDetail>,
}

#[allow(non_snake_case, dead_code)]
#[derive(Deserialize)]
struct FeedMeta {
    Source: String,
    UpdateInfo: Option<FeedUpdateInfo>,
}

#[allow(non_snake_case)]
#[derive(Deserialize)]
struct FeedUpdateInfo {
    UpdateHistory: Vec<Value>,
}

#[allow(non_snake_case, dead_code)]
#[derive(Deserialize)]
struct FeedGeo {
    position: FeedPosition,
}

#[allow(non_snake_case, dead_code)]
#[derive(Deserialize)]
struct FeedPosition {
    Latitude: f64,
    Longitude: f64,
}

#[allow(non_snake_case)]
#[derive(Deserialize)]
struct FeedDetail {
    Title: String,
    /// Optional in the reference input; always present in the demo data.
    BaseText: Option<String>,
}

const CATEGORIES: [&str; 12] = [
    "accident",
    "animal-on-road",
    "caution",
    "closure",
    "congestion",
    "event",
    "hindrance",
    "prohibition",
    "road-condition",
    "road-work",
    "speed-camera",
    "weather-related",
];

#[test]
fn announcements_parse_into_the_feed_input_shape() {
    let Some(path) = fixture("datex/announcements-input.json") else {
        eprintln!("skipped: ../shared/fixtures/datex/announcements-input.json is absent");
        return;
    };
    let input: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let items = input["Items"].as_array().unwrap();
    // The reader struct fits the reference input ...
    for item in items {
        serde_json::from_value::<FeedItem>(item.clone())
            .unwrap_or_else(|e| panic!("fixture item {}: {e}", item["Id"]));
    }
    // Geo is optional by design (the feed renders a missing one as 0,0), EndTime too.
    let always: HashSet<&str> = items[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|k| items.iter().all(|i| i.get(*k).is_some()) && !["Geo", "EndTime"].contains(k))
        .collect();
    assert!(always.contains("Mapping") && always.contains("_Meta") && always.contains("Detail"));
    // ... and every generated announcement too, with the same JSON types per field.
    for d in of("Announcement") {
        serde_json::from_value::<FeedItem>(d.clone())
            .unwrap_or_else(|e| panic!("{}: {e}", d["Id"]));
        for key in &always {
            assert!(d.get(*key).is_some(), "{} lacks {key}", d["Id"]);
        }
        for (key, value) in d.as_object().unwrap() {
            if let Some(reference) = items.iter().find_map(|i| i.get(key)) {
                assert_eq!(
                    std::mem::discriminant(value),
                    std::mem::discriminant(reference),
                    "{} {key}",
                    d["Id"]
                );
            }
        }
    }
}

#[test]
fn announcements_mix_current_planned_and_expired_situations() {
    let all = of("Announcement");
    let n = all.len() as f64;
    let (
        mut current,
        mut future,
        mut expired,
        mut open_ended,
        mut no_geo,
        mut long,
        mut xml,
        mut a22,
    ) = (0, 0, 0, 0, 0, 0, 0, 0);
    for d in &all {
        let item: FeedItem = serde_json::from_value((*d).clone()).unwrap();
        let provider = if item._Meta.Source == "A22" {
            a22 += 1;
            "a22"
        } else {
            assert_eq!(item._Meta.Source, "PROVINCE_BZ");
            "provincebz"
        };
        assert!(
            item.Id
                .starts_with(&format!("urn:announcements:{provider}:")),
            "{}",
            item.Id
        );
        assert_eq!(d["Source"], d["_Meta"]["Source"]);
        let cats: Vec<&str> = item
            .TagIds
            .iter()
            .filter_map(|t| t.strip_prefix("traffic-event:"))
            .filter(|c| CATEGORIES.contains(c))
            .collect();
        assert_eq!(cats.len(), 1, "{}: {:?}", item.Id, item.TagIds);
        for t in [
            Some(item.StartTime),
            item.EndTime,
            Some(item.FirstImport),
            Some(item.LastChange),
        ]
        .into_iter()
        .flatten()
        {
            assert!(
                [3600, 7200].contains(&t.offset().local_minus_utc()),
                "{}: offset {}",
                item.Id,
                t.offset()
            );
        }
        assert_eq!(item.CreationTime, item.FirstImport);
        assert_eq!(item.VersionTime, item.LastChange);
        assert!(
            item.FirstImport <= item.LastChange && item.LastChange.naive_utc() <= now(),
            "{}",
            item.Id
        );
        if let Some(info) = &item._Meta.UpdateInfo {
            assert!((1..=3).contains(&info.UpdateHistory.len()));
        }
        let start = item.StartTime.naive_utc();
        match item.EndTime.map(|e| e.naive_utc()) {
            Some(end) if end < now() => {
                expired += 1;
                assert!(
                    end >= now() - Duration::days(30),
                    "{} ended too long ago",
                    item.Id
                );
            }
            _ if start > now() => future += 1,
            end => {
                current += 1;
                if end.is_none() {
                    open_ended += 1;
                }
            }
        }
        if item.Geo.is_none() {
            no_geo += 1;
        }
        let texts: Vec<&FeedDetail> = item.Detail.values().collect();
        assert!(
            item.Detail.contains_key("it") && texts.iter().all(|t| !t.Title.is_empty()),
            "{}",
            item.Id
        );
        let bodies: Vec<&str> = texts
            .iter()
            .map(|t| {
                t.BaseText
                    .as_deref()
                    .expect("demo announcements always have BaseText")
            })
            .collect();
        if bodies.iter().any(|b| b.chars().count() > 1000) {
            long += 1;
        }
        if bodies
            .iter()
            .any(|b| b.contains('<') && b.contains('&') && b.contains('"'))
        {
            xml += 1;
        }
    }
    assert!(
        (0.35..0.65).contains(&(current as f64 / n)),
        "current {current}"
    );
    assert!(
        (0.10..0.30).contains(&(future as f64 / n)),
        "future {future}"
    );
    assert!(
        (0.20..0.40).contains(&(expired as f64 / n)),
        "expired {expired}"
    );
    assert!((0.15..0.45).contains(&(a22 as f64 / n)), "A22 {a22}");
    assert!(
        open_ended > 0 && long > 0 && xml > 0,
        "open-ended {open_ended}, long {long}, xml {xml}"
    );
    assert!(
        (0.03..0.20).contains(&(no_geo as f64 / n)),
        "without Geo {no_geo}"
    );
}
