//! Announcement documents: road traffic situations from the provincial traffic centre
//! (`PROVINCE_BZ`) and the Brenner motorway (`A22`), shaped like the items the DATEX II
//! feed reads. About half are current at the anchor, a fifth planned, the rest ended
//! within the last 30 days. Times carry Europe/Rome offsets.

use chrono::{Duration, NaiveDateTime};
use rand::Rng;
use serde_json::{json, Map, Value};

use crate::util::{self, percent, pick, rome_offset_hours, ts, ts_rome, Tri};

pub(crate) const BASE: u64 = 120;

/// The twelve categories the DATEX feed maps, with their weights.
pub(crate) const CATEGORIES: [(&str, u32); 12] = [
    ("road-work", 25),
    ("congestion", 12),
    ("accident", 8),
    ("closure", 10),
    ("caution", 8),
    ("hindrance", 8),
    ("road-condition", 6),
    ("weather-related", 5),
    ("event", 5),
    ("animal-on-road", 4),
    ("speed-camera", 5),
    ("prohibition", 4),
];

/// Categories the feed treats as short-lived.
pub(crate) const SHORT_LIVED: [&str; 6] = [
    "speed-camera",
    "congestion",
    "accident",
    "event",
    "animal-on-road",
    "weather-related",
];

fn texts(category: &str) -> (Tri, Tri) {
    match category {
        "congestion" => (
            ("Stau", "Coda", "Queue"),
            (
                "Zeitverlust bis zu 20 Minuten.",
                "Tempo di percorrenza aumentato fino a 20 minuti.",
                "Delays of up to 20 minutes.",
            ),
        ),
        "accident" => (
            ("Unfall", "Incidente", "Accident"),
            (
                "Fahrstreifen gesperrt, Rettungskräfte vor Ort.",
                "Corsia chiusa, soccorsi sul posto.",
                "Lane closed, emergency services on site.",
            ),
        ),
        "animal-on-road" => (
            (
                "Tiere auf der Fahrbahn",
                "Animali vaganti",
                "Animals on the road",
            ),
            (
                "Vorsicht: Wild auf der Fahrbahn.",
                "Attenzione: selvaggina sulla carreggiata.",
                "Caution: wildlife on the carriageway.",
            ),
        ),
        "caution" => (
            ("Allgemeine Gefahr", "Pericolo generico", "General hazard"),
            (
                "Steinschlaggefahr, bitte vorsichtig fahren.",
                "Pericolo caduta massi, guidare con prudenza.",
                "Risk of falling rocks, drive carefully.",
            ),
        ),
        "road-work" => (
            ("Baustelle", "Cantiere", "Road works"),
            (
                "Einspurige Verkehrsführung mit Ampelregelung, werktags von 8 bis 17 Uhr.",
                "Senso unico alternato regolato da semaforo, nei giorni feriali dalle 8 alle 17.",
                "Single-lane traffic controlled by lights, weekdays 8 am to 5 pm.",
            ),
        ),
        "weather-related" => (
            ("Nebel", "Nebbia", "Fog"),
            (
                "Sichtweite unter 100 m.",
                "Visibilità inferiore a 100 m.",
                "Visibility below 100 m.",
            ),
        ),
        "event" => (
            ("Veranstaltung", "Manifestazione", "Event"),
            (
                "Straße wegen Radrennen zeitweise gesperrt.",
                "Strada chiusa temporaneamente per gara ciclistica.",
                "Road closed at times for a cycling race.",
            ),
        ),
        "prohibition" => (
            ("Fahrverbot", "Divieto di transito", "Driving ban"),
            (
                "Fahrverbot für Fahrzeuge > 7,5 t.",
                "Divieto di transito per veicoli > 7,5 t.",
                "No vehicles > 7.5 t.",
            ),
        ),
        "closure" => (
            ("Straßensperre", "Chiusura", "Road closed"),
            (
                "Umleitung über die Nachbargemeinden & Landesstraßen ausgeschildert.",
                "Deviazione segnalata via comuni limitrofi & strade provinciali.",
                "Diversion signposted via neighbouring villages & provincial roads.",
            ),
        ),
        "hindrance" => (
            ("Behinderung", "Senso unico alternato", "Obstruction"),
            (
                "Verkehr wird wechselseitig angehalten.",
                "Traffico a senso unico alternato.",
                "Alternating one-way traffic.",
            ),
        ),
        "speed-camera" => (
            (
                "Geschwindigkeitskontrolle",
                "Controllo velocità",
                "Speed check",
            ),
            (
                "Mobile Radarkontrolle.",
                "Controllo elettronico della velocità.",
                "Mobile speed camera.",
            ),
        ),
        _ => (
            (
                "Winterausrüstung Pflicht",
                "Obbligo di dotazioni invernali",
                "Winter equipment required",
            ),
            (
                "Winterreifen oder Schneeketten an Bord mitführen.",
                "Obbligo di pneumatici invernali o catene a bordo.",
                "Winter tyres or snow chains on board required.",
            ),
        ),
    }
}

