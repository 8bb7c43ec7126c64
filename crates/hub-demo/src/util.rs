//! Shared helpers: seeded randomness, identifiers, timestamps, text templates and the
//! document parts every entity carries (`_Meta`, `LicenseInfo`, `GpsInfo`, images).

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, Timelike};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Map, Value};

/// The one fixed seed all streams derive from.
pub(crate) const SEED: u64 = 0x0D15_EA5E_5EED_2024;

/// A name in German, Italian and English.
pub(crate) type Tri = (&'static str, &'static str, &'static str);

pub(crate) type Doc = Map<String, Value>;

/// Bounding box every generated coordinate stays inside (South Tyrol).
pub(crate) const LAT_RANGE: (f64, f64) = (46.22, 47.08);
pub(crate) const LON_RANGE: (f64, f64) = (10.40, 12.47);

/// An independent random stream per entity type, so each type's documents do not depend
/// on how many documents other types produced.
pub(crate) fn rng_for(stream: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(SEED ^ splitmix(stream))
}

pub(crate) fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn fnv1a(s: &str, basis: u64) -> u64 {
    s.bytes().fold(basis, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    })
}

/// A stable 32-hex upper-case id derived from a kind and a name.
pub(crate) fn name_id(kind: &str, name: &str) -> String {
    let key = format!("{kind}:{name}");
    let a = splitmix(fnv1a(&key, 0xCBF2_9CE4_8422_2325));
    let b = splitmix(fnv1a(&key, 0x8422_2325_CBF2_9CE4) ^ a);
    format!("{a:016X}{b:016X}")
}

/// A random 32-hex upper-case id (the LTS "RID" style).
pub(crate) fn hex32(rng: &mut impl Rng) -> String {
    format!("{:016X}{:016X}", rng.gen::<u64>(), rng.gen::<u64>())
}

/// A random GUID, 8-4-4-4-12.
pub(crate) fn guid(rng: &mut impl Rng, upper: bool) -> String {
    let s = format!("{:016x}{:016x}", rng.gen::<u64>(), rng.gen::<u64>());
    let g = format!(
        "{}-{}-4{}-a{}-{}",
        &s[0..8],
        &s[8..12],
        &s[13..16],
        &s[17..20],
        &s[20..32]
    );
    if upper {
        g.to_uppercase()
    } else {
        g
    }
}

pub(crate) fn pick<'a, T>(rng: &mut impl Rng, items: &'a [T]) -> &'a T {
    &items[rng.gen_range(0..items.len())]
}

/// Index into `weights` chosen with probability proportional to its weight.
pub(crate) fn weighted(rng: &mut impl Rng, weights: &[u32]) -> usize {
    let total: u32 = weights.iter().sum();
    let mut r = rng.gen_range(0..total);
    for (i, w) in weights.iter().enumerate() {
        if r < *w {
            return i;
        }
        r -= w;
    }
    weights.len() - 1
}

pub(crate) fn percent(rng: &mut impl Rng, p: u32) -> bool {
    rng.gen_range(0..100) < p
}

pub(crate) fn round_to(x: f64, decimals: i32) -> f64 {
    let f = 10f64.powi(decimals);
    (x * f).round() / f
}

/// `YYYY-MM-DDTHH:MM:SS`, the offset-less style the reference uses for LastChange.
pub(crate) fn ts(t: NaiveDateTime) -> String {
    format!(
        "{}T{:02}:{:02}:{:02}",
        day(t.date()),
        t.hour(),
        t.minute(),
        t.second()
    )
}

pub(crate) fn day(d: NaiveDate) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day())
}

pub(crate) fn midnight(d: NaiveDate) -> String {
    format!("{}T00:00:00", day(d))
}

fn last_sunday(year: i32, month: u32) -> NaiveDate {
    let last = NaiveDate::from_ymd_opt(year, month, 31).expect("March and October have 31 days");
    last - Duration::days(i64::from(last.weekday().num_days_from_sunday()))
}

/// Europe/Rome offset in hours at a UTC instant (EU summer time rule).
pub(crate) fn rome_offset_hours(utc: NaiveDateTime) -> i64 {
    let y = utc.year();
    let start = last_sunday(y, 3).and_hms_opt(1, 0, 0).expect("valid time");
    let end = last_sunday(y, 10).and_hms_opt(1, 0, 0).expect("valid time");
    if utc >= start && utc < end {
        2
    } else {
        1
    }
}

