//! Event documents (tourism events around the anchor: single days, short series and
//! exhibitions running for weeks) and EventShort documents (NOI / Eurac room bookings).

use chrono::{Duration, NaiveDate, NaiveDateTime};
use rand::Rng;
use serde_json::{json, Map, Value};

use crate::geo::{contact, Geo};
use crate::poi::{Picks, Pool, Pools};
use crate::tags::{tag_def, TagSet};
use crate::util::{
    self, fill, head, midnight, percent, pick, put, rome_offset_hours, slug, tri, ts, Gps, Head,
    Tail, Tri,
};

pub(crate) const EVENT_BASE: u64 = 2500;
pub(crate) const EVENT_SHORT_BASE: u64 = 600;

#[derive(Clone, Copy, PartialEq)]
enum Span {
    Day,
    Days,
    Weeks,
}

const MUSIC: &str = "7E048074BA004EC58E29E330A9AA476B";
const FOLK: &str = "9C3449EE278C4D94AA5A7C286729DEA0";
const FOOD: &str = "252200A028C8449D9A6205369A6D0D36";
const TASTING: &str = "2D54FAB93F3741C7A81107B298D8FA2D";
const MARKET: &str = "4C4961D9FC5B48EEB73067BEB9D4402A";
const HIKES: &str = "ACE8B613F2074A7BB59C0B1DD40A43CD";
const TOURS: &str = "B5467FEFE5C74FA5AD32B83793A76165";
const EXHIBITION: &str = "C72CE969B98947FABC99CBC7B033F28E";
const THEATRE: &str = "6884FE362C88434B9F49725E3328112B";
const SPORT: &str = "162C0067811B477DA725D2F5F2D98398";
const FAMILY: &str = "D98B49DF24C342D09A8161836435CF86";
const LECTURE: &str = "0D25868CC23242D6AC97AEB2973CB3D6";
const COURSE: &str = "767F6F43FC394CE9A3C8A9725C6FF134";
const CRAFT: &str = "33BDC54BD39946F4852B3394B00610AE";

#[rustfmt::skip]
const EVENTS: [(Tri, &[&str], Span); 22] = [
    (("Konzert der Musikkapelle {p}", "Concerto della banda musicale di {p}", "Brass band concert in {p}"), &[MUSIC], Span::Day),
    (("Dorffest {p}", "Festa del paese a {p}", "Village festival in {p}"), &[FOLK, FOOD], Span::Days),
    (("Südtiroler Speckfest {p}", "Festa dello speck a {p}", "South Tyrolean speck festival in {p}"), &[FOOD, FOLK], Span::Days),
    (("Knödelfest {p}", "Festa dei canederli a {p}", "Dumpling festival in {p}"), &[FOOD, FOLK], Span::Day),
    (("Würstel- und Bierfest {p}", "Festa di würstel e birra a {p}", "Sausage and beer festival in {p}"), &[FOOD, FOLK], Span::Days),
    (("Törggelen am {f}hof", "Törggelen al maso {f}", "Törggelen at the {f} farm"), &[FOOD, TASTING], Span::Day),
    (("Bauernmarkt {p}", "Mercato contadino {p}", "Farmers' market {p}"), &[MARKET, FOOD], Span::Day),
    (("Christkindlmarkt {p}", "Mercatino di Natale {p}", "Christmas market {p}"), &[MARKET, CRAFT], Span::Weeks),
    (("Weinverkostung in der Kellerei {p}", "Degustazione di vini alla cantina di {p}", "Wine tasting at the {p} winery"), &[TASTING, FOOD], Span::Day),
    (("Geführte Wanderung zur {h}", "Escursione guidata al {h}", "Guided hike to the {h}"), &[HIKES], Span::Day),
    (("Sonnenaufgangswanderung: {k}", "Escursione all'alba: {k}", "Sunrise hike: {k}"), &[HIKES, SPORT], Span::Day),
    (("Führung durch {c}", "Visita guidata: {c}", "Guided tour of {c}"), &[TOURS], Span::Day),
    (("Ausstellung: Kunst aus {p}", "Mostra: arte di {p}", "Exhibition: art from {p}"), &[EXHIBITION], Span::Weeks),
    (("Fotoausstellung „Berge und Menschen“ in {p}", "Mostra fotografica «Montagne e persone» a {p}", "Photo exhibition “Mountains and people” in {p}"), &[EXHIBITION], Span::Weeks),
    (("Theateraufführung der Heimatbühne {p}", "Spettacolo della filodrammatica di {p}", "Theatre performance in {p}"), &[THEATRE], Span::Days),
    (("Yoga am {l}", "Yoga al {l}", "Yoga at {l}"), &[SPORT], Span::Day),
    (("{p} Dolomites Trail Run", "{p} Dolomites Trail Run", "{p} Dolomites Trail Run"), &[SPORT], Span::Day),
    (("Kinderprogramm in {p}: Abenteuer im Wald", "Programma per bambini a {p}: avventura nel bosco", "Kids' programme in {p}: forest adventure"), &[FAMILY], Span::Day),
    (("Vortrag: Die Geschichte von {p}", "Conferenza: la storia di {p}", "Lecture: the history of {p}"), &[LECTURE], Span::Day),
    (("Kochkurs in {p}: Schlutzkrapfen & Knödel", "Corso di cucina a {p}: mezzelune e canederli", "Cooking class in {p}: Schlutzkrapfen & dumplings"), &[COURSE, FOOD], Span::Day),
    (("Almabtrieb {p}", "Transumanza a {p}", "Cattle drive in {p}"), &[CRAFT, FOLK], Span::Day),
    (("Orgelkonzert in der Pfarrkirche {s}", "Concerto d'organo nella chiesa di {s}", "Organ concert in the church of {s}"), &[MUSIC], Span::Day),
];