/// Road, from, to (de, it) and a point on the segment.
type Segment = (
    Tri,
    (&'static str, &'static str),
    (&'static str, &'static str),
    f64,
    f64,
);

#[rustfmt::skip]
const ROADS: [Segment; 14] = [
    (("SS 12 Brennerstraße", "SS 12 del Brennero", "SS 12 Brenner road"), ("Klausen", "Chiusa"), ("Waidbruck", "Ponte Gardena"), 46.62, 11.55),
    (("SS 38 Stilfser-Joch-Straße", "SS 38 dello Stelvio", "SS 38 Stelvio road"), ("Meran", "Merano"), ("Naturns", "Naturno"), 46.66, 11.06),
    (("Schnellstraße MeBo", "Superstrada MeBo", "MeBo expressway"), ("Bozen Süd", "Bolzano Sud"), ("Meran Süd", "Merano Sud"), 46.58, 11.22),
    (("SS 49 Pustertaler Straße", "SS 49 della Pusteria", "SS 49 Pustertal road"), ("Bruneck", "Brunico"), ("Olang", "Valdaora"), 46.78, 11.99),
    (("SS 40 Reschenstraße", "SS 40 di Resia", "SS 40 Reschen road"), ("Mals", "Malles"), ("Reschen", "Resia"), 46.75, 10.54),
    (("SS 241 Eggentaler Straße", "SS 241 della Val d'Ega", "SS 241 Eggental road"), ("Kardaun", "Cardano"), ("Welschnofen", "Nova Levante"), 46.47, 11.45),
    (("SS 242 Grödner Straße", "SS 242 della Val Gardena", "SS 242 Val Gardena road"), ("Waidbruck", "Ponte Gardena"), ("St. Ulrich", "Ortisei"), 46.58, 11.62),
    (("SS 244 Gadertaler Straße", "SS 244 della Val Badia", "SS 244 Val Badia road"), ("St. Lorenzen", "San Lorenzo"), ("Corvara", "Corvara"), 46.66, 11.90),
    (("SS 508 Sarntaler Straße", "SS 508 di Val Sarentino", "SS 508 Sarntal road"), ("Bozen", "Bolzano"), ("Sarnthein", "Sarentino"), 46.58, 11.36),
    (("SS 44 Jaufenstraße", "SS 44 del Passo di Monte Giovo", "SS 44 Jaufen road"), ("St. Leonhard", "San Leonardo"), ("Jaufenpass", "Passo Giovo"), 46.82, 11.28),
    (("SS 42 Mendelstraße", "SS 42 della Mendola", "SS 42 Mendel road"), ("Eppan", "Appiano"), ("Mendelpass", "Passo della Mendola"), 46.45, 11.21),
    (("LS 14 Weinstraße", "SP 14 Strada del Vino", "LS 14 Wine Road"), ("Kaltern", "Caldaro"), ("Tramin", "Termeno"), 46.38, 11.24),
    (("SS 621 Ahrntaler Straße", "SS 621 della Valle Aurina", "SS 621 Ahrntal road"), ("Sand in Taufers", "Campo Tures"), ("Steinhaus", "Cadipietra"), 46.95, 11.95),
    (("SS 243 Grödner Joch", "SS 243 del Passo Gardena", "SS 243 Gardena Pass road"), ("Wolkenstein", "Selva"), ("Kolfuschg", "Colfosco"), 46.55, 11.81),
];

const A22: Tri = (
    "A22 Brennerautobahn",
    "A22 Autostrada del Brennero",
    "A22 Brenner motorway",
);
/// German and Italian place name.
type Place = (&'static str, &'static str);
/// From, to and a point on the segment.
type A22Segment = (Place, Place, f64, f64);