/// Local Rome wall time with its offset, e.g. `2025-03-13T15:08:00+01:00`.
pub(crate) fn ts_rome(utc: NaiveDateTime) -> String {
    let h = rome_offset_hours(utc);
    format!("{}+{:02}:00", ts(utc + Duration::hours(h)), h)
}

/// Import history of a record relative to "now".
#[derive(Clone, Copy)]
pub(crate) struct Stamps {
    pub first_import: NaiveDateTime,
    pub last_change: NaiveDateTime,
    pub last_update: NaiveDateTime,
}

/// LastChange within the two years before `now`, FirstImport up to four years earlier,
/// LastUpdate (platform save) between LastChange and now.
pub(crate) fn stamps(rng: &mut impl Rng, now: NaiveDateTime) -> Stamps {
    let last_change = now - Duration::seconds(rng.gen_range(3_600..730 * 86_400));
    let first_import = last_change - Duration::seconds(rng.gen_range(0..1_460 * 86_400));
    let gap = (now - last_change).num_seconds().min(20 * 86_400);
    let last_update = last_change + Duration::seconds(rng.gen_range(0..=gap));
    Stamps {
        first_import,
        last_change,
        last_update,
    }
}

/// Fills `{key}` placeholders from `vars`; unknown keys are kept verbatim.
pub(crate) fn fill(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let key = &after[..close];
                match vars.iter().find(|(k, _)| *k == key) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        out.push('{');
                        out.push_str(key);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Lower-case ASCII slug for host names and file names.
pub(crate) fn slug(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().flat_map(char::to_lowercase) {
        let rep = match c {
            'ä' => "ae",
            'ö' => "oe",
            'ü' => "ue",
            'ß' => "ss",
            'à' | 'á' | 'â' => "a",
            'è' | 'é' | 'ë' | 'ê' => "e",
            'ì' | 'í' => "i",
            'ò' | 'ó' => "o",
            'ù' | 'ú' => "u",
            c if c.is_ascii_alphanumeric() => {
                out.push(c);
                continue;
            }
            _ => "-",
        };
        if rep == "-" {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push_str(rep);
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// Language sets a record is published in; most have all three, some lack one or two,
/// records from Ladin valleys sometimes add `ld`.
pub(crate) fn pick_langs(rng: &mut impl Rng, ladin_valley: bool) -> &'static [&'static str] {
    if ladin_valley && percent(rng, 35) {
        return &["de", "it", "en", "ld"];
    }
    match rng.gen_range(0..100) {
        0..=73 => &["de", "it", "en"],
        74..=84 => &["de", "it"],
        85..=89 => &["de"],
        90..=93 => &["it", "en"],
        94..=96 => &["it"],
        _ => &["de", "en"],
    }
}

/// Pick the entry of a (de, it, en) triple for a language (Ladin falls back to `ld`
/// when given, else German).
pub(crate) fn tri(t: Tri, lang: &str) -> &'static str {
    match lang {
        "it" => t.1,
        "en" => t.2,
        _ => t.0,
    }
}

/// `{lang: text}` for the given languages.
pub(crate) fn by_lang(langs: &[&str], mut f: impl FnMut(&str) -> String) -> Value {
    let mut m = Map::new();
    for l in langs {
        m.insert((*l).to_owned(), Value::String(f(l)));
    }
    Value::Object(m)
}

pub(crate) fn names3(t: (&str, &str, &str)) -> Value {
    json!({"de": t.0, "it": t.1, "en": t.2})
}

pub(crate) fn update_info(source: &str) -> Value {
    json!({"UpdatedBy": format!("import.{source}"), "UpdateSource": format!("{source}.interface")})
}

pub(crate) fn meta(id: &str, typ: &str, source: &str, s: &Stamps, update: Value) -> Value {
    json!({
        "Id": id,
        "Type": typ,
        "Source": source,
        "LastUpdate": ts(s.last_update),
        "LastChange": ts(s.last_change),
        "Reduced": false,
        "UpdateInfo": update,
    })
}

/// The leading fields every document carries, in the reference's key order.
pub(crate) struct Head<'a> {
    pub id: String,
    pub typ: &'static str,
    pub source: &'a str,
    pub shortname: String,
    pub active: bool,
    pub stamps: Stamps,
    pub langs: &'a [&'a str],
}

