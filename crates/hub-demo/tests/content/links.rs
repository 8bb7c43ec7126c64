use std::collections::{HashMap, HashSet};

use chrono::{Duration, NaiveDate};
use serde_json::Value;

use crate::*;

#[test]
fn accommodations_link_rooms_places_and_availability() {
    let rooms: HashMap<&str, &Value> = of("AccommodationRoom")
        .iter()
        .map(|r| (str_of(r, "Id"), *r))
        .collect();
    let ids = |entity: &str| {
        of(entity)
            .iter()
            .map(|d| str_of(d, "Id"))
            .collect::<HashSet<_>>()
    };
    let (regions, tvs, munis, districts) = (
        ids("Region"),
        ids("TourismAssociation"),
        ids("Municipality"),
        ids("District"),
    );
    let categories = [
        "1stars",
        "2stars",
        "3stars",
        "3sstars",
        "4stars",
        "4sstars",
        "5stars",
        "2flowers",
        "3flowers",
        "4flowers",
        "2suns",
        "3suns",
        "4suns",
        "Not categorized",
    ];
    let today = now().date();
    let mut linked = 0;
    let mut bookable = 0;
    for a in of("Accommodation") {
        let id = str_of(a, "Id");
        assert!(
            id.len() == 32
                && id
                    .chars()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()),
            "{id}"
        );
        assert!(
            categories.contains(&str_of(a, "AccoCategoryId")),
            "{}",
            a["AccoCategoryId"]
        );
        let infos = a["AccoRoomInfo"].as_array().unwrap();
        for info in infos {
            let room = rooms
                .get(str_of(info, "Id"))
                .unwrap_or_else(|| panic!("{id}: room {} missing", info["Id"]));
            assert_eq!(room["A0RID"], a["Id"]);
            linked += 1;
        }
        let has_units = a["HasRoom"] == true || a["HasApartment"] == true;
        assert_eq!(
            has_units,
            !infos.is_empty(),
            "{id}: HasRoom/HasApartment vs AccoRoomInfo"
        );
        let availability = a["Availability"].as_array().unwrap();
        assert_eq!(a["IsBookable"] == true, !availability.is_empty(), "{id}");
        if !availability.is_empty() {
            bookable += 1;
            assert_eq!(availability.len(), 60);
            for (k, day) in availability.iter().enumerate() {
                let date = NaiveDate::parse_from_str(str_of(day, "Date"), "%Y-%m-%d").unwrap();
                assert_eq!(date, today + Duration::days(k as i64));
                assert!(day["Available"].as_i64().unwrap() >= 0);
                assert!(day["PriceFrom"].as_f64().unwrap() > 0.0);
            }
        }
        let loc = &a["LocationInfo"];
        assert!(regions.contains(str_of(&loc["RegionInfo"], "Id")));
        assert!(tvs.contains(str_of(&loc["TvInfo"], "Id")));
        assert!(munis.contains(str_of(&loc["MunicipalityInfo"], "Id")));
        assert!(districts.contains(str_of(&loc["DistrictInfo"], "Id")));
        assert_eq!(a["DistrictId"], loc["DistrictInfo"]["Id"]);
    }
    assert_eq!(
        linked,
        rooms.len(),
        "every room belongs to exactly one accommodation"
    );
    assert!(bookable > 1500, "{bookable} bookable");
}

#[test]
fn events_are_spread_around_the_anchor() {
    let today = now().date();
    let (mut ongoing, mut upcoming, mut past, mut long, mut single) = (0, 0, 0, 0, 0);
    for e in of("Event") {
        let begin = parse_time(str_of(e, "DateBegin")).date();
        let end = parse_time(str_of(e, "DateEnd")).date();
        assert!(begin <= end);
        assert!(
            begin >= today - Duration::days(60) && end <= today + Duration::days(260),
            "{begin}..{end}"
        );
        let dates = e["EventDate"].as_array().unwrap();
        assert!((1..=3).contains(&dates.len()));
        assert_eq!(parse_time(str_of(&dates[0], "From")).date(), begin);
        match (begin <= today, end >= today) {
            (true, true) => ongoing += 1,
            (false, _) => upcoming += 1,
            (true, false) => past += 1,
        }
        if (end - begin).num_days() >= 14 {
            long += 1;
        }
        if begin == end {
            single += 1;
        }
    }
    assert!(
        ongoing > 50 && upcoming > 1000 && past > 100,
        "ongoing {ongoing}, upcoming {upcoming}, past {past}"
    );
    assert!(long > 100 && single > 500, "long {long}, single {single}");
}

#[test]
fn geography_and_weather_refer_to_each_other() {
    let ids = |entity: &str| {
        of(entity)
            .iter()
            .map(|d| str_of(d, "Id"))
            .collect::<HashSet<_>>()
    };
    let (regions, tvs, munis) = (
        ids("Region"),
        ids("TourismAssociation"),
        ids("Municipality"),
    );
    let mut istat = HashSet::new();
    for m in of("Municipality") {
        assert!(
            regions.contains(str_of(m, "RegionId")) && tvs.contains(str_of(m, "TourismvereinId"))
        );
        assert!(
            istat.insert(str_of(m, "IstatNumber")),
            "duplicate ISTAT number"
        );
    }
    for d in of("District") {
        assert!(munis.contains(str_of(d, "MunicipalityId")));
    }
    let ski_regions = ids("SkiRegion");
    for s in of("SkiArea") {
        assert!(ski_regions.contains(str_of(s, "SkiRegionId")));
    }
    let districts: Vec<&str> = of("WeatherDistrict")
        .iter()
        .map(|d| str_of(d, "Id"))
        .collect();
    assert_eq!(districts, ["1", "2", "3", "4", "5", "6", "7"]);
    for d in of("WeatherDistrict") {
        let days = d["BezirksForecast"].as_array().unwrap();
        assert_eq!(days.len(), 4);
        assert_eq!(parse_time(str_of(&days[0], "Date")).date(), now().date());
    }
    for f in of("WeatherForecast") {
        assert!(istat.contains(str_of(f, "MunicipalityIstatCode")));
    }
    for r in of("WeatherRealtime") {
        assert_eq!(r["id"], r["Id"]);
        for key in [
            "name",
            "t",
            "rh",
            "altitude",
            "latitude",
            "longitude",
            "lastUpdated",
        ] {
            assert!(r.get(key).is_some(), "{} lacks {key}", r["Id"]);
        }
        let measured = parse_time(str_of(r, "lastUpdated"));
        assert!(measured <= now() && measured > now() - Duration::hours(1));
    }
}