#[rustfmt::skip]
const A22_SEGMENTS: [A22Segment; 7] = [
    (("Brenner", "Brennero"), ("Sterzing", "Vipiteno"), 46.95, 11.44),
    (("Sterzing", "Vipiteno"), ("Brixen-Pustertal", "Bressanone-Val Pusteria"), 46.80, 11.60),
    (("Brixen-Pustertal", "Bressanone-Val Pusteria"), ("Klausen-Gröden", "Chiusa-Val Gardena"), 46.69, 11.62),
    (("Klausen-Gröden", "Chiusa-Val Gardena"), ("Bozen Nord", "Bolzano Nord"), 46.56, 11.47),
    (("Bozen Nord", "Bolzano Nord"), ("Bozen Süd", "Bolzano Sud"), 46.47, 11.33),
    (("Bozen Süd", "Bolzano Sud"), ("Neumarkt-Auer", "Egna-Ora"), 46.38, 11.30),
    (("Neumarkt-Auer", "Egna-Ora"), ("Salurn", "Salorno"), 46.27, 11.23),
];

const LONG_NOTE: Tri = (
    "Die Arbeiten umfassen die Erneuerung des Fahrbahnbelags, die Sanierung der Brückenlager und den Austausch der Leitplanken auf einer Länge von mehreren Kilometern. Während der Arbeiten gilt eine Geschwindigkeitsbegrenzung von 40 km/h sowie ein Überholverbot. Nachts und an Wochenenden bleibt die Strecke nach Möglichkeit zweispurig befahrbar. Schwerfahrzeuge werden gebeten, die ausgeschilderte Umleitung zu benutzen. Bei ungünstiger Witterung können sich die Arbeiten verzögern; aktuelle Informationen erteilt die Landesverkehrsmeldezentrale rund um die Uhr.",
    "I lavori comprendono il rifacimento della pavimentazione, il risanamento degli appoggi del ponte e la sostituzione dei guardrail su una lunghezza di diversi chilometri. Durante i lavori vige un limite di velocità di 40 km/h e il divieto di sorpasso. Di notte e nei fine settimana il tratto resta, ove possibile, percorribile su due corsie. I mezzi pesanti sono pregati di utilizzare la deviazione segnalata. In caso di maltempo i lavori potranno subire ritardi; informazioni aggiornate sono disponibili presso la centrale provinciale viabilità 24 ore su 24.",
    "The works include resurfacing the carriageway, repairing the bridge bearings and replacing the crash barriers over several kilometres. A 40 km/h speed limit and a no-overtaking rule apply during the works. At night and at weekends the road stays open on two lanes where possible. Heavy vehicles are asked to use the signposted diversion. Bad weather may delay the works; the provincial traffic centre provides up-to-date information around the clock.",
);

const DETOUR_NOTE: Tri = (
    "Umleitungen: Der Durchgangsverkehr wird über die Nachbartäler geleitet, der Ziel- und Quellverkehr bleibt über die Gemeindestraßen möglich. Linienbusse halten an Ersatzhaltestellen, die vor Ort gekennzeichnet sind. Für Einsatzfahrzeuge bleibt eine Fahrspur jederzeit frei. Anrainer erhalten auf Anfrage eine Durchfahrtsgenehmigung bei der Gemeinde.",
    "Deviazioni: il traffico di transito viene deviato attraverso le valli limitrofe, il traffico locale resta possibile sulle strade comunali. Gli autobus di linea fermano presso fermate sostitutive segnalate sul posto. Una corsia resta sempre libera per i mezzi di soccorso. I residenti possono richiedere al comune un permesso di transito.",
    "Diversions: through traffic is routed via the neighbouring valleys; local traffic can still use the municipal roads. Scheduled buses stop at replacement stops marked on site. One lane is kept free for emergency vehicles at all times. Residents can ask the municipality for a transit permit.",
);

const XML_NOTE: Tri = (
    "Hinweis der Verkehrsmeldezentrale: \"Bitte Abstand halten\" & <Rettungsgasse> bilden.",
    "Avviso della centrale viabilità: \"Mantenere la distanza\" & formare il <corridoio di emergenza>.",
    "Notice from the traffic centre: \"Keep your distance\" & form an <emergency corridor>.",
);

fn minutes(rng: &mut impl Rng, lo: i64, hi: i64) -> Duration {
    Duration::minutes(rng.gen_range(lo..=hi))
}

fn duration(rng: &mut impl Rng, category: &str) -> Duration {
    match category {
        "event" => minutes(rng, 240, 720),
        c if SHORT_LIVED.contains(&c) => minutes(rng, 30, 360),
        "road-work" => minutes(rng, 3 * 1440, 60 * 1440),
        "closure" => minutes(rng, 120, 30 * 1440),
        "prohibition" => minutes(rng, 7 * 1440, 120 * 1440),
        "road-condition" => minutes(rng, 30 * 1440, 150 * 1440),
        _ => minutes(rng, 1440, 20 * 1440),
    }
}

