//! HubActivityPoi documents: activities, points of interest and gastronomy, plus the
//! shared "where and what name" helpers other generators use.

use chrono::{Duration, NaiveDateTime};
use rand::Rng;
use serde_json::{json, Map, Value};

use crate::geo::{contact, Geo};
use crate::places::{
    CASTLES, FAMILIES, HOUSE_NAMES, HUTS, LAKES, PASSES, PEAKS, REGIONS, SAINTS, STREETS,
};
use crate::poi_kinds::{KINDS, TEXTS};
use crate::tags::TagSet;
use crate::util::{
    self, fill, head, midnight, percent, pick, put, round_to, slug, tri, Gps, Head, Tail, Tri,
};

/// Which municipalities a kind of place is found in.
#[derive(Clone, Copy)]
pub(crate) enum Pool {
    Any,
    High,
    Wine,
}

pub(crate) struct Pools {
    any: Vec<usize>,
    high: Vec<usize>,
    wine: Vec<usize>,
}

impl Pools {
    pub(crate) fn new(geo: &Geo) -> Pools {
        let any = (0..geo.munis.len()).collect();
        let high = (0..geo.munis.len())
            .filter(|i| geo.munis[*i].alt >= 900)
            .collect();
        let wine = (0..geo.munis.len())
            .filter(|i| [1, 2, 3, 8].contains(&geo.munis[*i].region) && geo.munis[*i].alt < 900)
            .collect();
        Pools { any, high, wine }
    }

    /// A municipality and one of its districts.
    pub(crate) fn place(&self, rng: &mut impl Rng, geo: &Geo, pool: Pool) -> (usize, usize) {
        let list = match pool {
            Pool::Any => &self.any,
            Pool::High => &self.high,
            Pool::Wine => &self.wine,
        };
        let muni = *pick(rng, list);
        let district = *pick(rng, &geo.munis[muni].districts);
        (muni, district)
    }
}

/// Random name parts for one document; resolved per language with [`Picks::vars`].
pub(crate) struct Picks {
    pub h: Tri,
    pub k: Tri,
    pub l: Tri,
    pub s: Tri,
    pub c: Tri,
    pub x: Tri,
    pub f: &'static str,
    pub n: &'static str,
    pub num: String,
}

impl Picks {
    pub(crate) fn new(rng: &mut impl Rng) -> Picks {
        Picks {
            h: *pick(rng, &HUTS),
            k: *pick(rng, &PEAKS),
            l: *pick(rng, &LAKES),
            s: *pick(rng, &SAINTS),
            c: *pick(rng, &CASTLES),
            x: *pick(rng, &PASSES),
            f: FAMILIES[rng.gen_range(0..FAMILIES.len())],
            n: HOUSE_NAMES[rng.gen_range(0..HOUSE_NAMES.len())],
            num: rng.gen_range(1..40).to_string(),
        }
    }

    pub(crate) fn vars<'a>(&'a self, place: &'a str, lang: &str) -> [(&'static str, &'a str); 10] {
        [
            ("p", place),
            ("h", tri(self.h, lang)),
            ("k", tri(self.k, lang)),
            ("l", tri(self.l, lang)),
            ("s", tri(self.s, lang)),
            ("c", tri(self.c, lang)),
            ("x", tri(self.x, lang)),
            ("f", self.f),
            ("n", self.n),
            ("num", &self.num),
        ]
    }
}

/// Tag sets per kind, title and optional extra tag (index 0 = no extra).
fn tag_sets() -> Vec<Vec<Vec<TagSet>>> {
    KINDS
        .iter()
        .map(|k| {
            k.titles
                .iter()
                .map(|(_, title_tags)| {
                    let base: Vec<&str> = k.tags.iter().chain(title_tags.iter()).copied().collect();
                    let mut sets = vec![TagSet::new(&base)];
                    for e in k.extra {
                        let mut with = base.clone();
                        if !with.contains(e) {
                            with.push(e);
                        }
                        sets.push(TagSet::new(&with));
                    }
                    sets
                })
                .collect()
        })
        .collect()
}

fn rating(rng: &mut impl Rng) -> String {
    rng.gen_range(1..=6).to_string()
}

