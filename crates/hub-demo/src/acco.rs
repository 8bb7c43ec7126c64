//! Accommodation documents with their rooms (AccommodationRoom) and the closed
//! availability calendar for the 60 days after the anchor.

use chrono::{Datelike, Duration, NaiveDateTime, Weekday};
use rand::seq::SliceRandom;
use rand::Rng;
use serde_json::{json, Map, Value};

use crate::geo::{contact, Geo};
use crate::places::{REGIONS, STREETS};
use crate::poi::{Picks, Pool, Pools};
use crate::tags::TagSet;
use crate::util::{
    self, day, fill, head, percent, pick, put, round_to, slug, splitmix, tri, Gps, Head, Tail, Tri,
};

/// Accommodations at scale 1.
pub(crate) const BASE: u64 = 4000;
pub(crate) const AVAILABILITY_DAYS: i64 = 60;

/// Room documents of the accommodation with global index `i` (0–3; a pure function of
/// the index so the total can be computed without generating).
pub(crate) fn rooms_for(i: u64) -> u64 {
    match splitmix(i ^ 0xACC0_0000) % 100 {
        0..=29 => 0,
        30..=44 => 1,
        45..=69 => 2,
        _ => 3,
    }
}

pub(crate) fn room_total(accommodations: u64) -> u64 {
    (0..accommodations).map(rooms_for).sum()
}

struct AccoType {
    id: &'static str,
    weight: u32,
    /// Name templates with their accommodation-type tag.
    names: &'static [(Tri, &'static str)],
    what: Tri,
    categories: &'static [(&'static str, u32, &'static str, f64)],
    boards: &'static [&'static str],
}

const STARS: &[(&str, u32, &str, f64)] = &[
    ("1stars", 5, "52281FA851CA11D18F1400A02427D15E", 45.0),
    ("2stars", 14, "52281FA751CA11D18F1400A02427D15E", 55.0),
    ("3stars", 33, "52281FA651CA11D18F1400A02427D15E", 75.0),
    ("3sstars", 16, "522AA59151CA11D18F1400A02427D15E", 90.0),
    ("4stars", 21, "52281FA551CA11D18F1400A02427D15E", 120.0),
    ("4sstars", 7, "52281FA451CA11D18F1400A02427D15E", 150.0),
    ("5stars", 4, "52281FA351CA11D18F1400A02427D15E", 220.0),
];
const STARS_LOW: &[(&str, u32, &str, f64)] = &[
    ("1stars", 20, "52281FA851CA11D18F1400A02427D15E", 45.0),
    ("2stars", 45, "52281FA751CA11D18F1400A02427D15E", 55.0),
    ("3stars", 35, "52281FA651CA11D18F1400A02427D15E", 70.0),
];
const STARS_CAMPING: &[(&str, u32, &str, f64)] = &[
    ("1stars", 10, "52281FA851CA11D18F1400A02427D15E", 30.0),
    ("2stars", 30, "52281FA751CA11D18F1400A02427D15E", 35.0),
    ("3stars", 45, "52281FA651CA11D18F1400A02427D15E", 40.0),
    ("3sstars", 15, "522AA59151CA11D18F1400A02427D15E", 45.0),
];
const FLOWERS: &[(&str, u32, &str, f64)] = &[
    ("2flowers", 35, "86179E1BDAA811D28E25006097B896BA", 55.0),
    ("3flowers", 45, "86179E1CDAA811D28E25006097B896BA", 70.0),
    ("4flowers", 20, "522AD59151CA11D18F1400A02427D15E", 90.0),
];
const SUNS: &[(&str, u32, &str, f64)] = &[
    ("2suns", 30, "52281FAA51CA11D18F1400A02427D15E", 60.0),
    ("3suns", 50, "52281FA951CA11D18F1400A02427D15E", 80.0),
    ("4suns", 20, "522AC59151CA11D18F1400A02427D15E", 110.0),
];
const UNCATEGORIZED: &[(&str, u32, &str, f64)] = &[(
    "Not categorized",
    1,
    "5BTTTTTT52F144A4BAF718259634F9AD",
    40.0,
)];