pub(crate) fn head(h: Head<'_>) -> Doc {
    let mut m = Map::new();
    let meta = meta(&h.id, h.typ, h.source, &h.stamps, update_info(h.source));
    m.insert("Id".into(), Value::String(h.id));
    m.insert("_Meta".into(), meta);
    m.insert("Shortname".into(), Value::String(h.shortname));
    m.insert("Active".into(), Value::Bool(h.active));
    m.insert("Source".into(), Value::String(h.source.to_owned()));
    m.insert("LastChange".into(), Value::String(ts(h.stamps.last_change)));
    m.insert(
        "FirstImport".into(),
        Value::String(ts(h.stamps.first_import)),
    );
    m.insert("HasLanguage".into(), json!(h.langs));
    m
}

pub(crate) fn put(m: &mut Doc, key: &str, v: Value) {
    m.insert(key.to_owned(), v);
}

/// About 5% of records are inactive at their source.
pub(crate) fn active(rng: &mut impl Rng) -> bool {
    !percent(rng, 5)
}

pub(crate) fn license_holder(source: &str) -> &'static str {
    match source {
        "lts" => "https://www.lts.it",
        "hgv" => "https://www.hgv.it",
        "idm" => "https://www.idm-suedtirol.com",
        "siag" => "https://www.provinz.bz.it",
        "noi" => "https://noi.bz.it",
        "eurac" => "https://www.eurac.edu",
        "suedtirolwein" => "https://www.suedtirolwein.com",
        "dss" => "https://www.dolomitisuperski.com",
        "a22" | "A22" => "https://www.autobrennero.it",
        _ => "https://www.provinz.bz.it",
    }
}

pub(crate) fn license(rng: &mut impl Rng, source: &str) -> Value {
    let cc_by = percent(rng, 10);
    json!({
        "License": if cc_by { "CC-BY" } else { "CC0" },
        "LicenseHolder": license_holder(source),
        "Author": if cc_by { "Hub demo data" } else { "" },
        "ClosedData": false,
    })
}

pub(crate) fn gps_value(lat: f64, lon: f64, alt: f64) -> Value {
    json!([{
        "Gpstype": "position",
        "Latitude": lat,
        "Longitude": lon,
        "Altitude": alt,
        "AltitudeUnitofMeasure": "m",
        "Default": true,
    }])
}

/// GpsInfo for a position; about 5% of records have none (empty array or no field).
pub(crate) fn put_gps(m: &mut Doc, rng: &mut impl Rng, pos: (f64, f64, f64)) {
    match rng.gen_range(0..100) {
        0..=2 => put(m, "GpsInfo", json!([])),
        3..=4 => {}
        _ => put(m, "GpsInfo", gps_value(pos.0, pos.1, pos.2)),
    }
}

/// Where a document is: always placed (geography), or usually (about 5% without).
pub(crate) enum Gps {
    Always((f64, f64, f64)),
    Usually((f64, f64, f64)),
}

/// The trailing common fields, in the reference's key order.
pub(crate) struct Tail<'a> {
    pub tags: &'a crate::tags::TagSet,
    pub poi_infos: Option<Value>,
    pub gps: Gps,
    pub mapping: Value,
    pub area_ids: Value,
    pub source: &'a str,
    pub contact: Option<Value>,
    pub images: Value,
}

/// Inserts Tags, TagIds, HubTags, SrcTags, AdditionalPoiInfos, GpsInfo, Mapping, AreaIds,
/// LicenseInfo, ContactInfos and ImageGallery.
pub(crate) fn tail(m: &mut Doc, rng: &mut impl Rng, t: Tail<'_>) {
    t.tags.put(m);
    if let Some(p) = t.poi_infos {
        put(m, "AdditionalPoiInfos", p);
    }
    match t.gps {
        Gps::Always(p) => put(m, "GpsInfo", gps_value(p.0, p.1, p.2)),
        Gps::Usually(p) => put_gps(m, rng, p),
    }
    put(m, "Mapping", t.mapping);
    put(m, "AreaIds", t.area_ids);
    put(m, "LicenseInfo", license(rng, t.source));
    if let Some(c) = t.contact {
        put(m, "ContactInfos", c);
    }
    put(m, "ImageGallery", t.images);
}