pub(crate) fn schedule(rng: &mut impl Rng, now: NaiveDateTime) -> Value {
    let start = now.date() - Duration::days(rng.gen_range(0..120));
    let stop = start + Duration::days(rng.gen_range(150..240));
    let (open, close) = *pick(
        rng,
        &[
            ("08:30:00", "16:30:00"),
            ("09:00:00", "18:00:00"),
            ("11:00:00", "23:00:00"),
            ("10:00:00", "17:00:00"),
        ],
    );
    let closed_day = rng.gen_range(0..8);
    let mut days = Map::new();
    for (d, name) in [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ]
    .iter()
    .enumerate()
    {
        days.insert((*name).to_owned(), json!(d != closed_day));
    }
    let mut time = Map::new();
    time.insert("Start".into(), json!(open));
    time.insert("End".into(), json!(close));
    time.extend(days);
    time.insert("State".into(), json!(2));
    time.insert("Timecode".into(), json!(1));
    json!([{
        "OperationscheduleName": {"de": "Saison", "it": "Stagione", "en": "Season"},
        "Start": midnight(start),
        "Stop": midnight(stop),
        "Type": "1",
        "OperationScheduleTime": [Value::Object(time)],
    }])
}

pub(crate) fn documents(
    geo: &Geo,
    rng: &mut impl Rng,
    now: NaiveDateTime,
    count: u64,
    emit: &mut dyn FnMut(&'static str, Value),
) {
    let pools = Pools::new(geo);
    let sets = tag_sets();
    let weights: Vec<u32> = KINDS.iter().map(|k| k.weight).collect();
    for i in 0..count {
        let ki = util::weighted(rng, &weights);
        let kind = &KINDS[ki];
        let ti = rng.gen_range(0..kind.titles.len());
        let extra = if !kind.extra.is_empty() && percent(rng, 35) {
            rng.gen_range(1..=kind.extra.len())
        } else {
            0
        };
        let tags = &sets[ki][ti][extra];
        let source = *pick(rng, kind.sources);
        let (muni, district) = pools.place(rng, geo, kind.pool);
        let mu = &geo.munis[muni];
        let langs = util::pick_langs(rng, geo.ladin(muni));
        let picks = Picks::new(rng);
        let alt = (mu.alt + rng.gen_range(kind.alt.0..=kind.alt.1)).min(3300);
        let d = &geo.districts[district];
        let (lat, lon) = util::near(rng, d.lat, d.lon, 0.03);

        let title = |lang: &str| -> String {
            if lang == "ld" {
                return format!("{} {}", kind.ld, mu.name("ld"));
            }
            fill(
                tri(kind.titles[ti].0, lang),
                &picks.vars(mu.name(lang), lang),
            )
        };
        let (len_km, dur_h, diff) = if kind.activity {
            let len: f64 = round_to(rng.gen_range(1.5..24.0), 1);
            (
                len,
                round_to(len / rng.gen_range(2.5..4.5) + 0.25, 2),
                rng.gen_range(1..=6),
            )
        } else {
            (0.0, 0.0, 0)
        };
        let region = REGIONS[mu.region];
        let mut detail = Map::new();
        let mut titles = Map::new();
        for l in langs {
            let t = title(l);
            let mut dm = Map::new();
            if *l == "ld" {
                dm.insert("Title".into(), json!(t));
                dm.insert(
                    "BaseText".into(),
                    json!(format!("{t} – {}, Dolomites UNESCO.", mu.name("ld"))),
                );
            } else {
                let alt_s = alt.to_string();
                let len_s = if *l == "en" {
                    len_km.to_string()
                } else {
                    len_km.to_string().replace('.', ",")
                };
                let minutes = (dur_h * 60.0).round() as i64;
                let dur_s = format!("{}:{:02}", minutes / 60, minutes % 60);
                let body = fill(
                    tri(TEXTS[kind.text], l),
                    &[
                        ("t", &t),
                        ("p", mu.name(l)),
                        ("alt", &alt_s),
                        ("len", &len_s),
                        ("dur", &dur_s),
                        ("reg", tri((region.0, region.1, region.2), l)),
                        ("h", tri(picks.h, l)),
                    ],
                );
                dm.insert("Title".into(), json!(t));
                dm.insert("BaseText".into(), json!(body));
                if percent(rng, 40) {
                    let intro = match *l {
                        "it" => format!("Il consiglio della redazione: {t}."),
                        "en" => format!("Editor's tip: {t}."),
                        _ => format!("Tipp der Redaktion: {t}."),
                    };
                    dm.insert("IntroText".into(), json!(intro));
                }
            }
            titles.insert((*l).to_owned(), json!(t));
            detail.insert((*l).to_owned(), Value::Object(dm));
        }
        let shortname = title(langs[0]);
        let id = match source {
            "idm" => format!("smgpoi{}", 10_000 + i),
            "lts" => util::hex32(rng).to_lowercase(),
            _ => util::guid(rng, false),
        };
        let stamps = util::stamps(rng, now);
        let mut m = head(Head {
            id: id.clone(),
            typ: "hubactivitypoi",
            source,
            shortname: shortname.clone(),
            active: util::active(rng),
            stamps,
            langs,
        });
        put(&mut m, "Detail", Value::Object(detail));

        let mut infos = Map::new();
        for l in langs.iter().filter(|l| **l != "ld") {
            infos.insert(
                (*l).to_owned(),
                json!({"MainType": tri(kind.main, l), "SubType": tri(kind.sub, l), "Categories": tags.categories(l)}),
            );
        }
        let mapping = match source {
            "lts" => json!({"lts": {"rid": id.to_uppercase()}}),
            "idm" => json!({"idm": {"id": id}}),
            "siag" => json!({"siag": {"museId": format!("{}", 1000 + i % 9000)}}),
            "suedtirolwein" => {
                json!({"suedtirolwein": {"companyId": format!("SW{:05}", i % 100_000)}})
            }
            other => {
                let mut mm = Map::new();
                mm.insert(other.to_owned(), json!({"id": id}));
                Value::Object(mm)
            }
        };
        // Routes are run by the tourism association; places by their own business.
        let tv = &geo.tvs[mu.tv];
        let company = |l: &str| -> String {
            if !kind.activity {
                return title(l);
            }
            match l {
                "it" => tv.it.clone(),
                "en" => tv.en.clone(),
                _ => tv.de.clone(),
            }
        };
        let site = slug(&company("de"));
        let email = format!("info@{site}.example.com");
        let url = format!("https://www.{site}.example.com");
        let tel = util::phone(rng, geo.phone_area(muni));
        let street = *pick(rng, &STREETS);
        let number = rng.gen_range(1..80);
        let contact = contact(
            geo, langs, muni, &company, street, number, &email, &url, &tel,
        );
        let images = util::images(rng, "poi", &id, source, &Value::Object(titles), 3);
        util::tail(
            &mut m,
            rng,
            Tail {
                tags,
                poi_infos: Some(Value::Object(infos)),
                gps: Gps::Usually((lat, lon, f64::from(alt))),
                mapping,
                area_ids: geo.area_ids(muni),
                source,
                contact: Some(contact),
                images,
            },
        );
        put(&mut m, "Type", json!(kind.typ));
        put(&mut m, "SubType", json!(kind.sub.0));
        if kind.activity {
            let up = (len_km * rng.gen_range(20.0..90.0)).round();
            put(&mut m, "AltitudeDifference", json!(up));
            put(&mut m, "AltitudeHighestPoint", json!(f64::from(alt) + up));
            put(&mut m, "AltitudeLowestPoint", json!(f64::from(alt)));
            put(&mut m, "AltitudeSumUp", json!(up));
            put(&mut m, "AltitudeSumDown", json!(up));
            put(&mut m, "DistanceLength", json!((len_km * 1000.0).round()));
            put(&mut m, "DistanceDuration", json!(dur_h));
            put(&mut m, "Difficulty", json!(diff.to_string()));
            let (st, ex, la, te) = (rating(rng), rating(rng), rating(rng), rating(rng));
            put(
                &mut m,
                "Ratings",
                json!({"Difficulty": diff.to_string(), "Stamina": st, "Experience": ex, "Landscape": la, "Technique": te}),
            );
            put(&mut m, "IsPrepared", json!(kind.main.0 == "Winter"));
        }
        put(&mut m, "Highlight", json!(percent(rng, 8)));
        put(
            &mut m,
            "HasFreeEntrance",
            json!(kind.typ != "Essen Trinken" && percent(rng, 40)),
        );
        put(&mut m, "IsOpen", json!(percent(rng, 85)));
        if !kind.activity && percent(rng, 50) {
            put(&mut m, "OperationSchedule", schedule(rng, now));
        }
        put(&mut m, "LocationInfo", d.loc.clone());
        put(&mut m, "DistrictId", json!(d.id));
        put(&mut m, "AreaId", geo.area_ids(muni));
        put(&mut m, "TourismorganizationId", json!(geo.tvs[mu.tv].id));
        put(
            &mut m,
            "PublishedOn",
            json!(["idm-marketplace", "suedtirol.info"]),
        );
        emit("HubActivityPoi", Value::Object(m));
    }
}