const TIMES: [(&str, &str, &str); 6] = [
    ("09:00:00", "12:00:00", "08:30:00"),
    ("10:00:00", "17:00:00", "09:30:00"),
    ("14:00:00", "18:00:00", "13:30:00"),
    ("18:00:00", "22:00:00", "17:30:00"),
    ("20:00:00", "23:00:00", "19:30:00"),
    ("20:30:00", "22:30:00", "20:00:00"),
];

const BODY: Tri = (
    "{t}. Treffpunkt: Dorfplatz {p}. Beginn um {b} Uhr, Einlass ab {e} Uhr. Veranstalter: {o}. Bei Schlechtwetter findet die Veranstaltung im Vereinshaus statt.",
    "{t}. Ritrovo: piazza del paese, {p}. Inizio alle ore {b}, ingresso dalle {e}. Organizzatore: {o}. In caso di maltempo la manifestazione si terrà nella casa sociale.",
    "{t}. Meeting point: village square, {p}. Starts at {b}, doors open at {e}. Organiser: {o}. In case of bad weather the event takes place in the community hall.",
);

const CLASSIFICATIONS: [&str; 2] = [
    "4650BDEF28D545CE8AB37138E3C45B80",
    "D8F5FF743D5741D1BF1F5D61671F552B",
];
const GREEN: &str = "61EBFB23AE5C464FB3FC995F364A8F96";
const UNESCO: &str = "3C165EA886414DB7ABF24CB440516077";

/// (from, to, single_days) date ranges of one event.
fn event_dates(
    rng: &mut impl Rng,
    today: NaiveDate,
    span: Span,
) -> Vec<(NaiveDate, NaiveDate, bool)> {
    match span {
        Span::Day => {
            let start = today + Duration::days(rng.gen_range(-30..=180));
            let repeats = match rng.gen_range(0..100) {
                0..=59 => 1,
                60..=84 => 2,
                _ => 3,
            };
            (0..repeats)
                .map(|r| {
                    (
                        start + Duration::days(7 * r),
                        start + Duration::days(7 * r),
                        true,
                    )
                })
                .collect()
        }
        Span::Days => {
            let start = today + Duration::days(rng.gen_range(-30..=180));
            vec![(start, start + Duration::days(rng.gen_range(1..=4)), false)]
        }
        Span::Weeks => {
            let start = today + Duration::days(rng.gen_range(-60..=150));
            vec![(start, start + Duration::days(rng.gen_range(14..=70)), false)]
        }
    }
}

