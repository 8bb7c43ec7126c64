//! Article documents (base, content, recipe, press, tour-operator and trade articles) and
//! WebcamInfo documents.

use chrono::{Duration, NaiveDateTime};
use rand::Rng;
use serde_json::{json, Map, Value};

use crate::geo::Geo;
use crate::places::REGIONS;
use crate::poi::{Picks, Pool, Pools};
use crate::tags::TagSet;
use crate::util::{self, fill, head, percent, pick, put, tri, ts, Gps, Head, Tail, Tri};

pub(crate) const ARTICLE_BASE: u64 = 1200;
pub(crate) const WEBCAM_BASE: u64 = 300;

/// Type, weight, title templates with their tags.
type ArticleType = (&'static str, u32, &'static [(Tri, &'static [&'static str])]);

#[rustfmt::skip]
const ARTICLE_TYPES: [ArticleType; 6] = [
    ("basisartikel", 30, &[
        (("{p}: Urlaub zwischen Bergen und Reben", "{p}: vacanze tra montagne e vigneti", "{p}: holidays between mountains and vineyards"), &["activity"]),
        (("Die schönsten Hütten rund um {p}", "I rifugi più belli intorno a {p}", "The most beautiful huts around {p}"), &["gastronomy", "mountain huts"]),
        (("Wandern im Gebiet {reg}", "Escursioni nella zona {reg}", "Hiking in {reg}"), &["activity", "hiking guides"]),
        (("Kultur erleben in {p}", "Vivere la cultura a {p}", "Experience culture in {p}"), &["architecture", "culture attractions"]),
        (("Winterzauber in {p}", "Magia d'inverno a {p}", "Winter magic in {p}"), &["winter"]),
    ]),
    ("contentartikel", 30, &[
        (("Tipp: {h}", "Consiglio: {h}", "Tip: the {h}"), &["gastronomy", "mountain huts"]),
        (("Genussmomente am {l}", "Momenti di gusto al {l}", "Taste moments at {l}"), &["gastronomy"]),
        (("Radtour: {x}", "In bici: {x}", "Cycling: {x}"), &["activity", "biking tours"]),
        (("Ein Tag in {p}", "Una giornata a {p}", "A day in {p}"), &["activity"]),
    ]),
    ("rezeptartikel", 15, &[]),
    ("presseartikel", 15, &[
        (("Pressemitteilung: Saisonstart in {p}", "Comunicato stampa: inizio stagione a {p}", "Press release: season opening in {p}"), &[]),
        (("{reg}: neue Wanderwege eröffnet", "{reg}: aperti nuovi sentieri", "{reg}: new hiking trails opened"), &["hiking guides"]),
        (("Nachhaltiger Tourismus in {p} ausgezeichnet", "Premiato il turismo sostenibile a {p}", "Sustainable tourism in {p} awarded"), &[]),
    ]),
    ("reiseveranstalter", 5, &[
        (("Angebot: Wanderwoche in {p}", "Offerta: settimana escursionistica a {p}", "Offer: hiking week in {p}"), &["activity", "hiking"]),
    ]),
    ("b2bartikel", 5, &[
        (("Fachinformation: Gästekarte {p}", "Informazioni professionali: carta ospiti {p}", "Trade info: {p} guest card"), &[]),
    ]),
];

