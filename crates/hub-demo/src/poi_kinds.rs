//! What kinds of HubActivityPoi exist: categories, title templates, tags, where they
//! are found, and the description texts.

use crate::poi::Pool;
use crate::util::Tri;

/// Text families: 0 summer route, 1 winter route, 2 culture, 3 food, 4 lifts and slopes,
/// 5 services, 6 leisure, 7 cycling, 8 wine.
pub(crate) const TEXTS: [Tri; 9] = [
    (
        "„{t}“: Ausgangspunkt ist {p} auf {alt} m. Die Route ist {len} km lang, die Gehzeit beträgt rund {dur} Stunden. Unterwegs lädt die {h} zur Einkehr ein; Trittsicherheit und festes Schuhwerk sind empfohlen.",
        "«{t}»: si parte da {p} a {alt} m. Il percorso è lungo {len} km, la durata è di circa {dur} ore. Lungo il tragitto il {h} invita a una sosta; si consigliano passo sicuro e scarpe robuste.",
        "“{t}”: the starting point is {p} at {alt} m. The route is {len} km long and takes about {dur} hours. On the way the {h} invites you to stop for a bite; sure-footedness and sturdy shoes are recommended.",
    ),
    (
        "„{t}“ bei {p}: {len} km im Schnee, Dauer etwa {dur} Stunden. Die Strecke wird bei guter Schneelage täglich präpariert; Einkehr in der {h}.",
        "«{t}» presso {p}: {len} km sulla neve, durata circa {dur} ore. Con buon innevamento il tracciato viene preparato ogni giorno; sosta al {h}.",
        "“{t}” near {p}: {len} km in the snow, about {dur} hours. With good snow the track is groomed daily; stop at the {h}.",
    ),
    (
        "{t} in {p} gehört zu den Sehenswürdigkeiten der Region {reg}. Führungen auf Anfrage, Öffnungszeiten siehe Betreiber.",
        "{t} a {p} è una delle attrazioni della zona {reg}. Visite guidate su richiesta, orari presso il gestore.",
        "{t} in {p} is one of the sights of {reg}. Guided tours on request; see the operator for opening hours.",
    ),
    (
        "{t} in {p} ({alt} m): Südtiroler Küche mit Knödeln, Schlutzkrapfen, Speck und Würstel, dazu Weine aus der Region. Im Sommer Sonnenterrasse, im Winter gemütliche Stube.",
        "{t} a {p} ({alt} m): cucina altoatesina con canederli, mezzelune, speck e würstel, accompagnati da vini della zona. D'estate terrazza soleggiata, d'inverno stube accogliente.",
        "{t} in {p} ({alt} m): South Tyrolean cooking with dumplings, Schlutzkrapfen, speck and sausages, with wines from the area. Sunny terrace in summer, cosy parlour in winter.",
    ),
    (
        "{t}: Bergstation auf {alt} m, in der Saison täglich von 8:30 bis 16:30 Uhr in Betrieb. Im Skigebiet bei {p}.",
        "{t}: stazione a monte a {alt} m, in funzione in stagione tutti i giorni dalle 8.30 alle 16.30. Nel comprensorio presso {p}.",
        "{t}: top station at {alt} m, running daily 8:30 am–4:30 pm in season. In the ski area near {p}.",
    ),
    (
        "{t} in {p}: Adresse und Öffnungszeiten siehe Kontakt. Gut erreichbar mit Bus und Bahn (Südtirol Guest Pass).",
        "{t} a {p}: indirizzo e orari vedi contatti. Facilmente raggiungibile con autobus e treno (Alto Adige Guest Pass).",
        "{t} in {p}: see contact for address and opening hours. Easy to reach by bus and train (South Tyrol Guest Pass).",
    ),
    (
        "{t} bei {p}: Freizeitspaß für Groß und Klein, geöffnet von Mai bis Oktober.",
        "{t} presso {p}: divertimento per grandi e piccini, aperto da maggio a ottobre.",
        "{t} near {p}: fun for young and old, open May to October.",
    ),
    (
        "„{t}“ startet in {p} ({alt} m): {len} km und rund {dur} Stunden im Sattel, Einkehr bei der {h}. Helmpflicht für Kinder unter 14 Jahren.",
        "«{t}» parte da {p} ({alt} m): {len} km e circa {dur} ore in sella, sosta al {h}. Casco obbligatorio per i minori di 14 anni.",
        "“{t}” starts in {p} ({alt} m): {len} km and about {dur} hours in the saddle, with a stop at the {h}. Helmets are compulsory for children under 14.",
    ),
    (
        "{t} in {p}: Verkostung von Vernatsch, Lagrein, Gewürztraminer und Weißburgunder. Führungen durch Keller und Weinberge nach Voranmeldung.",
        "{t} a {p}: degustazione di Schiava, Lagrein, Gewürztraminer e Pinot bianco. Visite a cantina e vigneti su prenotazione.",
        "{t} in {p}: tastings of Vernatsch, Lagrein, Gewürztraminer and Pinot Bianco. Cellar and vineyard tours by appointment.",
    ),
];

