//! Weather documents: district forecasts (WeatherDistrict), municipality forecasts
//! (WeatherForecast) and station readings (WeatherRealtime, lower-case keys as the
//! reference serves them). Values follow the season and altitude of the anchor date.

use chrono::{Datelike, Duration, NaiveDateTime, Timelike};
use rand::Rng;
use serde_json::{json, Value};

use crate::geo::Geo;
use crate::util::{self, gps_value, head, midnight, put, round_to, ts, ts_rome, Head, Stamps};

pub(crate) const DISTRICTS: [(&str, &str, &str); 7] = [
    ("Vinschgau", "Val Venosta", "Vinschgau"),
    (
        "Burggrafenamt - Meran und Umgebung",
        "Burgraviato - Merano e dintorni",
        "Burggrafenamt - Meran and environs",
    ),
    (
        "Bozen, Überetsch und Unterland",
        "Bolzano, Oltradige e Bassa Atesina",
        "Bolzano, Überetsch and Unterland",
    ),
    ("Salten-Schlern", "Salto-Sciliar", "Salten-Schlern"),
    (
        "Eisacktal und Wipptal",
        "Valle Isarco e Alta Valle Isarco",
        "Eisacktal and Wipptal",
    ),
    ("Pustertal", "Val Pusteria", "Pustertal"),
    (
        "Ladinien - Dolomiten",
        "Ladinia - Dolomiti",
        "Ladinia - Dolomites",
    ),
];
/// Weather district (0-based) of each tourism region.
const REGION_DISTRICT: [usize; 11] = [0, 1, 2, 2, 3, 3, 3, 6, 4, 5, 5];

/// code, de, it, en, precipitation probability (%), rain (mm).
const CONDITIONS: [(&str, &str, &str, &str, u32, f64); 9] = [
    ("a", "sonnig", "soleggiato", "sunny", 0, 0.0),
    ("b", "heiter", "poco nuvoloso", "mostly sunny", 10, 0.0),
    ("c", "wolkig", "nuvoloso", "cloudy", 20, 0.2),
    ("d", "stark bewölkt", "molto nuvoloso", "overcast", 40, 1.0),
    (
        "e",
        "bedeckt mit leichtem Regen",
        "coperto con pioggia debole",
        "overcast with light rain",
        70,
        3.0,
    ),
    ("f", "Regen", "pioggia", "rain", 90, 12.0),
    ("g", "Schneefall", "nevicate", "snowfall", 80, 8.0),
    ("h", "Gewitter", "temporali", "thunderstorms", 60, 10.0),
    ("i", "Nebel", "nebbia", "fog", 10, 0.0),
];

/// Mean daily temperature at Bolzano (262 m) per month.
const MEAN: [f64; 12] = [
    1.0, 4.0, 9.0, 13.0, 17.0, 21.0, 23.0, 22.0, 18.0, 13.0, 6.0, 2.0,
];

fn mean_temp(t: NaiveDateTime, alt: f64) -> f64 {
    MEAN[t.month0() as usize] - 0.6 * (alt - 262.0) / 100.0
}

fn condition(
    rng: &mut impl Rng,
    cold: bool,
) -> &'static (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    u32,
    f64,
) {
    let i = util::weighted(
        rng,
        &[
            25,
            20,
            18,
            12,
            8,
            5,
            if cold { 6 } else { 0 },
            if cold { 0 } else { 4 },
            2,
        ],
    );
    &CONDITIONS[i]
}

fn desc(c: &(&str, &str, &str, &str, u32, f64)) -> Value {
    json!({"de": c.1, "it": c.2, "en": c.3})
}

/// The ODH schema's integer `SymbolId`: the weather code's letter (a = 1, b = 2, …) times
/// ten plus the forecast day (1–4).
fn symbol_id(code: &str, day: i64) -> i64 {
    let letter = code
        .bytes()
        .next()
        .map_or(0, |b| i64::from(b.saturating_sub(b'a')) + 1);
    letter * 10 + day + 1
}

fn fresh(rng: &mut impl Rng, now: NaiveDateTime) -> Stamps {
    let last_change = now - Duration::minutes(rng.gen_range(5..360));
    Stamps {
        first_import: now - Duration::days(rng.gen_range(1000..1800)),
        last_change,
        last_update: last_change,
    }
}

fn weather_head(
    rng: &mut impl Rng,
    now: NaiveDateTime,
    id: String,
    typ: &'static str,
    shortname: String,
    langs: &'static [&'static str],
) -> util::Doc {
    let stamps = fresh(rng, now);
    head(Head {
        id,
        typ,
        source: "siag",
        shortname,
        active: true,
        stamps,
        langs,
    })
}