/// Start of the local (Europe/Rome) calendar day containing `utc`, as UTC.
fn local_midnight(utc: NaiveDateTime) -> NaiveDateTime {
    let off = Duration::hours(rome_offset_hours(utc));
    (utc + off).date().and_hms_opt(0, 0, 0).expect("valid time") - off
}

pub(crate) fn documents(
    rng: &mut impl Rng,
    now: NaiveDateTime,
    count: u64,
    emit: &mut dyn FnMut(&'static str, Value),
) {
    let now = now - Duration::seconds(i64::from(now.and_utc().timestamp().rem_euclid(60) as u32));
    let weights: Vec<u32> = CATEGORIES.iter().map(|c| c.1).collect();
    let (mut n_bz, mut n_a22, mut n_works) = (0u64, 0u64, 0u64);
    for i in 0..count {
        let province = percent(rng, 70);
        let (provider, source, id) = if province {
            n_bz += 1;
            (
                "provincebz",
                "PROVINCE_BZ",
                format!("urn:announcements:provincebz:{n_bz}"),
            )
        } else {
            n_a22 += 1;
            ("a22", "A22", format!("urn:announcements:a22:{n_a22}"))
        };
        let category = CATEGORIES[util::weighted(rng, &weights)].0;
        let short = SHORT_LIVED.contains(&category);
        let dur = duration(rng, category);
        let status = rng.gen_range(0..100);
        let (start, end): (NaiveDateTime, Option<NaiveDateTime>) = if status < 50 {
            if short && percent(rng, 15) {
                let start = (now - minutes(rng, 5, 180)).max(local_midnight(now));
                (start, None)
            } else if short {
                let start = now - minutes(rng, 5, (dur.num_minutes() - 5).max(6));
                (start, Some(start + dur))
            } else {
                let start = now - minutes(rng, 60, dur.num_minutes().min(30 * 1440));
                let mut end = start + dur;
                if end <= now + Duration::hours(1) {
                    end = now + minutes(rng, 60, 5 * 1440);
                }
                (start, if percent(rng, 20) { None } else { Some(end) })
            }
        } else if status < 70 {
            let start = now + minutes(rng, 60, 30 * 1440);
            (
                start,
                if !short && percent(rng, 10) {
                    None
                } else {
                    Some(start + dur)
                },
            )
        } else {
            let end = now - minutes(rng, 10, 30 * 1440);
            (end - dur, Some(end))
        };
        let planned = matches!(
            category,
            "road-work" | "prohibition" | "closure" | "event" | "road-condition"
        );
        let latest = now - Duration::minutes(1);
        let first_import = if planned {
            start - minutes(rng, 60, 5 * 1440)
        } else {
            start + minutes(rng, 1, 20)
        }
        .min(latest);
        let history = if percent(rng, 15) {
            0
        } else {
            rng.gen_range(1..=3)
        };
        let change_limit = end.map_or(latest, |e| e.min(latest));
        let span = (change_limit - first_import).num_minutes().max(0);
        let last_change = if history > 1 && span > 0 {
            first_import + Duration::minutes(rng.gen_range(1..=span))
        } else {
            first_import
        };
        let mut updates: Vec<NaiveDateTime> = vec![first_import];
        for _ in 2..history {
            let gap = (last_change - first_import).num_minutes().max(0);
            updates.push(first_import + Duration::minutes(rng.gen_range(0..=gap)));
        }
        if history > 1 {
            updates.push(last_change);
        }
        updates.sort();

        let (title, note) = texts(category);
        let (road, a, b, lat, lon, direction): (Tri, Place, Place, f64, f64, Tri) = if province {
            let s = pick(rng, &ROADS);
            let dir = if percent(rng, 50) {
                (
                    "in beiden Richtungen",
                    "in entrambe le direzioni",
                    "in both directions",
                )
            } else {
                ("Richtung Bozen", "direzione Bolzano", "towards Bolzano")
            };
            (s.0, s.1, s.2, s.3, s.4, dir)
        } else {
            let s = pick(rng, &A22_SEGMENTS);
            let dir = if percent(rng, 50) {
                ("Richtung Brenner", "direzione Brennero", "towards Brenner")
            } else {
                ("Richtung Modena", "direzione Modena", "towards Modena")
            };
            (A22, s.0, s.1, s.2, s.3, dir)
        };
        let langs: &[&str] = match (province, rng.gen_range(0..100)) {
            (true, 0..=4) => &["it"],
            (true, 5..=69) | (false, 0..=49) => &["it", "de"],
            _ => &["it", "de", "en"],
        };
        let empty = percent(rng, 8);
        // A few works announcements explain themselves at length (over 1,000 characters).
        let works = matches!(category, "road-work" | "closure");
        if works {
            n_works += 1;
        }
        let long = works && n_works % 8 == 3;
        let xml = i % 17 == 5;
        let mut detail = Map::new();
        for l in langs {
            let place = |p: (&'static str, &'static str)| -> &'static str {
                if *l == "it" {
                    p.1
                } else {
                    p.0
                }
            };
            let mut body = match *l {
                "it" => format!(
                    "{} tra {} e {}, {}.",
                    road.1,
                    place(a),
                    place(b),
                    direction.1
                ),
                "en" => format!(
                    "{} between {} and {}, {}.",
                    road.2,
                    place(a),
                    place(b),
                    direction.2
                ),
                _ => format!(
                    "{} zwischen {} und {}, {}.",
                    road.0,
                    place(a),
                    place(b),
                    direction.0
                ),
            };
            body.push(' ');
            body.push_str(util::tri(note, l));
            if long {
                body.push(' ');
                body.push_str(util::tri(LONG_NOTE, l));
                body.push(' ');
                body.push_str(util::tri(DETOUR_NOTE, l));
            }
            if xml {
                body.push(' ');
                body.push_str(util::tri(XML_NOTE, l));
            }
            if empty && !long && !xml {
                body.clear();
            }
            detail.insert(
                (*l).to_owned(),
                json!({"Title": util::tri(title, l), "BaseText": body}),
            );
        }

        let mut m = Map::new();
        m.insert("Id".into(), json!(id));
        m.insert(
            "TagIds".into(),
            json!([
                "announcement:traffic-event",
                format!("traffic-event:{category}")
            ]),
        );
        m.insert("StartTime".into(), json!(ts_rome(start)));
        if let Some(e) = end {
            m.insert("EndTime".into(), json!(ts_rome(e)));
        }
        m.insert("FirstImport".into(), json!(ts_rome(first_import)));
        m.insert("LastChange".into(), json!(ts_rome(last_change)));
        m.insert("CreationTime".into(), json!(ts_rome(first_import)));
        m.insert("VersionTime".into(), json!(ts_rome(last_change)));
        let mut meta = Map::new();
        meta.insert("Id".into(), json!(id));
        meta.insert("Type".into(), json!("announcement"));
        meta.insert("Source".into(), json!(source));
        meta.insert("LastUpdate".into(), json!(ts(last_change)));
        meta.insert("LastChange".into(), json!(ts(last_change)));
        meta.insert("Reduced".into(), json!(false));
        if history > 0 {
            let entries: Vec<Value> = updates
                .iter()
                .map(|u| json!({"LastUpdate": ts_rome(*u), "UpdatedBy": format!("transformer.traffic-event-{provider}"), "UpdateSource": provider}))
                .collect();
            meta.insert("UpdateInfo".into(), json!({"UpdatedBy": format!("transformer.traffic-event-{provider}"), "UpdateSource": provider, "UpdateHistory": entries}));
        }
        m.insert("_Meta".into(), Value::Object(meta));
        if !percent(rng, 10) {
            let (la, lo) = util::near(rng, lat, lon, 0.02);
            m.insert(
                "Geo".into(),
                json!({"position": {"Latitude": la, "Longitude": lo}}),
            );
        }
        let message = rng.gen_range(100_000..999_999);
        let mapping = if province {
            json!({"ProviderProvinceBz": {"Id": message.to_string()}})
        } else {
            let segment = A22_SEGMENTS.iter().position(|s| s.0 == a).unwrap_or(0) as f64;
            let km = util::round_to(segment * 17.0 + rng.gen_range(0.0..17.0), 1);
            json!({"ProviderA22": {"Id": format!("A22-{message}"), "km": km.to_string(), "direction": if direction.0.ends_with("Brenner") { "Nord" } else { "Sud" }}})
        };
        m.insert("Mapping".into(), mapping);
        m.insert("Detail".into(), Value::Object(detail));
        m.insert(
            "Shortname".into(),
            json!(format!("{} – {}", title.1, road.1)),
        );
        let expired = end.is_some_and(|e| e < now);
        m.insert("Active".into(), json!(!(expired && percent(rng, 10))));
        m.insert("Source".into(), json!(source));
        m.insert("HasLanguage".into(), json!(langs));
        m.insert(
            "LicenseInfo".into(),
            json!({"License": "CC0", "LicenseHolder": util::license_holder(if province { "provincebz" } else { "a22" }), "Author": "", "ClosedData": false}),
        );
        emit("Announcement", Value::Object(m));
    }
}