pub(crate) fn documents(
    geo: &Geo,
    rng: &mut impl Rng,
    now: NaiveDateTime,
    count: u64,
    emit: &mut dyn FnMut(&'static str, Value),
) {
    let pools = Pools::new(geo);
    let publishers = [
        "7D6D2F6E8F3A4B4C9D0E1F2A3B4C5D6E",
        "A1B2C3D4E5F60718293A4B5C6D7E8F90",
    ];
    for _ in 0..count {
        let (title_t, topics, span) = *pick(rng, &EVENTS);
        let (muni, district) = pools.place(rng, geo, Pool::Any);
        let mu = &geo.munis[muni];
        let d = &geo.districts[district];
        let langs = util::pick_langs(rng, false);
        let picks = Picks::new(rng);
        let (begin, end, entrance) = *pick(rng, &TIMES);
        let dates = event_dates(rng, now.date(), span);
        let title = |l: &str| fill(tri(title_t, l), &picks.vars(mu.name(l), l));
        let tv = &geo.tvs[mu.tv];
        let organizer = |l: &str| match l {
            "it" => tv.it.clone(),
            "en" => tv.en.clone(),
            _ => tv.de.clone(),
        };
        let mut tag_ids: Vec<&str> = topics.to_vec();
        if percent(rng, 10) {
            tag_ids.push(GREEN);
        }
        if [4, 5, 6, 7, 9, 10].contains(&mu.region) && percent(rng, 15) {
            tag_ids.push(UNESCO);
        }
        let tags = TagSet::new(&tag_ids);
        let source = if percent(rng, 90) { "lts" } else { "idm" };
        let id = util::hex32(rng);

        let mut detail = Map::new();
        let mut titles = Map::new();
        for l in langs {
            let t = title(l);
            let org = organizer(l);
            let body = fill(
                tri(BODY, l),
                &[
                    ("t", &t),
                    ("p", mu.name(l)),
                    ("b", &begin[..5]),
                    ("e", &entrance[..5]),
                    ("o", &org),
                ],
            );
            detail.insert((*l).to_owned(), json!({"Title": t, "BaseText": body}));
            titles.insert((*l).to_owned(), json!(t));
        }
        let stamps = util::stamps(rng, now);
        let mut m = head(Head {
            id: id.clone(),
            typ: "event",
            source,
            shortname: title(langs[0]),
            active: util::active(rng),
            stamps,
            langs,
        });
        put(&mut m, "Detail", Value::Object(detail));
        let (lat, lon) = util::near(rng, d.lat, d.lon, 0.01);
        let site = slug(&tv.de);
        let email = format!("info@{site}.example.com");
        let url = format!("https://www.{site}.example.com");
        let tel = util::phone(rng, geo.phone_area(muni));
        let street = *pick(rng, &crate::places::STREETS);
        let number = rng.gen_range(1..60);
        let contact = contact(
            geo, langs, muni, &organizer, street, number, &email, &url, &tel,
        );
        let images = util::images(rng, "event", &id, source, &Value::Object(titles), 2);
        util::tail(
            &mut m,
            rng,
            Tail {
                tags: &tags,
                poi_infos: None,
                gps: Gps::Usually((lat, lon, f64::from(d.alt))),
                mapping: json!({"lts": {"rid": id}}),
                area_ids: geo.area_ids(muni),
                source,
                contact: Some(contact.clone()),
                images,
            },
        );
        let first = dates.first().expect("at least one date").0;
        let last = dates.last().expect("at least one date").1;
        put(&mut m, "DateBegin", json!(midnight(first)));
        put(&mut m, "DateEnd", json!(midnight(last)));
        let free = percent(rng, 45);
        // A number, as the ODH Event schema types EventDate[].PriceFrom.
        let price: u32 = if free { 0 } else { rng.gen_range(5..60) };
        let max_persons = rng.gen_range(10..500);
        let event_dates: Vec<Value> = dates
            .iter()
            .map(|(from, to, single)| {
                json!({
                    "From": midnight(*from), "To": midnight(*to),
                    "Begin": begin, "End": end, "Entrance": entrance,
                    "SingleDays": single,
                    "EventDateId": util::hex32(rng),
                    "PriceFrom": price,
                    "Active": true,
                    "IsCancelled": percent(rng, 2),
                    "IsBookable": !free && percent(rng, 40),
                    "MinPersons": 1,
                    "MaxPersons": max_persons,
                })
            })
            .collect();
        put(&mut m, "EventDate", Value::Array(event_dates));
        put(
            &mut m,
            "EventPublisher",
            json!([{"PublisherRID": pick(rng, &publishers), "Ranc": rng.gen_range(0..=5), "Publish": 1}]),
        );
        put(&mut m, "OrganizerInfos", contact);
        let topic_values: Vec<Value> = topics
            .iter()
            .map(|t| json!({"TopicRID": t, "TopicInfo": tag_def(t).1}))
            .collect();
        put(&mut m, "Topics", Value::Array(topic_values));
        put(&mut m, "TopicRIDs", json!(topics));
        let classification = *pick(rng, &CLASSIFICATIONS);
        put(
            &mut m,
            "EventProperty",
            json!({
                "TicketRequired": !free,
                "RegistrationRequired": percent(rng, 20),
                "IncludedInSuedtirolGuestPass": percent(rng, 15),
                "EventClassificationId": classification,
                "EventOrganizerId": util::hex32(rng),
                "IsBookable": !free && percent(rng, 40),
            }),
        );
        put(&mut m, "ClassificationRID", json!(classification));
        put(&mut m, "LocationInfo", d.loc.clone());
        put(&mut m, "DistrictId", json!(d.id));
        put(
            &mut m,
            "PublishedOn",
            json!(["idm-marketplace", "suedtirol.info"]),
        );
        emit("Event", Value::Object(m));
    }
}

#[rustfmt::skip]
const SHORT: [(Tri, &[&str], &[&str]); 12] = [
    (("Workshop: Daten in der Mobilität", "Workshop: dati nella mobilità", "Workshop: data in mobility"), &["digital"], &["opendatahub"]),
    (("Startup-Pitch-Abend #{num}", "Serata di pitch per startup #{num}", "Startup pitch night #{num}"), &["digital"], &["startups"]),
    (("Vortrag: Klimawandel in den Alpen", "Conferenza: il cambiamento climatico nelle Alpi", "Lecture: climate change in the Alps"), &["green"], &["researchers", "public"]),
    (("Team-Meeting {c}", "Riunione {c}", "{c} team meeting"), &[], &["companies"]),
    (("Lego Robotics für Kinder", "Lego Robotics per bambini", "Lego Robotics for kids"), &["digital"], &["public"]),
    (("Food Tech Talk: Südtiroler Äpfel", "Food Tech Talk: le mele dell'Alto Adige", "Food Tech Talk: South Tyrolean apples"), &["food"], &["companies"]),
    (("Hackathon: Open Data Hub #{num}", "Hackathon: Open Data Hub #{num}", "Hackathon: Open Data Hub #{num}"), &["digital"], &["opendatahub", "startups"]),
    (("Seminar: Wasserstoff und Mobilität", "Seminario: idrogeno e mobilità", "Seminar: hydrogen and mobility"), &["automotiveautomation", "green"], &["researchers"]),
    (("Science Café: Gletscher im Wandel", "Science Café: ghiacciai che cambiano", "Science Café: changing glaciers"), &["green"], &["public"]),
    (("Konferenz: Künstliche Intelligenz im Tourismus", "Conferenza: intelligenza artificiale nel turismo", "Conference: AI in tourism"), &["digital"], &["companies", "researchers"]),
    (("Summer at NOI: Konzert im Park", "Summer at NOI: concerto nel parco", "Summer at NOI: concert in the park"), &[], &["public"]),
    (("Doktorandentag {c}", "Giornata dei dottorandi {c}", "PhD day {c}"), &["green"], &["researchers"]),
];

const COMPANIES: [&str; 8] = [
    "Dolomiti Data GmbH",
    "Alpine Robotics srl",
    "Südtirol Solar AG",
    "Isarco Labs",
    "Etsch Software GmbH",
    "Rienz Analytics",
    "Ortler Sensorik",
    "Talfer Design Studio",
];

/// Venue code, source, location tag, rooms, position.
type Venue = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    (f64, f64, f64),
);