/// A point near (lat, lon), at most `spread` degrees away, inside the bounding box.
pub(crate) fn near(rng: &mut impl Rng, lat: f64, lon: f64, spread: f64) -> (f64, f64) {
    let la = (lat + rng.gen_range(-spread..spread)).clamp(LAT_RANGE.0, LAT_RANGE.1);
    let lo = (lon + rng.gen_range(-spread..spread) * 1.4).clamp(LON_RANGE.0, LON_RANGE.1);
    (round_to(la, 6), round_to(lo, 6))
}

/// 0–3 gallery images with localized titles.
pub(crate) fn images(
    rng: &mut impl Rng,
    folder: &str,
    id: &str,
    source: &str,
    titles: &Value,
    max: u32,
) -> Value {
    let n = rng.gen_range(0..=max);
    let mut out = Vec::with_capacity(n as usize);
    let name = slug(id);
    for i in 0..n {
        let cc_by = percent(rng, 15);
        let (w, h) = if percent(rng, 80) {
            (1600, 1067)
        } else {
            (1067, 1600)
        };
        out.push(json!({
            "ImageName": format!("{name}-{}", i + 1),
            "ImageUrl": format!("https://images.example.com/{folder}/{name}-{}.jpg", i + 1),
            "Width": w,
            "Height": h,
            "ImageSource": source,
            "ImageTitle": titles.clone(),
            "CopyRight": if cc_by { "© Hub demo" } else { "" },
            "License": if cc_by { "CC-BY" } else { "CC0" },
            "LicenseHolder": license_holder(source),
            "IsInGallery": true,
            "ListPosition": i,
        }));
    }
    Value::Array(out)
}

/// A telephone number with a South Tyrol area code.
pub(crate) fn phone(rng: &mut impl Rng, area: &str) -> String {
    format!("+39 {area} {:06}", rng.gen_range(100_000..999_999))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_known_and_keeps_unknown_placeholders() {
        assert_eq!(
            fill("{a} zur {b}", &[("a", "Wanderung"), ("b", "Hütte")]),
            "Wanderung zur Hütte"
        );
        assert_eq!(fill("x {nope} y", &[("a", "1")]), "x {nope} y");
        assert_eq!(fill("open { end", &[]), "open { end");
    }

    #[test]
    fn slug_folds_german_and_italian_letters() {
        assert_eq!(slug("Schloss Prösels & Città"), "schloss-proesels-citta");
        assert_eq!(slug("Weißes Rössl"), "weisses-roessl");
    }

    #[test]
    fn rome_offset_follows_summer_time() {
        let winter = NaiveDate::from_ymd_opt(2025, 1, 15)
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap();
        let summer = NaiveDate::from_ymd_opt(2025, 7, 15)
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap();
        // 2025-03-30 is the last Sunday of March: the switch happens at 01:00 UTC.
        let before = NaiveDate::from_ymd_opt(2025, 3, 30)
            .unwrap()
            .and_hms_opt(0, 59, 0)
            .unwrap();
        let after = NaiveDate::from_ymd_opt(2025, 3, 30)
            .unwrap()
            .and_hms_opt(1, 0, 0)
            .unwrap();
        assert_eq!(ts_rome(winter), "2025-01-15T13:00:00+01:00");
        assert_eq!(ts_rome(summer), "2025-07-15T14:00:00+02:00");
        assert_eq!(rome_offset_hours(before), 1);
        assert_eq!(rome_offset_hours(after), 2);
    }

    #[test]
    fn name_ids_are_stable_and_distinct() {
        assert_eq!(
            name_id("region", "Vinschgau"),
            name_id("region", "Vinschgau")
        );
        assert_ne!(name_id("region", "Vinschgau"), name_id("tv", "Vinschgau"));
        assert_eq!(name_id("region", "Vinschgau").len(), 32);
    }
}