/// Recipes: name and course.
#[rustfmt::skip]
const RECIPES: [(Tri, Tri); 14] = [
    (("Schlutzkrapfen mit Spinatfüllung", "Mezzelune ripiene di spinaci", "Schlutzkrapfen with spinach filling"), ("Hauptspeise", "Piatto principale", "Main course")),
    (("Speckknödel", "Canederli allo speck", "Speck dumplings"), ("Hauptspeise", "Piatto principale", "Main course")),
    (("Apfelstrudel", "Strudel di mele", "Apple strudel"), ("Süßspeise", "Dolce", "Dessert")),
    (("Kaiserschmarrn mit Preiselbeeren", "Kaiserschmarrn con mirtilli rossi", "Kaiserschmarrn with cranberries"), ("Süßspeise", "Dolce", "Dessert")),
    (("Schüttelbrot", "Schüttelbrot, il pane croccante", "Schüttelbrot crispbread"), ("Brot", "Pane", "Bread")),
    (("Buchweizentorte", "Torta di grano saraceno", "Buckwheat cake"), ("Süßspeise", "Dolce", "Dessert")),
    (("Tirtlan mit Sauerkraut", "Tirtlan con crauti", "Tirtlan with sauerkraut"), ("Vorspeise", "Antipasto", "Starter")),
    (("Gerstsuppe", "Zuppa d'orzo", "Barley soup"), ("Suppe", "Zuppa", "Soup")),
    (("Kastanienherzen", "Cuori di castagne", "Chestnut hearts"), ("Süßspeise", "Dolce", "Dessert")),
    (("Knödeltris", "Tris di canederli", "Dumpling trio"), ("Hauptspeise", "Piatto principale", "Main course")),
    (("Zelten", "Zelten", "Zelten fruit bread"), ("Süßspeise", "Dolce", "Dessert")),
    (("Strauben", "Strauben", "Funnel cakes"), ("Süßspeise", "Dolce", "Dessert")),
    (("Erdäpfelblattln mit Sauerkraut", "Erdäpfelblattln con crauti", "Potato pancakes with sauerkraut"), ("Vorspeise", "Antipasto", "Starter")),
    (("Würstel mit Kraut", "Würstel con crauti", "Sausages with sauerkraut"), ("Hauptspeise", "Piatto principale", "Main course")),
];

const INGREDIENTS: [Tri; 10] = [
    ("Mehl", "farina", "flour"),
    ("Eier", "uova", "eggs"),
    ("Speck", "speck", "speck"),
    ("Spinat", "spinaci", "spinach"),
    ("Butter", "burro", "butter"),
    ("Äpfel", "mele", "apples"),
    ("Schüttelbrot", "Schüttelbrot", "Schüttelbrot"),
    (
        "Buchweizenmehl",
        "farina di grano saraceno",
        "buckwheat flour",
    ),
    ("Topfen", "ricotta", "curd cheese"),
    ("Kastanien", "castagne", "chestnuts"),
];

const ARTICLE_BODY: Tri = (
    "{t}. Ein Streifzug durch {p} und die Region {reg}: Wege, Hütten, Höfe und Menschen, die Südtirol ausmachen. Mit Tipps zur Anreise mit Bus und Bahn.",
    "{t}. Un viaggio attraverso {p} e la zona {reg}: sentieri, rifugi, masi e le persone che fanno l'Alto Adige. Con consigli per arrivare in autobus e treno.",
    "{t}. A journey through {p} and {reg}: trails, huts, farms and the people who make South Tyrol. With tips on getting there by bus and train.",
);

const RECIPE_BODY: Tri = (
    "Zutaten für {n} Personen: {i}. Zubereitung: Die Zutaten vorbereiten, den Teig kurz ruhen lassen, dann langsam garen. Dazu passt ein Glas Lagrein.",
    "Ingredienti per {n} persone: {i}. Preparazione: preparare gli ingredienti, lasciar riposare l'impasto, poi cuocere lentamente. Si abbina a un bicchiere di Lagrein.",
    "Ingredients for {n} people: {i}. Method: prepare the ingredients, let the dough rest, then cook slowly. Serve with a glass of Lagrein.",
);