const VENUES: [Venue; 3] = [
    (
        "NOI",
        "noi",
        "noi",
        &[
            "Seminar 1",
            "Seminar 2",
            "Seminar 3",
            "Seminar 4",
            "Auditorium",
            "Foyer",
            "Black Box",
        ],
        (46.4781, 11.3321, 243.0),
    ),
    (
        "EC",
        "eurac",
        "ec",
        &[
            "Auditorium",
            "Sala Conferenze",
            "Seminarraum 1",
            "Seminarraum 2",
        ],
        (46.4966, 11.3482, 262.0),
    ),
    (
        "NOIBRUNECK",
        "noi",
        "noibruneck",
        &["Seminar Room", "Lab 1"],
        (46.7966, 11.9320, 835.0),
    ),
];

pub(crate) fn short_documents(
    rng: &mut impl Rng,
    now: NaiveDateTime,
    count: u64,
    emit: &mut dyn FnMut(&'static str, Value),
) {
    for i in 0..count {
        let venue = &VENUES[util::weighted(rng, &[70, 25, 5])];
        let (title_t, tech, custom) = *pick(rng, &SHORT);
        let company = *pick(rng, &COMPANIES);
        let num = (1 + i % 97).to_string();
        let langs = util::pick_langs(rng, false);
        let title = |l: &str| fill(tri(title_t, l), &[("c", company), ("num", &num)]);
        let start_day = now.date() + Duration::days(rng.gen_range(-30..=90));
        let start = start_day
            .and_hms_opt(rng.gen_range(8..18), *pick(rng, &[0, 30]), 0)
            .expect("valid time");
        let end = if percent(rng, 10) {
            start + Duration::days(rng.gen_range(1..=2)) + Duration::hours(rng.gen_range(1..8))
        } else {
            start + Duration::hours(rng.gen_range(1..=8))
        };
        let mut tag_ids: Vec<&str> = vec![venue.2];
        tag_ids.extend(tech.iter().copied());
        tag_ids.extend(custom.iter().copied());
        let tags = TagSet::new(&tag_ids);
        let id = util::guid(rng, false);
        let stamps = util::stamps(rng, now);
        let mut m = head(Head {
            id: id.clone(),
            typ: "eventshort",
            source: venue.1,
            shortname: title(langs[0]),
            active: util::active(rng),
            stamps,
            langs,
        });
        let text = |l: &str| match l {
            "it" => format!(
                "{} – {}, organizzato da {company}. Ingresso libero, registrazione consigliata.",
                title(l),
                venue.0
            ),
            "en" => format!(
                "{} – {}, organised by {company}. Free entry, registration recommended.",
                title(l),
                venue.0
            ),
            _ => format!(
                "{} – {}, veranstaltet von {company}. Eintritt frei, Anmeldung erwünscht.",
                title(l),
                venue.0
            ),
        };
        let mut detail = Map::new();
        for l in langs {
            detail.insert(
                (*l).to_owned(),
                json!({"Title": title(l), "BaseText": text(l)}),
            );
        }
        put(&mut m, "Detail", Value::Object(detail));
        let titles = util::by_lang(langs, |l| title(l));
        let images = util::images(rng, "eventshort", &id, venue.1, &titles, 1);
        util::tail(
            &mut m,
            rng,
            Tail {
                tags: &tags,
                poi_infos: None,
                gps: Gps::Usually(venue.4),
                mapping: json!({ "noi": {"eventid": (10_000 + i).to_string()} }),
                area_ids: json!([]),
                source: venue.1,
                contact: None,
                images,
            },
        );
        let utc_ms = |t: NaiveDateTime| {
            (t - Duration::hours(rome_offset_hours(t)))
                .and_utc()
                .timestamp_millis() as f64
        };
        put(&mut m, "EventId", json!(10_000 + i));
        put(&mut m, "EventTitle", titles.clone());
        put(&mut m, "EventText", util::by_lang(langs, text));
        put(&mut m, "StartDate", json!(ts(start)));
        put(&mut m, "EndDate", json!(ts(end)));
        put(&mut m, "StartDateUTC", json!(utc_ms(start)));
        put(&mut m, "EndDateUTC", json!(utc_ms(end)));
        put(&mut m, "EventLocation", json!(venue.0));
        let space = *pick(rng, venue.3);
        put(&mut m, "AnchorVenue", json!(space));
        put(&mut m, "AnchorVenueShort", json!(space));
        let mut rooms = vec![
            json!({"Space": space, "SpaceDesc": space, "SpaceType": venue.0, "Start": ts(start), "End": ts(end), "Comment": ""}),
        ];
        if percent(rng, 20) {
            let second = *pick(rng, venue.3);
            if second != space {
                rooms.push(json!({"Space": second, "SpaceDesc": second, "SpaceType": venue.0, "Start": ts(start), "End": ts(end), "Comment": "Catering"}));
            }
        }
        put(&mut m, "RoomBooked", Value::Array(rooms));
        put(&mut m, "CompanyName", json!(company));
        put(&mut m, "Display1", json!("Y"));
        put(&mut m, "ActiveWeb", json!(percent(rng, 80)));
        put(&mut m, "ActiveToday", json!(true));
        put(&mut m, "ActiveCommunityApp", json!(percent(rng, 60)));
        put(
            &mut m,
            "TechnologyFields",
            json!(tech.iter().map(|t| tag_def(t).3).collect::<Vec<_>>()),
        );
        put(
            &mut m,
            "CustomTagging",
            json!(custom.iter().map(|t| tag_def(t).3).collect::<Vec<_>>()),
        );
        put(
            &mut m,
            "WebAddress",
            json!(format!(
                "https://{}.example.com/events/{}",
                venue.1,
                10_000 + i
            )),
        );
        put(&mut m, "ExternalOrganizer", json!(percent(rng, 30)));
        emit("EventShort", Value::Object(m));
    }
}