#[rustfmt::skip]
const TYPES: [AccoType; 7] = [
    AccoType { id: "HotelPension", weight: 45,
        names: &[(("Hotel {n}", "Hotel {n}", "Hotel {n}"), "52281FAE51CA11D18F1400A02427D15E"),
                 (("Pension {n}", "Pensione {n}", "Pension {n}"), "52281FBA51CA11D18F1400A02427D15E"),
                 (("Gasthof {n}", "Albergo {n}", "Gasthof {n}"), "52281FB951CA11D18F1400A02427D15E"),
                 (("Garni {n}", "Garni {n}", "Garni {n}"), "52281FBB51CA11D18F1400A02427D15E")],
        what: ("Familiengeführtes Hotel", "Albergo a conduzione familiare", "Family-run hotel"),
        categories: STARS, boards: &["Breakfast", "Halfboard", "Fullboard", "Allinclusive"] },
    AccoType { id: "BedBreakfast", weight: 15,
        names: &[(("B&B {f}", "B&B {f}", "B&B {f}"), "5228203A51CA11D18F1400A02427D15E"),
                 (("Haus {n}", "Casa {n}", "Haus {n}"), "5228203A51CA11D18F1400A02427D15E")],
        what: ("Gemütliche Frühstückspension", "Accogliente bed & breakfast", "Cosy bed & breakfast"),
        categories: STARS_LOW, boards: &["Breakfast"] },
    AccoType { id: "Farm", weight: 14,
        names: &[(("{f}hof", "Maso {f}", "{f}hof farm"), "5228203E51CA11D18F1400A02427D15E")],
        what: ("Urlaub auf dem Bauernhof", "Vacanza in agriturismo", "Farm holiday"),
        categories: FLOWERS, boards: &["Breakfast", "Withoutboard"] },
    AccoType { id: "Apartment", weight: 14,
        names: &[(("Apartments {n}", "Appartamenti {n}", "Apartments {n}"), "67979F0462FF11D18F2100A02427D15E"),
                 (("Residence {n}", "Residence {n}", "Residence {n}"), "67979F0462FF11D18F2100A02427D15E"),
                 (("Ferienwohnungen {f}", "Appartamenti {f}", "{f} holiday apartments"), "67979F0462FF11D18F2100A02427D15E")],
        what: ("Ferienwohnungen für Familien", "Appartamenti per famiglie", "Holiday apartments for families"),
        categories: SUNS, boards: &["Withoutboard", "Breakfast"] },
    AccoType { id: "Camping", weight: 4,
        names: &[(("Camping {p}", "Campeggio {p}", "{p} campsite"), "5228204051CA11D18F1400A02427D15E")],
        what: ("Campingplatz", "Campeggio", "Campsite"),
        categories: STARS_CAMPING, boards: &["Withoutboard"] },
    AccoType { id: "Youth", weight: 2,
        names: &[(("Jugendherberge {p}", "Ostello della gioventù {p}", "{p} youth hostel"), "5228203F51CA11D18F1400A02427D15E")],
        what: ("Jugendherberge", "Ostello della gioventù", "Youth hostel"),
        categories: UNCATEGORIZED, boards: &["Breakfast", "Halfboard"] },
    AccoType { id: "Mountain", weight: 6,
        names: &[(("{h}", "{h}", "{h}"), "67979F0362FF11D18F2100A02427D15E")],
        what: ("Schutzhütte mit Übernachtung", "Rifugio con pernottamento", "Mountain hut with overnight stay"),
        categories: UNCATEGORIZED, boards: &["Halfboard", "Breakfast"] },
];

fn board_tag(board: &str) -> &'static str {
    match board {
        "Withoutboard" => "5228204D51CA11D18F1400A02427D15E",
        "Breakfast" => "5228204E51CA11D18F1400A02427D15E",
        "Halfboard" => "5228204F51CA11D18F1400A02427D15E",
        _ => "5228205051CA11D18F1400A02427D15E",
    }
}