pub(crate) struct Kind {
    pub weight: u32,
    pub typ: &'static str,
    pub main: Tri,
    pub sub: Tri,
    pub tags: &'static [&'static str],
    /// Title templates, each with the tags that go with it.
    pub titles: &'static [(Tri, &'static [&'static str])],
    /// Optional tags, one of which is added to about a third of the documents.
    pub extra: &'static [&'static str],
    pub text: usize,
    pub sources: &'static [&'static str],
    pub activity: bool,
    pub pool: Pool,
    pub alt: (i32, i32),
    pub ld: &'static str,
}

const SUMMER: Tri = ("Sommer", "Estate", "Summer");
const WINTER: Tri = ("Winter", "Inverno", "Winter");
const CULTURE: Tri = (
    "Kultur Sehenswürdigkeiten",
    "Arte e cultura",
    "Culture & Attractions",
);
const EAT: Tri = ("Essen Trinken", "Enogastronomia", "Eating & Drinking");
const OTHER: Tri = ("Anderes", "Altro", "Other");
const NONE: &[&str] = &[];

#[rustfmt::skip]
pub(crate) const KINDS: [Kind; 27] = [
    Kind { weight: 16, typ: "Aktivitäten", main: SUMMER, sub: ("Wandern", "Escursionismo", "Hiking"),
        tags: &["activity", "summer", "hiking", "978F89296ACB4DB4B6BD1C269341802F"],
        titles: &[
            (("Wanderung zur {h}", "Escursione al {h}", "Hike to the {h}"), NONE),
            (("Rundwanderung {p} – {h}", "Giro escursionistico {p} – {h}", "Circular hike {p} – {h}"), NONE),
            (("Höhenweg von {p} zur {h}", "Sentiero d'alta quota da {p} al {h}", "High trail from {p} to the {h}"), &["alpine ridgeways"]),
            (("Almwanderung bei {p}", "Escursione alle malghe presso {p}", "Alpine pasture walk near {p}"), NONE),
            (("Waalweg {p}", "Sentiero della roggia di {p}", "Irrigation channel trail {p}"), &["waalwege", "04D1678DB11D450B86467F4E4820B55F"]),
            (("Familienwanderung zum {l}", "Passeggiata per famiglie al {l}", "Family walk to {l}"), &["2A289E6E6C56417C8C2A895CED9F07DB"]),
            (("Gipfeltour {k}", "Escursione in vetta: {k}", "Summit tour: {k}"), &["mountaineering", "06C02FECD9284E1E833A48BAF954EAC6"]),
        ],
        extra: &["themed hikes", "family holidays"], text: 0, sources: &["lts", "lts", "idm"], activity: true, pool: Pool::Any, alt: (0, 300), ld: "Jita" },
    Kind { weight: 7, typ: "Aktivitäten", main: SUMMER, sub: ("Radfahren Radtouren", "Ciclismo", "Cycling"),
        tags: &["activity", "summer", "mountain bike", "biking tours", "1B9AF4DA6E3A414798890E6723E71EC8"],
        titles: &[
            (("Mountainbiketour {p} – {h}", "Giro in mountain bike {p} – {h}", "Mountain bike tour {p} – {h}"), NONE),
            (("Bike-Trail {k}", "Trail in bici {k}", "{k} bike trail"), NONE),
            (("E-Bike-Runde um {p}", "Giro in e-bike intorno a {p}", "E-bike loop around {p}"), &["F7B3C8D0C7AE46988D55C6C66FED6C83"]),
        ],
        extra: &["B015F1EA92494EB1B6E32170269000B0"], text: 7, sources: &["lts", "idm"], activity: true, pool: Pool::Any, alt: (0, 200), ld: "Tour cun la bike" },
    Kind { weight: 2, typ: "Aktivitäten", main: SUMMER, sub: ("Rennrad", "Bici da corsa", "Road cycling"),
        tags: &["activity", "summer", "racing bike", "C5E567823C664398B76BEA3BE1DD4138"],
        titles: &[(("Rennradtour: {x}", "Giro in bici da corsa: {x}", "Road bike tour: {x}"), NONE)],
        extra: NONE, text: 7, sources: &["idm"], activity: true, pool: Pool::Any, alt: (0, 100), ld: "Tour cun la bike" },
    Kind { weight: 3, typ: "Aktivitäten", main: SUMMER, sub: ("Klettersteige", "Vie ferrate", "Via ferrata"),
        tags: &["activity", "summer", "vie ferrate", "climbing", "8DEDE9BB11C642DF98EE0C3A818AB61F"],
        titles: &[
            (("Klettersteig {k}", "Via ferrata {k}", "{k} via ferrata"), NONE),
            (("Klettersteig zur {h}", "Via ferrata al {h}", "Via ferrata to the {h}"), NONE),
        ],
        extra: NONE, text: 0, sources: &["lts"], activity: true, pool: Pool::High, alt: (600, 1400), ld: "Ferata" },
    Kind { weight: 1, typ: "Aktivitäten", main: SUMMER, sub: ("Klettern", "Arrampicata", "Climbing"),
        tags: &["activity", "summer", "climbing"],
        titles: &[(("Klettergarten {p}", "Palestra di roccia {p}", "{p} climbing crag"), NONE)],
        extra: &["mountaineering"], text: 6, sources: &["lts"], activity: true, pool: Pool::Any, alt: (100, 600), ld: "Rampeda" },
    Kind { weight: 3, typ: "Aktivitäten", main: WINTER, sub: ("Rodeln", "Slittino", "Sledging"),
        tags: &["activity", "winter", "sledging", "sledging trail", "F3B08D06569646F38462EDCA506D81D4"],
        titles: &[
            (("Rodelbahn {h}", "Pista da slittino {h}", "{h} toboggan run"), NONE),
            (("Rodelbahn {p}", "Pista da slittino {p}", "{p} toboggan run"), NONE),
        ],
        extra: &["family holidays"], text: 1, sources: &["lts", "idm"], activity: true, pool: Pool::High, alt: (200, 900), ld: "Pista da slitun" },
    Kind { weight: 2, typ: "Aktivitäten", main: WINTER, sub: ("Langlaufen", "Sci di fondo", "Cross-country skiing"),
        tags: &["activity", "winter", "crosscountry skiing", "D544A6312F8A47CF80CC4DFF8833FE50"],
        titles: &[
            (("Loipe {p}", "Pista da fondo {p}", "{p} cross-country trail"), NONE),
            (("Langlaufloipe am {l}", "Pista da fondo al {l}", "Cross-country trail at {l}"), NONE),
        ],
        extra: NONE, text: 1, sources: &["lts"], activity: true, pool: Pool::High, alt: (0, 400), ld: "Pista da fonz" },
    Kind { weight: 2, typ: "Aktivitäten", main: WINTER, sub: ("Skitouren", "Scialpinismo", "Ski touring"),
        tags: &["activity", "winter", "ski tours", "AECBF081D0154EDCB24C78A9839DA1D4"],
        titles: &[(("Skitour {k}", "Scialpinismo: {k}", "Ski tour: {k}"), NONE)],
        extra: NONE, text: 1, sources: &["lts", "idm"], activity: true, pool: Pool::High, alt: (0, 500), ld: "Tour cun i schi" },
    Kind { weight: 2, typ: "Aktivitäten", main: WINTER, sub: ("Schneeschuhwandern", "Ciaspolate", "Snowshoe hiking"),
        tags: &["activity", "winter", "snowshoe hikes", "winter hiking", "C18035E162FE42FABF0A2627A18F0CAC"],
        titles: &[
            (("Schneeschuhwanderung zur {h}", "Ciaspolata al {h}", "Snowshoe hike to the {h}"), NONE),
            (("Winterwanderung {p}", "Passeggiata invernale {p}", "Winter walk {p}"), &["2B0E6F774C284C4B8B51B666AC36E579"]),
        ],
        extra: NONE, text: 1, sources: &["lts"], activity: true, pool: Pool::High, alt: (0, 400), ld: "Jita d'inviern" },
    Kind { weight: 4, typ: "Aufstiegsanlagen", main: OTHER, sub: ("Aufstiegsanlagen", "Impianti di risalita", "Lifts"),
        tags: &["lifts", "winter", "E23AA37B2AE3477F96D1C0782195AFDF"],
        titles: &[
            (("Sessellift {p}", "Seggiovia {p}", "{p} chairlift"), &["chairlift"]),
            (("Kabinenbahn {k}", "Cabinovia {k}", "{k} gondola"), &["ropeway"]),
            (("Seilbahn {p}", "Funivia {p}", "{p} cable car"), &["ropeway"]),
            (("Skilift {p}", "Sciovia {p}", "{p} ski lift"), &["ski lift"]),
        ],
        extra: NONE, text: 4, sources: &["dss", "lts"], activity: false, pool: Pool::High, alt: (400, 1300), ld: "Implant" },
    Kind { weight: 3, typ: "Aktivitäten", main: WINTER, sub: ("Ski Alpin", "Sci alpino", "Alpine skiing"),
        tags: &["activity", "winter", "alpine skiing", "slope", "EB5D6F10C0CB4797A2A04818088CD6AB"],
        titles: &[(("Piste {k} Nr. {num}", "Pista {k} n. {num}", "Slope {k} no. {num}"), NONE)],
        extra: &["snow parks"], text: 4, sources: &["dss"], activity: true, pool: Pool::High, alt: (300, 1200), ld: "Pista" },
    Kind { weight: 4, typ: "Kultur Sehenswürdigkeiten", main: CULTURE, sub: ("Museen", "Musei", "Museums"),
        tags: &["poi", "culture attractions", "museums"],
        titles: &[
            (("Museum {p}", "Museo di {p}", "{p} Museum"), &["museums culture"]),
            (("Heimatmuseum {p}", "Museo etnografico di {p}", "{p} local history museum"), &["museums culture"]),
            (("Bergbaumuseum {p}", "Museo delle miniere di {p}", "{p} mining museum"), &["mines"]),
            (("Naturparkhaus {p}", "Centro visite del parco naturale {p}", "{p} nature park visitor centre"), &["museums nature", "nature park visitors centres"]),
            (("Kunstgalerie {f}", "Galleria d'arte {f}", "{f} art gallery"), &["museums art"]),
            (("Weinmuseum {p}", "Museo del vino di {p}", "{p} wine museum"), &["museums culture"]),
        ],
        extra: &["architecture"], text: 2, sources: &["siag", "idm"], activity: false, pool: Pool::Any, alt: (0, 100), ld: "Museum" },
    Kind { weight: 3, typ: "Kultur Sehenswürdigkeiten", main: CULTURE, sub: ("Kirchen Klöster", "Chiese e abbazie", "Churches & Monasteries"),
        tags: &["poi", "culture attractions", "churches monasteries"],
        titles: &[
            (("Pfarrkirche {s} in {p}", "Chiesa parrocchiale di {s} a {p}", "Parish church of {s}, {p}"), NONE),
            (("Kapelle {s} bei {p}", "Cappella di {s} presso {p}", "{s} chapel near {p}"), NONE),
            (("Wallfahrtskirche {s}", "Santuario di {s}", "{s} pilgrimage church"), NONE),
        ],
        extra: &["architecture"], text: 2, sources: &["idm"], activity: false, pool: Pool::Any, alt: (0, 300), ld: "Dlieja" },
    Kind { weight: 2, typ: "Kultur Sehenswürdigkeiten", main: CULTURE, sub: ("Burgen Schlösser", "Castelli", "Castles"),
        tags: &["poi", "culture attractions", "forts castles"],
        titles: &[
            (("{c}", "{c}", "{c}"), NONE),
            (("Burgruine bei {p}", "Rovine del castello presso {p}", "Castle ruins near {p}"), NONE),
            (("Ansitz {f} in {p}", "Residenza {f} a {p}", "{f} manor house, {p}"), NONE),
        ],
        extra: NONE, text: 2, sources: &["idm", "lts"], activity: false, pool: Pool::Any, alt: (0, 400), ld: "Ciastel" },
    Kind { weight: 2, typ: "Kultur Sehenswürdigkeiten", main: CULTURE, sub: ("Sehenswerte Plätze", "Luoghi da vedere", "Places to See"),
        tags: &["poi", "culture attractions", "places to see", "viewpoints"],
        titles: &[
            (("Aussichtspunkt {k}", "Punto panoramico {k}", "{k} viewpoint"), NONE),
            (("Aussichtsplattform über {p}", "Piattaforma panoramica sopra {p}", "Viewing platform above {p}"), NONE),
        ],
        extra: NONE, text: 2, sources: &["idm"], activity: false, pool: Pool::High, alt: (300, 1200), ld: "Punt panoramich" },
    Kind { weight: 7, typ: "Essen Trinken", main: EAT, sub: ("Schutzhütten", "Rifugi", "Mountain huts"),
        tags: &["gastronomy", "eating drinking", "mountain huts", "2328C37167BBBC5776831B8A262A6C36"],
        titles: &[
            (("{h}", "{h}", "{h}"), NONE),
            (("{f}hütte", "Rifugio {f}", "{f} hut"), NONE),
            (("Jausenstation {f}hütte bei {p}", "Rifugio {f} presso {p}", "{f} hut near {p}"), NONE),
        ],
        extra: &["summer", "winter"], text: 3, sources: &["lts", "idm"], activity: false, pool: Pool::High, alt: (500, 1500), ld: "Ütia" },
    Kind { weight: 2, typ: "Essen Trinken", main: EAT, sub: ("Skihütten", "Rifugi invernali", "Ski huts"),
        tags: &["gastronomy", "eating drinking", "ski huts", "winter", "B916489A77C94D8D92B03184EE587A31"],
        titles: &[
            (("Skihütte {f}", "Baita {f}", "{f} ski hut"), NONE),
            (("{n} Skihütte – {k}", "Baita {n} – {k}", "{n} ski hut – {k}"), NONE),
        ],
        extra: &["apres ski"], text: 3, sources: &["lts"], activity: false, pool: Pool::High, alt: (500, 1300), ld: "Ütia" },
    Kind { weight: 3, typ: "Essen Trinken", main: EAT, sub: ("Almen", "Malghe", "Alpine farms"),
        tags: &["gastronomy", "eating drinking", "alpine farms", "8025DB5CFCBA4FF281DDDE1F2B1D19A2"],
        titles: &[
            (("{f}alm", "Malga {f}", "{f} alpine hut"), NONE),
            (("{f}alm bei {p}", "Malga {f} presso {p}", "{f} alpine pasture hut near {p}"), NONE),
        ],
        extra: &["mountain huts alpine farms"], text: 3, sources: &["lts"], activity: false, pool: Pool::High, alt: (400, 1200), ld: "Malga" },
    Kind { weight: 8, typ: "Essen Trinken", main: EAT, sub: ("Restaurants Gasthäuser", "Ristoranti e trattorie", "Restaurants & Taverns"),
        tags: &["gastronomy", "eating drinking"],
        titles: &[
            (("Restaurant {n}", "Ristorante {n}", "{n} Restaurant"), &["restaurants", "B0BDC4C2C5938D9B734D97B09C8A47A4"]),
            (("Gasthaus {n}", "Trattoria {n}", "{n} Inn"), &["taverns inns", "9B158D17F03509C46037C3C7B23F2FE4"]),
            (("Pizzeria {n}", "Pizzeria {n}", "Pizzeria {n}"), &["pizzerias", "AC56B3717C3152A428A1D338A638C570"]),
            (("Würstelstand {p}", "Chiosco dei würstel {p}", "{p} sausage stand"), &["restaurants"]),
            (("Restaurant {n} – {p}", "Ristorante {n} – {p}", "{n} Restaurant – {p}"), &["restaurants", "B0BDC4C2C5938D9B734D97B09C8A47A4"]),
        ],
        extra: NONE, text: 3, sources: &["lts", "idm"], activity: false, pool: Pool::Any, alt: (0, 150), ld: "Ristorant" },
    Kind { weight: 3, typ: "Essen Trinken", main: EAT, sub: ("Bars Cafés", "Bar e caffè", "Bars & Cafés"),
        tags: &["gastronomy", "eating drinking", "barscafesbistros", "9095FC003A3E2F393D63A54682359B37"],
        titles: &[
            (("Café {n}", "Caffè {n}", "Café {n}"), NONE),
            (("Bar {n} {p}", "Bar {n} {p}", "Bar {n} {p}"), NONE),
            (("Konditorei {f}", "Pasticceria {f}", "{f} pastry shop"), NONE),
        ],
        extra: NONE, text: 3, sources: &["lts"], activity: false, pool: Pool::Any, alt: (0, 100), ld: "Bar" },
    Kind { weight: 3, typ: "Essen Trinken", main: EAT, sub: ("Weinkellereien", "Cantine", "Wineries"),
        tags: &["gastronomy", "eating drinking", "wineries", "6A1EA69EC83F4E9CBDED5317D18B4BFB"],
        titles: &[
            (("Kellerei {p}", "Cantina {p}", "{p} winery"), NONE),
            (("Weingut {f}hof", "Tenuta {f}hof", "{f}hof wine estate"), NONE),
            (("Weinkellerei {f}", "Cantina vinicola {f}", "{f} winery"), NONE),
        ],
        extra: NONE, text: 8, sources: &["suedtirolwein"], activity: false, pool: Pool::Wine, alt: (0, 250), ld: "Canting" },
    Kind { weight: 2, typ: "Essen Trinken", main: EAT, sub: ("Buschenschänke", "Osterie contadine", "Farm taverns"),
        tags: &["gastronomy", "eating drinking", "restaurant in the farm", "farmhouse tavern", "700B02F1BE96B01C34CCF7A637DB3054"],
        titles: &[
            (("Buschenschank {f}hof", "Agriturismo {f}hof", "{f}hof farm tavern"), NONE),
            (("Hofschank {f}", "Osteria contadina {f}", "{f} farm inn"), NONE),
        ],
        extra: NONE, text: 3, sources: &["lts"], activity: false, pool: Pool::Any, alt: (50, 400), ld: "Mas" },
    Kind { weight: 2, typ: "Wellness Entspannung", main: SUMMER, sub: ("Badeseen Freibäder", "Laghi balneabili e piscine", "Bathing lakes & pools"),
        tags: &["poi", "summer", "wellness relaxation"],
        titles: &[
            (("Freibad {p}", "Piscina all'aperto {p}", "{p} outdoor pool"), &["swimming pools"]),
            (("Strandbad am {l}", "Lido al {l}", "{l} lido"), &["bathing lakes"]),
        ],
        extra: NONE, text: 6, sources: &["lts"], activity: false, pool: Pool::Any, alt: (0, 100), ld: "Lech" },
    Kind { weight: 2, typ: "Aktivitäten", main: SUMMER, sub: ("Freizeit Erlebnis", "Tempo libero", "Leisure & Experience"),
        tags: &["poi", "summer"],
        titles: &[
            (("Hochseilgarten {p}", "Parco avventura {p}", "{p} high ropes course"), &["highropes courses", "family holidays"]),
            (("Reitstall {f}hof", "Maneggio {f}hof", "{f}hof riding stable"), &["horseback riding"]),
            (("Golfclub {p}", "Golf club {p}", "{p} golf club"), &["golf"]),
            (("Paragleiten: {k}", "Parapendio: {k}", "Paragliding: {k}"), &["paragliding"]),
        ],
        extra: NONE, text: 6, sources: &["lts", "idm"], activity: false, pool: Pool::Any, alt: (0, 300), ld: "Tëmp lëdi" },
    Kind { weight: 3, typ: "Geschäfte und Dienstleister", main: ("Geschäfte und Dienstleister", "Negozi e servizi", "Shops and service providers"), sub: ("Geschäfte", "Negozi", "Shops"),
        tags: &["poi", "shops and service providers"],
        titles: &[
            (("Bäckerei {f}", "Panificio {f}", "{f} bakery"), NONE),
            (("Metzgerei {f} – Speck & Würstel", "Macelleria {f} – speck e würstel", "{f} butcher – speck & sausages"), NONE),
            (("Sportgeschäft {p}", "Negozio sportivo {p}", "{p} sports shop"), NONE),
            (("Bauernladen {f}hof", "Negozio contadino {f}hof", "{f}hof farm shop"), NONE),
            (("Skiverleih {p}", "Noleggio sci {p}", "{p} ski rental"), &["ski rental", "winter"]),
        ],
        extra: NONE, text: 5, sources: &["lts"], activity: false, pool: Pool::Any, alt: (0, 50), ld: "Butëga" },
    Kind { weight: 2, typ: "Mobilität", main: ("Mobilität", "Mobilità", "Mobility"), sub: ("Parkplätze", "Parcheggi", "Parking"),
        tags: &["poi", "mobility", "parking areas"],
        titles: &[
            (("Parkplatz {p} Zentrum", "Parcheggio {p} centro", "{p} central car park"), NONE),
            (("Parkplatz Talstation {k}", "Parcheggio stazione a valle {k}", "{k} valley station car park"), NONE),
        ],
        extra: NONE, text: 5, sources: &["lts"], activity: false, pool: Pool::Any, alt: (0, 80), ld: "Parcheggio" },
    Kind { weight: 1, typ: "Wellness Entspannung", main: ("Wellness Entspannung", "Benessere e relax", "Wellness & Relaxation"), sub: ("Therme", "Terme", "Spa"),
        tags: &["poi", "wellness relaxation"],
        titles: &[
            (("Wellness & Spa {n}", "Wellness & Spa {n}", "{n} wellness & spa"), NONE),
            (("Therme {p}", "Terme di {p}", "{p} thermal baths"), NONE),
        ],
        extra: NONE, text: 6, sources: &["lts"], activity: false, pool: Pool::Any, alt: (0, 100), ld: "Wellness" },
];