pub(crate) fn documents(
    geo: &Geo,
    rng: &mut impl Rng,
    now: NaiveDateTime,
    count: u64,
    emit: &mut dyn FnMut(&'static str, Value),
) {
    let pools = Pools::new(geo);
    let weights: Vec<u32> = ARTICLE_TYPES.iter().map(|t| t.1).collect();
    for _ in 0..count {
        let (typ, _, templates) = ARTICLE_TYPES[util::weighted(rng, &weights)];
        let (muni, district) = pools.place(rng, geo, Pool::Any);
        let mu = &geo.munis[muni];
        let d = &geo.districts[district];
        let langs = util::pick_langs(rng, false);
        let picks = Picks::new(rng);
        let region = REGIONS[mu.region];
        let recipe = *pick(rng, &RECIPES);
        let family = percent(rng, 50);
        let (title_t, tag_ids): (Tri, &[&str]) = if typ == "rezeptartikel" {
            (recipe.0, &["gastronomy", "eating drinking"])
        } else {
            *pick(rng, templates)
        };
        let title = |l: &str| -> String {
            let base = fill(tri(title_t, l), &picks.vars(mu.name(l), l));
            let base = fill(&base, &[("reg", tri((region.0, region.1, region.2), l))]);
            match (typ == "rezeptartikel" && family, l) {
                (true, "it") => format!("{base} della famiglia {}", picks.f),
                (true, "en") => format!("{base}, {} family style", picks.f),
                (true, _) => format!("{base} nach Art der Familie {}", picks.f),
                _ => base,
            }
        };
        let portions = rng.gen_range(2..=6).to_string();
        let n_ing = rng.gen_range(3..=6);
        let ingredients: Vec<Tri> = (0..n_ing).map(|_| *pick(rng, &INGREDIENTS)).collect();
        let mut detail = Map::new();
        let mut infos = Map::new();
        for l in langs {
            let t = title(l);
            let body = if typ == "rezeptartikel" {
                let ing = ingredients
                    .iter()
                    .map(|i| tri(*i, l))
                    .collect::<Vec<_>>()
                    .join(", ");
                fill(tri(RECIPE_BODY, l), &[("n", &portions), ("i", &ing)])
            } else {
                fill(
                    tri(ARTICLE_BODY, l),
                    &[
                        ("t", &t),
                        ("p", mu.name(l)),
                        ("reg", tri((region.0, region.1, region.2), l)),
                    ],
                )
            };
            let mut dm = Map::new();
            dm.insert("Title".into(), json!(t));
            dm.insert("BaseText".into(), json!(body));
            if percent(rng, 50) {
                dm.insert(
                    "IntroText".into(),
                    json!(match *l {
                        "it" => "Da leggere.",
                        "en" => "Worth a read.",
                        _ => "Lesenswert.",
                    }),
                );
            }
            detail.insert((*l).to_owned(), Value::Object(dm));
            let elements = if typ == "rezeptartikel" {
                json!({"portionen": portions, "zubereitungszeit": format!("{} min", 20 + 5 * n_ing), "gang": tri(recipe.1, l)})
            } else {
                json!({"lesezeit": format!("{} min", 2 + n_ing), "autor": "Redaktion"})
            };
            infos.insert(
                (*l).to_owned(),
                json!({"Language": l, "Elements": elements}),
            );
        }
        let id = util::guid(rng, true);
        let source = if typ == "reiseveranstalter" {
            "lts"
        } else {
            "idm"
        };
        let stamps = util::stamps(rng, now);
        let mut m = head(Head {
            id: id.clone(),
            typ: "article",
            source,
            shortname: title(langs[0]),
            active: util::active(rng),
            stamps,
            langs,
        });
        put(&mut m, "Detail", Value::Object(detail));
        let tags = TagSet::new(tag_ids);
        let titles = util::by_lang(langs, |l| title(l));
        let images = util::images(rng, "article", &id, source, &titles, 3);
        let placed =
            !matches!(typ, "rezeptartikel" | "presseartikel" | "b2bartikel") && percent(rng, 60);
        let (lat, lon) = util::near(rng, d.lat, d.lon, 0.02);
        tags.put(&mut m);
        if placed {
            util::put_gps(&mut m, rng, (lat, lon, f64::from(d.alt)));
        }
        put(&mut m, "Mapping", json!({"idm": {"id": id}}));
        put(
            &mut m,
            "AreaIds",
            if placed {
                geo.area_ids(muni)
            } else {
                json!([])
            },
        );
        put(&mut m, "LicenseInfo", util::license(rng, source));
        put(&mut m, "ImageGallery", images);
        put(&mut m, "Type", json!(typ));
        if typ == "rezeptartikel" {
            put(&mut m, "SubType", json!(recipe.1 .0));
        }
        let back = if typ == "presseartikel" { 730 } else { 1500 };
        let date = now
            - Duration::days(rng.gen_range(0..back))
            - Duration::seconds(rng.gen_range(0..86_400));
        put(&mut m, "ArticleDate", json!(ts(date)));
        if typ == "contentartikel" && percent(rng, 30) {
            put(
                &mut m,
                "ArticleDateTo",
                json!(ts(date + Duration::days(rng.gen_range(30..365)))),
            );
        }
        if percent(rng, 20) {
            put(
                &mut m,
                "ExpirationDate",
                json!(ts(now + Duration::days(rng.gen_range(-200..400)))),
            );
        }
        put(&mut m, "Highlight", json!(percent(rng, 10)));
        put(&mut m, "AdditionalArticleInfos", Value::Object(infos));
        put(&mut m, "PublishedOn", json!(["idm-marketplace"]));
        emit("Article", Value::Object(m));
    }
}

const VIEWS: [Tri; 7] = [
    ("Dorfzentrum", "centro del paese", "village centre"),
    ("Talstation", "stazione a valle", "valley station"),
    ("Bergstation", "stazione a monte", "top station"),
    ("Panorama {k}", "panorama {k}", "{k} panorama"),
    ("Piste", "pista", "slope"),
    ("{h}", "{h}", "{h}"),
    ("{l}", "{l}", "{l}"),
];

pub(crate) fn webcams(
    geo: &Geo,
    rng: &mut impl Rng,
    now: NaiveDateTime,
    count: u64,
    emit: &mut dyn FnMut(&'static str, Value),
) {
    let pools = Pools::new(geo);
    let no_tags = TagSet::new(&[]);
    let ski_tags = TagSet::new(&["winter", "ski areas"]);
    for i in 0..count {
        let source = ["lts", "panomax", "feratel"][util::weighted(rng, &[50, 25, 25])];
        let pool = if percent(rng, 70) {
            Pool::High
        } else {
            Pool::Any
        };
        let (muni, district) = pools.place(rng, geo, pool);
        let mu = &geo.munis[muni];
        let d = &geo.districts[district];
        let langs = util::pick_langs(rng, false);
        let picks = Picks::new(rng);
        let vi = rng.gen_range(0..VIEWS.len());
        let name = |l: &str| {
            format!(
                "Webcam {} – {}",
                mu.name(l),
                fill(tri(VIEWS[vi], l), &picks.vars(mu.name(l), l))
            )
        };
        let id = util::hex32(rng);
        let stamps = util::stamps(rng, now);
        let mut m = head(Head {
            id: id.clone(),
            typ: "webcam",
            source,
            shortname: name(langs[0]),
            active: util::active(rng),
            stamps,
            langs,
        });
        let mut detail = Map::new();
        for l in langs {
            let text = match *l {
                "it" => format!(
                    "Immagine in diretta da {}, aggiornata ogni 10 minuti.",
                    mu.name(l)
                ),
                "en" => format!("Live image from {}, updated every 10 minutes.", mu.name(l)),
                _ => format!(
                    "Live-Bild aus {}, alle 10 Minuten aktualisiert.",
                    mu.name(l)
                ),
            };
            detail.insert((*l).to_owned(), json!({"Title": name(l), "BaseText": text}));
        }
        put(&mut m, "Detail", Value::Object(detail));
        let alt = mu.alt + rng.gen_range(0..1400);
        let (lat, lon) = util::near(rng, d.lat, d.lon, 0.04);
        let names = util::by_lang(langs, |l| name(l));
        let tags = if vi == 4 { &ski_tags } else { &no_tags };
        util::tail(
            &mut m,
            rng,
            Tail {
                tags,
                poi_infos: None,
                gps: Gps::Usually((lat, lon, f64::from(alt))),
                mapping: json!({"lts": {"rid": id}}),
                area_ids: geo.area_ids(muni),
                source,
                contact: None,
                images: json!([]),
            },
        );
        let base = format!("https://webcam.example.com/{source}/{}", id.to_lowercase());
        let panorama = source == "panomax";
        put(&mut m, "WebcamId", json!((1000 + i).to_string()));
        put(&mut m, "Webcamname", names);
        put(
            &mut m,
            "WebCamProperties",
            json!({
                "WebcamUrl": format!("{base}/current.jpg"),
                "StreamUrl": if percent(rng, 30) { json!(format!("{base}/live.m3u8")) } else { Value::Null },
                "PreviewUrl": format!("{base}/preview.jpg"),
                "ViewAngleDegree": if panorama { "360" } else { *pick(rng, &["90", "120", "180"]) },
                "ZeroDirection": rng.gen_range(0..360).to_string(),
                "HtmlEmbed": Value::Null,
                "TourCam": percent(rng, 10),
                "HasVR": panorama,
                "ViewerType": if panorama { "panorama" } else { "image" },
            }),
        );
        put(&mut m, "ListPosition", json!(i % 20));
        put(&mut m, "LocationInfo", d.loc.clone());
        put(
            &mut m,
            "PublishedOn",
            json!(["idm-marketplace", "suedtirol.info"]),
        );
        emit("WebcamInfo", Value::Object(m));
    }
}