/// Feature ids (LTS accommodation options) with their German names.
const FEATURES: [(&str, &str); 14] = [
    ("BF36D006830847759A48A24A696E5C6D", "Whirlpool"),
    ("B6BD3F6011E5488DBF802B0C58F87AA1", "Ruhig gelegen"),
    ("E72CE3544DA2475E97B9C034DA6F1595", "Massagen"),
    ("FAF1212F6DAD4E5F8EA4E3E43096F5F4", "Hunde auf Anfrage"),
    ("BB0AF1448FF746269E4AB60BAC773FF0", "Keine Haustiere"),
    ("A59DB949777348988AC40463AE37D71F", "Skibus"),
    ("1DDF0EAC943543C6B89DDC189C4B6B72", "Direkt am See"),
    (
        "F4D3B02B107843C894ED517FC7DC8A39",
        "Südtirol Guest Pass Mobilcard",
    ),
    ("D1C1C206AA0B4025A98EE83C2DBC2DFA", "Workation"),
    (
        "B9F9CD9357F24E73AD64E12B376AD72F",
        "Direkt an der Rodelbahn",
    ),
    ("1B6A850DE0A04CF29A409D949629280E", "Diätküche/Schonkost"),
    (
        "0BE2EE4CC96148FE89C0A9788C20E843",
        "Bauernhof mit Viehhaltung",
    ),
    ("D02AE2F641A4496AB1D2C4871475293D", "Gästekarte"),
    (
        "B79228E62B5A4D14B2BF35E7B79B8580",
        "Nachhaltigkeitslabel Südtirol Level 1",
    ),
];

const ROOM_FEATURES: [(&str, &str); 8] = [
    ("AFDCC833CF4E4E31A00D4C06ACF00EA4", "Haarfön"),
    ("82474342C9E946F69A12281DD4DBD36E", "Bademantel"),
    ("0532F938096040EAB9C0D9D9E2B4C996", "Telefon"),
    ("E4745D769397464A854D61B49FBC459B", "Separates WC"),
    ("F2E06CE23EEE404F950ACF45CD6FF65F", "Zimmer mit Sauna"),
    ("FA764CACC4954538BA37A38EC58D145A", "Zimmer mit Whirlpool"),
    ("B5E9BF35EE84407AB8B4B97F7A96024F", "Wohnecke"),
    ("A943A1C791B14A3BB0E6024236228E08", "Einzelbett"),
];

const ROOMS: [(Tri, bool); 6] = [
    (
        ("Doppelzimmer {x}", "Camera doppia {x}", "Double room {x}"),
        false,
    ),
    (
        ("Einzelzimmer {x}", "Camera singola {x}", "Single room {x}"),
        false,
    ),
    (
        (
            "Familienzimmer {x}",
            "Camera familiare {x}",
            "Family room {x}",
        ),
        false,
    ),
    (
        ("Junior Suite {x}", "Junior suite {x}", "Junior suite {x}"),
        false,
    ),
    (
        ("Ferienwohnung {x}", "Appartamento {x}", "Apartment {x}"),
        true,
    ),
    (("Chalet {x}", "Chalet {x}", "Chalet {x}"), true),
];
const ROOM_STYLES: [&str; 10] = [
    "Classic",
    "Comfort",
    "Superior",
    "Deluxe",
    "Panorama",
    "Alpin",
    "Edelweiß",
    "Enzian",
    "Arnika",
    "Latemar",
];

const SHORT: Tri = (
    "{w} in {p} auf {alt} m, ruhige Lage mit Blick auf {k}.",
    "{w} a {p}, {alt} m, posizione tranquilla con vista su {k}.",
    "{w} in {p} at {alt} m, quiet location with a view of {k}.",
);
const LONG: Tri = (
    "Willkommen im {t}! Unser Haus liegt in {p} ({reg}) und ist idealer Ausgangspunkt für Wanderungen zur {h} und für Skitage im Gebiet {k}. Zum Frühstück gibt es Speck, Schüttelbrot, Bergkäse und Äpfel aus Südtirol.",
    "Benvenuti al {t}! La nostra casa si trova a {p} ({reg}) ed è il punto di partenza ideale per escursioni al {h} e giornate sugli sci nella zona {k}. A colazione speck, Schüttelbrot, formaggio di malga e mele dell'Alto Adige.",
    "Welcome to {t}! We are located in {p} ({reg}), the ideal base for hikes to the {h} and ski days in the {k} area. Breakfast with speck, Schüttelbrot, mountain cheese and South Tyrolean apples.",
);