pub(crate) fn documents(
    geo: &Geo,
    rng: &mut impl Rng,
    now: NaiveDateTime,
    emit: &mut dyn FnMut(&'static str, Value),
) {
    let today = now.date();
    for (w, names) in DISTRICTS.iter().enumerate() {
        let members: Vec<usize> = (0..geo.munis.len())
            .filter(|i| REGION_DISTRICT[geo.munis[*i].region] == w)
            .collect();
        let alt = members
            .iter()
            .map(|i| f64::from(geo.munis[*i].alt))
            .sum::<f64>()
            / members.len() as f64;
        let mut m = weather_head(
            rng,
            now,
            (w + 1).to_string(),
            "weatherdistrict",
            names.0.to_owned(),
            &["de", "it", "en"],
        );
        put(&mut m, "LicenseInfo", util::license(rng, "siag"));
        put(&mut m, "DistrictName", util::names3(*names));
        put(&mut m, "Date", json!(midnight(today)));
        let mut tvs: Vec<&str> = members
            .iter()
            .map(|i| geo.tvs[geo.munis[*i].tv].id.as_str())
            .collect();
        tvs.dedup();
        put(&mut m, "TourismVereinIds", json!(tvs));
        let forecast: Vec<Value> = (0..4)
            .map(|d| {
                let date = today + Duration::days(d);
                let mean = mean_temp(now + Duration::days(d), alt);
                let c = condition(rng, mean < 2.0);
                // Whole numbers: the ODH schema types these fields as integers.
                let max = (mean + rng.gen_range(3.0..7.0)).round() as i64;
                let min = (mean - rng.gen_range(3.0..7.0)).round() as i64;
                let part = |rng: &mut dyn rand::RngCore| {
                    (c.4 / 10 * 10).saturating_sub(rng.gen_range(0..3) * 10)
                };
                json!({
                    "Date": midnight(date),
                    "WeatherCode": c.0,
                    "WeatherDesc": desc(c),
                    "WeatherImgUrl": format!("https://images.example.com/weather/{}.png", c.0),
                    "MaxTemp": max,
                    "MinTemp": min,
                    "Freeze": ((mean * 150.0 + 1500.0) / 100.0).round() as i64 * 100,
                    "RainFrom": (c.5 * 0.5).round() as i64,
                    "RainTo": c.5.round() as i64,
                    "Part1": part(rng), "Part2": part(rng), "Part3": part(rng), "Part4": part(rng),
                    "Thunderstorm": if c.0 == "h" { 60 } else { 0 },
                    "SymbolId": symbol_id(c.0, d),
                })
            })
            .collect();
        put(&mut m, "BezirksForecast", Value::Array(forecast));
        emit("WeatherDistrict", Value::Object(m));
    }

    let base3h = now
        .date()
        .and_hms_opt(now.hour() / 3 * 3, 0, 0)
        .expect("valid hour");
    for mu in &geo.munis {
        let langs: &'static [&'static str] = &["de", "it", "en"];
        let mut m = weather_head(
            rng,
            now,
            format!("forecast_{}", mu.istat),
            "weatherforecast",
            mu.de.to_owned(),
            langs,
        );
        put(&mut m, "LicenseInfo", util::license(rng, "siag"));
        put(&mut m, "MunicipalityIstatCode", json!(mu.istat));
        put(
            &mut m,
            "MunicipalityName",
            json!({"de": mu.de, "it": mu.it, "en": format!("{}/{}", mu.de, mu.it)}),
        );
        let alt = f64::from(mu.alt);
        let daily: Vec<Value> = (0..5)
            .map(|d| {
                let mean = mean_temp(now + Duration::days(d), alt);
                let c = condition(rng, mean < 2.0);
                json!({
                    "Date": midnight(today + Duration::days(d)),
                    "MinTemp": (mean - rng.gen_range(3.0..7.0)).round() as i64,
                    "MaxTemp": (mean + rng.gen_range(3.0..7.0)).round() as i64,
                    "SunshineDuration": if c.4 < 30 { rng.gen_range(5..11) } else { rng.gen_range(0..4) },
                    "PrecipitationProbability": c.4,
                    "Precipitation": c.5.round() as i64,
                    "WeatherCode": c.0,
                    "WeatherDesc": desc(c),
                    "WeatherImgUrl": format!("https://images.example.com/weather/{}.png", c.0),
                })
            })
            .collect();
        put(&mut m, "ForeCastDaily", Value::Array(daily));
        let hourly: Vec<Value> = (0..8)
            .map(|k| {
                let t = base3h + Duration::hours(3 * k);
                let diurnal = 5.0 * (((f64::from(t.hour()) - 9.0) / 24.0) * std::f64::consts::TAU).sin();
                let c = condition(rng, mean_temp(t, alt) < 2.0);
                json!({
                    "Date": ts(t),
                    "Temperature": round_to(mean_temp(t, alt) + diurnal + rng.gen_range(-1.5..1.5), 1),
                    "PrecipitationProbability": c.4,
                    "Precipitation": c.5 / 8.0,
                    "WeatherCode": c.0,
                    "WeatherDesc": desc(c),
                    "WindDirection": rng.gen_range(0..360),
                    "WindSpeed": rng.gen_range(0..35),
                })
            })
            .collect();
        put(&mut m, "Forecast3HoursInterval", Value::Array(hourly));
        put(&mut m, "GpsInfo", gps_value(mu.lat, mu.lon, alt));
        put(
            &mut m,
            "LocationInfo",
            geo.districts[mu.districts[0]].loc.clone(),
        );
        emit("WeatherForecast", Value::Object(m));
    }

    let mut stations: Vec<(String, f64, f64, i32)> = geo
        .munis
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, m)| (format!("{} - {}", m.de, m.it), m.lat, m.lon, m.alt))
        .collect();
    stations.push((
        "Rittner Horn - Corno del Renon".into(),
        46.6155,
        11.4611,
        2260,
    ));
    stations.push((
        "Schöntaufspitze - Punta Beltovo".into(),
        46.4985,
        10.6082,
        3325,
    ));
    for (k, (name, lat, lon, alt)) in stations.into_iter().enumerate() {
        let code = format!("{:05}MS", 10_000 + k * 1_370);
        let measured = now
            - Duration::seconds(i64::from(now.second()))
            - Duration::minutes(i64::from(now.minute() % 10) + 10 * rng.gen_range(0..3));
        let stamps = Stamps {
            first_import: now - Duration::days(rng.gen_range(1000..1800)),
            last_change: measured,
            last_update: measured,
        };
        let mut m = head(Head {
            id: code.clone(),
            typ: "weatherrealtime",
            source: "siag",
            shortname: name.clone(),
            active: true,
            stamps,
            langs: &["de", "it"],
        });
        put(&mut m, "LicenseInfo", util::license(rng, "siag"));
        let altf = f64::from(alt);
        let diurnal =
            5.0 * (((f64::from(measured.hour()) - 9.0) / 24.0) * std::f64::consts::TAU).sin();
        let t = round_to(
            mean_temp(measured, altf) + diurnal + rng.gen_range(-2.0..2.0),
            1,
        );
        let snowy = t < 3.0 && alt > 1000;
        put(&mut m, "id", json!(code));
        put(&mut m, "code", json!(code));
        put(&mut m, "name", json!(name));
        put(&mut m, "altitude", json!(alt));
        put(&mut m, "latitude", json!(lat));
        put(&mut m, "longitude", json!(lon));
        put(&mut m, "categoryId", json!(1));
        put(
            &mut m,
            "lwdType",
            json!(if alt > 1800 { "LWD" } else { "MS" }),
        );
        put(&mut m, "t", json!(t));
        put(&mut m, "rh", json!(rng.gen_range(25..98)));
        put(&mut m, "ff", json!(round_to(rng.gen_range(0.0..9.0), 1)));
        put(&mut m, "dd", json!(rng.gen_range(0..360)));
        put(&mut m, "wg", json!(round_to(rng.gen_range(0.5..16.0), 1)));
        put(
            &mut m,
            "n",
            json!(if percent_rain(rng) {
                round_to(rng.gen_range(0.1..4.0), 1)
            } else {
                0.0
            }),
        );
        put(
            &mut m,
            "p",
            if alt < 1500 {
                json!(round_to(rng.gen_range(1005.0..1030.0) - altf / 9.0, 1))
            } else {
                Value::Null
            },
        );
        put(&mut m, "q", json!(rng.gen_range(0..900)));
        put(&mut m, "sd", json!(rng.gen_range(0..600)));
        put(
            &mut m,
            "hs",
            if snowy {
                json!(rng.gen_range(5..180))
            } else {
                Value::Null
            },
        );
        put(&mut m, "lastUpdated", json!(ts_rome(measured)));
        put(&mut m, "GpsInfo", gps_value(lat, lon, altf));
        emit("WeatherRealtime", Value::Object(m));
    }
}

fn percent_rain(rng: &mut impl Rng) -> bool {
    util::percent(rng, 20)
}

pub(crate) fn counts(geo: &Geo) -> [(&'static str, u64); 3] {
    let stations = geo.munis.len().div_ceil(2) as u64 + 2;
    [
        ("WeatherDistrict", DISTRICTS.len() as u64),
        ("WeatherForecast", geo.munis.len() as u64),
        ("WeatherRealtime", stations),
    ]
}