pub(crate) fn documents(
    geo: &Geo,
    rng: &mut impl Rng,
    now: NaiveDateTime,
    count: u64,
    emit: &mut dyn FnMut(&'static str, Value),
) {
    let pools = Pools::new(geo);
    let weights: Vec<u32> = TYPES.iter().map(|t| t.weight).collect();
    let dates: Vec<(String, bool)> = (0..AVAILABILITY_DAYS)
        .map(|d| {
            let date = now.date() + Duration::days(d);
            (
                day(date),
                matches!(date.weekday(), Weekday::Fri | Weekday::Sat),
            )
        })
        .collect();
    let mut rooms_out: Vec<Value> = Vec::new();
    for i in 0..count {
        let ty = &TYPES[util::weighted(rng, &weights)];
        let (name_t, type_tag) = *pick(rng, ty.names);
        let cat_w: Vec<u32> = ty.categories.iter().map(|c| c.1).collect();
        let (cat, _, cat_tag, base_price) = ty.categories[util::weighted(rng, &cat_w)];
        let pool = if ty.id == "Mountain" {
            Pool::High
        } else {
            Pool::Any
        };
        let (muni, district) = pools.place(rng, geo, pool);
        let mu = &geo.munis[muni];
        let d = &geo.districts[district];
        let langs = util::pick_langs(rng, false);
        let picks = Picks::new(rng);
        let alt = mu.alt
            + if ty.id == "Mountain" {
                rng.gen_range(700..1500)
            } else {
                rng.gen_range(-50..250)
            };
        let (lat, lon) = util::near(rng, d.lat, d.lon, 0.02);
        // Many houses share a name ("Hotel Post"); about half add their village.
        let with_place = !name_t.0.contains("{p}") && !name_t.0.contains("{h}") && percent(rng, 50);
        let name = |l: &str| -> String {
            let base = fill(tri(name_t, l), &picks.vars(mu.name(l), l));
            if with_place {
                // Real hamlet names read well ("Hotel Post Seis am Schlern"); generic ones do not.
                let place = if d.de.contains('(') {
                    mu.name(l)
                } else {
                    d.name(l)
                };
                format!("{base} {place}")
            } else {
                base
            }
        };
        let boards: Vec<&str> = match ty.id {
            "HotelPension" => ty.boards[..rng.gen_range(1..=4)].to_vec(),
            _ => ty.boards[..rng.gen_range(1..=ty.boards.len())].to_vec(),
        };
        let mut tag_ids = vec![type_tag, cat_tag];
        tag_ids.extend(boards.iter().map(|b| board_tag(b)));
        if percent(rng, 40) {
            tag_ids.push("guestcard");
        }
        let tags = TagSet::new(&tag_ids);
        let source = if ty.id == "HotelPension" && percent(rng, 30) {
            "hgv"
        } else {
            "lts"
        };
        let id = util::hex32(rng);
        let n_rooms = rooms_for(i);
        let bookable = n_rooms > 0 && percent(rng, 75);
        let region = REGIONS[mu.region];
        let street = *pick(rng, &STREETS);
        let number = rng.gen_range(1..120);
        let site = slug(&name("de"));
        let email = format!("info@{site}.example.com");
        let url = format!("https://www.{site}.example.com");
        let tel = util::phone(rng, geo.phone_area(muni));

        let mut acco_detail = Map::new();
        let mut detail = Map::new();
        let mut titles = Map::new();
        for l in langs {
            let tl = *l;
            let t = name(l);
            let alt_s = alt.to_string();
            let vars = [
                ("t", t.as_str()),
                ("p", mu.name(tl)),
                ("alt", &alt_s),
                ("k", tri(picks.k, tl)),
                ("h", tri(picks.h, tl)),
                ("w", tri(ty.what, tl)),
                ("reg", tri((region.0, region.1, region.2), tl)),
            ];
            let short = fill(tri(SHORT, tl), &vars);
            let long = fill(tri(LONG, tl), &vars);
            acco_detail.insert(
                (*l).to_owned(),
                json!({
                    "Name": t, "Street": format!("{} {number}", if tl == "it" { street.1 } else { street.0 }),
                    "Zip": mu.plz, "City": mu.name(l), "Phone": tel, "Email": email, "Website": url,
                    "Shortdesc": short, "Longdesc": long, "CountryCode": "IT", "Language": l,
                }),
            );
            detail.insert((*l).to_owned(), json!({"Title": t, "BaseText": short}));
            titles.insert((*l).to_owned(), json!(t));
        }
        let stamps = util::stamps(rng, now);
        let mut m = head(Head {
            id: id.clone(),
            typ: "accommodation",
            source,
            shortname: name(langs[0]),
            active: util::active(rng),
            stamps,
            langs,
        });
        put(&mut m, "Detail", Value::Object(detail));
        let contact = contact(
            geo,
            langs,
            muni,
            &|l| name(l),
            street,
            number,
            &email,
            &url,
            &tel,
        );
        let images = util::images(rng, "accommodation", &id, source, &Value::Object(titles), 3);
        let mapping = if source == "hgv" {
            json!({"hgv": {"id": id}, "lts": {"rid": id}})
        } else {
            json!({"lts": {"rid": id}})
        };
        util::tail(
            &mut m,
            rng,
            Tail {
                tags: &tags,
                poi_infos: None,
                gps: Gps::Usually((lat, lon, f64::from(alt))),
                mapping,
                area_ids: geo.area_ids(muni),
                source,
                contact: Some(contact),
                images,
            },
        );
        put(&mut m, "AccoDetail", Value::Object(acco_detail));
        put(&mut m, "AccoTypeId", json!(ty.id));
        put(&mut m, "AccoCategoryId", json!(cat));
        put(&mut m, "BoardIds", json!(boards));
        let n_features = rng.gen_range(2..=6);
        let features: Vec<Value> = FEATURES
            .choose_multiple(rng, n_features)
            .map(|(fid, fname)| json!({"Id": fid, "Name": fname}))
            .collect();
        put(&mut m, "Features", Value::Array(features));
        let has_apartment = n_rooms > 0 && (ty.id == "Apartment" || percent(rng, 15));
        put(&mut m, "HasApartment", json!(has_apartment));
        put(
            &mut m,
            "HasRoom",
            json!(n_rooms > 0 && ty.id != "Apartment"),
        );
        put(&mut m, "IsCamping", json!(ty.id == "Camping"));
        put(
            &mut m,
            "IsGastronomy",
            json!(ty.id == "Mountain" || (ty.id == "HotelPension" && percent(rng, 30))),
        );
        put(&mut m, "IsBookable", json!(bookable));
        put(&mut m, "IsAccommodation", json!(true));
        put(&mut m, "TVMember", json!(percent(rng, 85)));
        put(&mut m, "TourismVereinId", json!(geo.tvs[mu.tv].id));
        put(
            &mut m,
            "MainLanguage",
            json!(if langs[0] == "it" { "it" } else { "de" }),
        );
        put(&mut m, "Representation", json!(rng.gen_range(0..=3)));
        put(
            &mut m,
            "HgvId",
            if source == "hgv" || percent(rng, 30) {
                json!(util::hex32(rng))
            } else {
                Value::Null
            },
        );

        let price_factor = rng.gen_range(0.85..1.25);
        let mut room_infos = Vec::new();
        for r in 0..n_rooms {
            let (room_t, apartment) =
                if ty.id == "Apartment" || (ty.id == "Farm" && percent(rng, 50)) {
                    *pick(rng, &ROOMS[4..])
                } else {
                    *pick(rng, &ROOMS[..4])
                };
            let style = *pick(rng, &ROOM_STYLES);
            let rid = util::hex32(rng);
            let room_name = |l: &str| fill(tri(room_t, l), &[("x", style)]);
            let max = if apartment {
                rng.gen_range(2..=6)
            } else {
                rng.gen_range(1..=4)
            };
            let price = round_to(base_price * price_factor * f64::from(max).sqrt(), 0);
            let mut rd = Map::new();
            let mut rdetail = Map::new();
            for l in langs {
                let n = room_name(l);
                let short = match *l {
                    "it" => format!("{n} per {max} persone, ca. {} m².", 18 + max * 7),
                    "en" => format!("{n} for {max} people, about {} m².", 18 + max * 7),
                    _ => format!("{n} für {max} Personen, ca. {} m².", 18 + max * 7),
                };
                rd.insert(
                    (*l).to_owned(),
                    json!({"Name": n, "Shortdesc": short, "Language": l}),
                );
                rdetail.insert((*l).to_owned(), json!({"Title": n, "BaseText": short}));
            }
            let rstamps = util::stamps(rng, now);
            let mut rm = head(Head {
                id: rid.clone(),
                typ: "accommodationroom",
                source,
                shortname: room_name(langs[0]),
                active: true,
                stamps: rstamps,
                langs,
            });
            put(&mut rm, "Detail", Value::Object(rdetail));
            put(&mut rm, "Mapping", json!({"lts": {"rid": rid}}));
            put(&mut rm, "LicenseInfo", util::license(rng, source));
            let rtitles =
                json!({"de": room_name("de"), "it": room_name("it"), "en": room_name("en")});
            put(
                &mut rm,
                "ImageGallery",
                util::images(rng, "room", &rid, source, &rtitles, 2),
            );
            put(&mut rm, "A0RID", json!(id));
            put(&mut rm, "AccoRoomDetail", Value::Object(rd));
            put(
                &mut rm,
                "Roomtype",
                json!(if apartment { "apartment" } else { "room" }),
            );
            put(&mut rm, "Roommax", json!(max));
            put(&mut rm, "Roommin", json!(1.max(max - 2)));
            put(&mut rm, "Roomstd", json!(2.min(max)));
            put(&mut rm, "RoomQuantity", json!(rng.gen_range(1..=8)));
            put(&mut rm, "PriceFrom", json!(price));
            let n_rf = rng.gen_range(2..=4);
            let rf: Vec<Value> = ROOM_FEATURES
                .choose_multiple(rng, n_rf)
                .map(|(fid, fname)| json!({"Id": fid, "Name": fname}))
                .collect();
            put(&mut rm, "Features", Value::Array(rf));
            put(&mut rm, "RoomNumber", json!(format!("{}", 100 + r)));
            room_infos.push(json!({"Id": rid, "Source": source}));
            rooms_out.push(Value::Object(rm));
        }
        put(&mut m, "AccoRoomInfo", Value::Array(room_infos));

        let availability: Vec<Value> = if bookable {
            let units = (n_rooms * 3) as i32;
            dates
                .iter()
                .map(|(date, weekend)| {
                    let free = rng.gen_range(0..=units);
                    let price = round_to(
                        base_price * price_factor * if *weekend { 1.12 } else { 1.0 },
                        0,
                    );
                    json!({"Date": date, "Available": free, "PriceFrom": price})
                })
                .collect()
        } else {
            Vec::new()
        };
        put(&mut m, "Availability", Value::Array(availability));
        put(&mut m, "LocationInfo", d.loc.clone());
        put(&mut m, "DistrictId", json!(d.id));
        put(
            &mut m,
            "PublishedOn",
            json!(["idm-marketplace", "suedtirol.info"]),
        );
        emit("Accommodation", Value::Object(m));
    }
    for r in rooms_out {
        emit("AccommodationRoom", r);
    }
}
