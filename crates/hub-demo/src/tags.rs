//! The tag vocabulary (a selection of real Open Data Hub tag ids with their names), the
//! Tag and Source documents, and the tagging fields other documents carry.

use rand::Rng;
use serde_json::{json, Value};

use crate::util::{self, head, put, Doc, Head, Tri};

/// id, de, it, en, source, Types, ValidForEntity, MainEntity, standardised Hub tag id ("" = none).
pub(crate) type TagDef = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static str,
    &'static str,
);

const OC: &[&str] = &["odhcategory"];
const OC_LC: &[&str] = &["odhcategory", "ltscategory"];
const V_POI: &[&str] = &["hubactivitypoi", "smgpoi"];
const V_SUMMER: &[&str] = &["summer", "hubactivitypoi", "smgpoi"];
const V_WINTER: &[&str] = &["winter", "hubactivitypoi", "smgpoi"];
const V_OTHER: &[&str] = &["other", "hubactivitypoi", "smgpoi"];
const V_CULTURE: &[&str] = &["culture attractions", "hubactivitypoi", "smgpoi"];
const V_EAT: &[&str] = &["eating drinking", "hubactivitypoi", "smgpoi"];
const ACT: &[&str] = &["tagsactivity"];
const V_HAP: &[&str] = &["hubactivitypoi"];
const GASTRO: &[&str] = &["gastronomycategory", "categorycodes"];
const V_GASTRO: &[&str] = &["hubactivitypoi", "gastronomy"];
const EVCAT: &[&str] = &["eventcategory", "eventtopic"];
const V_EVENT: &[&str] = &["event"];
const V_NOI: &[&str] = &["event", "eventshort"];
const V_ACCO: &[&str] = &["accommodation"];
const ACCO_TYPE: &[&str] = &["accommodationtypes"];
const ACCO_CAT: &[&str] = &["accommodationcategory"];
const MEAL: &[&str] = &["accommodationmealplans"];
const COMMON: &[&str] = &["common"];

#[rustfmt::skip]
pub(crate) const TAGS: &[TagDef] = &[
    ("activity", "Aktivität", "Attivitá", "Activity", "idm", OC, &["basearticle", "hubactivitypoi", "smgpoi"], "smgpoi", "activity"),
    ("poi", "Poi", "Poi", "Poi", "idm", OC, V_POI, "smgpoi", "poi"),
    ("summer", "Sommer", "Estate", "Summer", "idm", OC, &["hubactivitypoi", "smgpoi", "activity", "summer", "winter"], "smgpoi", "sommer"),
    ("winter", "Winter", "Inverno", "Winter", "idm", OC, V_POI, "smgpoi", "winter"),
    ("hiking", "Wanderung", "Escursioni", "Hiking", "idm", OC_LC, V_SUMMER, "smgpoi", "wandern"),
    ("mountain bike", "Mountainbike", "Mountain bike", "Mountain bike", "idm", OC, V_SUMMER, "smgpoi", "mountainbike"),
    ("biking tours", "Radtouren", "Itinerari ciclistici", "Biking Tours", "idm", OC_LC, V_SUMMER, "smgpoi", "radtouren"),
    ("vie ferrate", "Klettersteige", "Vie Ferrate", "Vie Ferrate", "idm", OC_LC, V_SUMMER, "smgpoi", "klettersteige"),
    ("climbing", "Klettern", "Arrampicate", "Climbing", "idm", OC, V_SUMMER, "smgpoi", "klettern"),
    ("sledging", "Rodeln", "Slittino", "Sledging", "idm", OC_LC, &["winter", "summer", "hubactivitypoi", "smgpoi", "poi"], "smgpoi", "rodeln"),
    ("sledging trail", "Rodelbahn", "Piste per slittino", "Sledging Trail", "idm", OC, V_WINTER, "smgpoi", "rodelbahn"),
    ("crosscountry skiing", "Langlaufen", "Sci di fondo", "Cross-country skiing", "idm", OC, V_WINTER, "smgpoi", "langlaufen"),
    ("alpine skiing", "Ski Alpin", "sci alpino", "Alpine skiing", "idm", OC, V_WINTER, "smgpoi", "ski alpin"),
    ("ski tours", "Skitouren", "Circuiti sciistici", "Ski Tours", "idm", OC_LC, V_WINTER, "smgpoi", "skitouren"),
    ("snowshoe hikes", "Schneeschuhwandern", "Ciaspolate", "Snowshoe Hikes", "idm", &["ltscategory", "odhcategory"], &["winter", "smgpoi"], "", "schneeschuhwandern"),
    ("winter hiking", "Winterwandern", "Escursioni invernali", "Winter Hiking", "idm", OC, V_WINTER, "smgpoi", "winterwandern"),
    ("themed hikes", "Themenwanderungen", "Percorsi tematici", "Themed Hikes", "idm", OC_LC, V_SUMMER, "smgpoi", "themenwanderungen"),
    ("alpine ridgeways", "Höhenwege", "Escursioni in alta quota", "Alpine Ridgeways", "idm", OC, V_SUMMER, "smgpoi", "höhenwege"),
    ("running fitness", "Laufen & Fitness", "Corsa & Fitness", "Running & Fitness", "idm", OC, V_SUMMER, "smgpoi", "laufen fitness"),
    ("horseback riding", "Reiten", "Equitazione", "Horseback Riding", "idm", OC, &["summer", "winter", "hubactivitypoi", "smgpoi"], "smgpoi", "reiten"),
    ("racing bike", "Rennrad", "Ciclismo su strada", "Racing Bike", "idm", OC, V_SUMMER, "smgpoi", "rennrad"),
    ("paragliding", "Paragleiten", "Parapendio", "Paragliding", "idm", OC, V_SUMMER, "smgpoi", "paragleiten"),
    ("golf", "Golf", "Golf", "Golf", "idm", OC, V_SUMMER, "smgpoi", "golf"),
    ("waalwege", "Waalwege", "Passegiate lungo i sentieri delle rogge “Waalwege”", "Waalwege", "idm", OC, V_SUMMER, "smgpoi", "waalwege"),
    ("mountaineering", "Bergsteigen", "Alpinismo", "Mountaineering", "idm", OC, V_SUMMER, "smgpoi", "bergsteigen"),
    ("lifts", "Aufstiegsanlagen", "Impianti di risalita", "Lifts", "idm", OC_LC, V_OTHER, "smgpoi", "aufstiegsanlagen"),
    ("ropeway", "Seilbahn", "Funivia", "Ropeway", "idm", OC, V_OTHER, "smgpoi", "seilbahn"),
    ("chairlift", "Sessellift", "Seggiovia", "Chairlift", "idm", OC, V_OTHER, "smgpoi", "sessellift"),
    ("ski lift", "Skilift", "Sciovia", "Ski lift", "idm", OC, V_OTHER, "smgpoi", "skilift"),
    ("slope", "Piste", "Pista", "Slope", "idm", OC, V_POI, "smgpoi", "piste"),
    ("ski schools", "Skischulen", "Scuole di sci", "Ski schools", "idm", OC_LC, V_WINTER, "smgpoi", "skischulen"),
    ("ski rental", "Skiverleih", "Noleggio attrezzatura", "Ski Rental", "idm", OC, &["winter", "hubactivitypoi", "smgpoi", "summer"], "smgpoi", "skiverleih"),
    ("snow parks", "Snowparks", "Snowpark", "Snow parks", "idm", OC, V_WINTER, "smgpoi", "snowparks"),
    ("culture attractions", "Kultur & Sehenswürdigkeiten", "Arte e cultura", "Culture & Attractions", "idm", OC, V_POI, "smgpoi", "kultur sehenswürdigkeiten"),
    ("museums", "Museen", "Musei", "Museums", "idm", OC, V_CULTURE, "smgpoi", "museen"),
    ("museums art", "Museen Kunst", "Musei arte", "Museums Art", "idm", OC, V_CULTURE, "smgpoi", "museen kunst"),
    ("museums nature", "Museen Natur", "Musei natura", "Museums Nature", "idm", OC, V_CULTURE, "smgpoi", "museen natur"),
    ("museums culture", "Museen Kultur", "Musei cultura", "Museums Culture", "idm", OC, V_CULTURE, "smgpoi", "museen kultur"),
    ("churches monasteries", "Kirchen & Klöster", "Chiese e abbazie", "Churches & Monasteries", "idm", OC, V_CULTURE, "smgpoi", "kirchen klöster"),
    ("forts castles", "Burgen & Schlösser", "Fortezze e castelli", "Forts & Castles", "idm", OC, &["culture attractions", "accommodation", "gastronomy", "hubactivitypoi", "smgpoi", "event", "activity"], "smgpoi", "burgen schlösser"),
    ("places to see", "Sehenswerte Plätze", "Luoghi da vedere", "Places to See", "idm", OC, V_CULTURE, "smgpoi", "sehenswerte plätze"),
    ("mines", "Bergwerke", "Miniere", "Mines", "idm", OC, V_CULTURE, "smgpoi", "bergwerke"),
    ("nature park visitors centres", "Naturparkhäuser", "Centri visite parchi naturali", "Nature Park Visitors’ Centres", "idm", OC, V_CULTURE, "smgpoi", "naturparkhäuser"),
    ("wellness relaxation", "Wellness & Entspannung", "Benessere e relax", "Wellness & Relaxation", "idm", OC, &["wellness relaxation", "summer", "hubactivitypoi", "smgpoi"], "smgpoi", "wellness entspannung"),
    ("swimming pools", "Schwimmbäder", "Piscine", "Swimming Pools", "idm", OC, &["summer", "wellness relaxation", "hubactivitypoi", "smgpoi"], "smgpoi", "schwimmbäder"),
    ("bathing lakes", "Badeseen", "Laghi balneabili", "Bathing Lakes", "idm", OC_LC, V_SUMMER, "smgpoi", "badeseen"),
    ("highropes courses", "Hochseilgärten", "Percorsi sospesi", "High-Ropes Courses", "idm", OC, V_SUMMER, "smgpoi", "hochseilgärten"),
    ("shops and service providers", "Geschäfte und Dienstleister", "Negozi e servizi", "Shops and service providers", "idm", OC, V_POI, "smgpoi", "geschäfte und dienstleister"),
    ("mobility", "Mobilität", "Mobilitá", "Mobility", "idm", OC, V_POI, "smgpoi", "mobilität"),
    ("parking areas", "Parkplätze", "Parcheggi", "Parking areas", "lts", &["ltscategory"], &["mobility", "hubactivitypoi", "smgpoi"], "smgpoi", "parkplätze"),
    ("viewpoints", "Aussichtspunkte", "Punto panoramico", "Viewpoints", "lts", &["ltscategory", "idmredactionalcategory"], V_CULTURE, "smgpoi", "aussichtspunkte"),
    ("eating drinking", "Essen & Trinken", "Enogastronomia", "Eating & Drinking", "idm", OC, V_POI, "smgpoi", "essen trinken"),
    ("gastronomy", "Restaurant", "Gastronomia", "Gastronomy", "idm", OC, &["basearticle", "hubactivitypoi", "smgpoi"], "smgpoi", "gastronomy"),
    ("restaurants", "Restaurants", "Ristoranti", "Restaurants", "idm", OC, V_EAT, "smgpoi", "restaurants"),
    ("mountain huts", "Schutzhütten", "Rifugi", "Mountain Huts", "idm", OC, V_EAT, "smgpoi", "schutzhütten"),
    ("ski huts", "Skihütten", "Rifugi invernali", "Ski Huts", "idm", OC, V_EAT, "smgpoi", "skihütten"),
    ("alpine farms", "Almen", "Malghe", "Alpine Farms", "idm", OC, V_EAT, "smgpoi", "almen"),
    ("wineries", "Weinkellereien", "Cantine", "Wineries", "idm", OC, V_EAT, "smgpoi", "weinkellereien"),
    ("pizzerias", "Pizzerias", "Pizzerie", "Pizzerias", "idm", OC, V_EAT, "smgpoi", "pizzerias"),
    ("barscafesbistros", "Bars/Cafés/Bistros", "Bar/Caffé/Bistrot", "Bars/Cafés/Bistros", "idm", OC, V_EAT, "smgpoi", "bars cafes bistros"),
    ("restaurant in the farm", "Buschenschank", "Locale agrituristico", "Restaurant in the farm", "idm", OC, V_EAT, "smgpoi", "buschenschank"),
    ("farmhouse tavern", "Hofschank", "Osteria contadina", "Farmhouse tavern", "idm", OC, V_EAT, "smgpoi", "hofschank"),
    ("taverns inns", "Gasthäuser & Gasthöfe", "Trattorie", "Taverns & Inns", "idm", OC, V_EAT, "smgpoi", "gasthäuser gasthöfe"),
    ("apres ski", "Apres Ski", "Apres Ski", "Apres Ski", "idm", OC, V_EAT, "smgpoi", "apres ski"),
    ("mountain huts alpine farms", "Hütten & Almen", "Malghe e rifugi", "Mountain Huts & Alpine Farms", "idm", OC, V_EAT, "smgpoi", "hütten almen"),
    ("architecture", "Architektur", "Architettura", "Architecture", "idm", OC, &["culture attractions", "book", "article", "hubactivitypoi", "smgpoi"], "smgpoi", "architektur"),
    ("hiking guides", "Wanderführer", "Guida escursionistica", "Hiking guides", "idm", OC_LC, &["article", "other", "hubactivitypoi", "smgpoi", "summer"], "smgpoi", "wanderführer"),
    ("family holidays", "Familienurlaub", "Vacanze in famiglia", "Family Holidays", "idm", OC, V_POI, "smgpoi", "familienurlaub"),
    ("ski areas", "Skigebiete", "Comprensori sciistici", "Ski Areas", "idm", OC, &["winter", "common", "hubactivitypoi", "smgpoi"], "smgpoi", "skigebiete"),
    ("region", "Region", "Regione", "Region", "idm", OC, COMMON, "common", ""),
    ("ski region", "Skiregion", "regione sciistica", "Ski Region", "idm", OC, COMMON, "common", ""),
    ("tourismassociation", "Tourismusverein", "associazione turistica", "Tourismassociation", "idm", OC, COMMON, "common", ""),
    ("978F89296ACB4DB4B6BD1C269341802F", "Wandern", "Escursionismo", "Hiking", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("1B9AF4DA6E3A414798890E6723E71EC8", "Mountainbikes", "Mountain bike", "Mountain bikes", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("8DEDE9BB11C642DF98EE0C3A818AB61F", "Klettersteige", "Vie ferrate", "Via ferrata", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("F3B08D06569646F38462EDCA506D81D4", "Rodeln", "Piste da slittino", "Sledging", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("AECBF081D0154EDCB24C78A9839DA1D4", "Skitouren", "Escursioni sciistiche", "Ski tours", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("C18035E162FE42FABF0A2627A18F0CAC", "Schneeschuhwanderungen", "Ciaspolate", "Snowshoe hikes", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("D544A6312F8A47CF80CC4DFF8833FE50", "Loipen", "Piste da fondo", "Cross-country ski-track", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("B015F1EA92494EB1B6E32170269000B0", "Radtouren", "Giri in bicicletta", "Bike trails", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("2A289E6E6C56417C8C2A895CED9F07DB", "Familienwanderungen", "Escursioni per famiglie", "Family hikings", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("06C02FECD9284E1E833A48BAF954EAC6", "Bergtouren", "Escursioni in montagna", "Mountain tours", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("F7B3C8D0C7AE46988D55C6C66FED6C83", "E-Bikes", "E-Bike", "E-Bikes", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("04D1678DB11D450B86467F4E4820B55F", "Waalweg", "Sentieri di roggia", "Waalweg paths", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("EB5D6F10C0CB4797A2A04818088CD6AB", "Pisten", "Piste", "Slopes", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("E23AA37B2AE3477F96D1C0782195AFDF", "Aufstiegsanlagen", "Impianti di risalita", "Lifts", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("2B0E6F774C284C4B8B51B666AC36E579", "Winterwanderungen", "Escursioni invernali", "Winter hikes", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("C5E567823C664398B76BEA3BE1DD4138", "Rennräder", "Biciclette da corsa", "Racing bicycles", "lts", ACT, V_HAP, "hubactivitypoi", ""),
    ("B0BDC4C2C5938D9B734D97B09C8A47A4", "Restaurant", "Ristorante", "Restaurant", "lts", GASTRO, V_GASTRO, "hubactivitypoi", ""),
    ("2328C37167BBBC5776831B8A262A6C36", "Schutzhütte", "Rifugio", "Mountain refuge", "lts", GASTRO, V_GASTRO, "hubactivitypoi", ""),
    ("B916489A77C94D8D92B03184EE587A31", "Skihütte", "Baita su pista da sci", "Ski hut", "lts", GASTRO, V_GASTRO, "hubactivitypoi", ""),
    ("8025DB5CFCBA4FF281DDDE1F2B1D19A2", "Alm", "Malga", "Alpine hut", "lts", GASTRO, V_GASTRO, "hubactivitypoi", ""),
    ("AC56B3717C3152A428A1D338A638C570", "Pizzeria", "Pizzeria", "Pizzeria", "lts", GASTRO, V_GASTRO, "hubactivitypoi", ""),
    ("9095FC003A3E2F393D63A54682359B37", "Bar / Café / Bistro", "Bar / Café / Bistro", "Bar / Café / Bistro", "lts", GASTRO, V_GASTRO, "hubactivitypoi", ""),
    ("6A1EA69EC83F4E9CBDED5317D18B4BFB", "Weingut", "Vigneto", "Winery", "lts", GASTRO, V_GASTRO, "hubactivitypoi", ""),
    ("700B02F1BE96B01C34CCF7A637DB3054", "Buschenschank", "Locale agrituristico", "Restaurant in the farm", "lts", GASTRO, V_GASTRO, "hubactivitypoi", ""),
    ("9B158D17F03509C46037C3C7B23F2FE4", "Gasthaus", "Trattoria", "Tavern", "lts", GASTRO, V_GASTRO, "hubactivitypoi", ""),
    ("D98B49DF24C342D09A8161836435CF86", "Familie", "Famiglie", "Family", "lts", EVCAT, V_EVENT, "event", ""),
    ("162C0067811B477DA725D2F5F2D98398", "Sport", "Sport", "Sport", "lts", EVCAT, V_EVENT, "event", ""),
    ("252200A028C8449D9A6205369A6D0D36", "Gastronomie/Typische Produkte", "Enogastronomia/prodotti", "Gastronomy/regional products", "lts", EVCAT, V_EVENT, "event", ""),
    ("33BDC54BD39946F4852B3394B00610AE", "Handwerk/Brauchtum", "Artigianato/tradizioni", "Handicrafts/customs", "lts", EVCAT, V_EVENT, "event", ""),
    ("9C3449EE278C4D94AA5A7C286729DEA0", "Volksfeste/Festivals", "Sagre/feste", "Folk festivals/festivals", "lts", EVCAT, V_EVENT, "event", ""),
    ("0D25868CC23242D6AC97AEB2973CB3D6", "Tagungen/Vorträge", "Convegni/conferenze", "Meetings/lectures", "lts", EVCAT, V_EVENT, "event", ""),
    ("767F6F43FC394CE9A3C8A9725C6FF134", "Kurse/Bildung", "Corsi/lezioni", "Courses/education", "lts", EVCAT, V_EVENT, "event", ""),
    ("2D54FAB93F3741C7A81107B298D8FA2D", "Verkostung", "Degustazione", "Tasting", "lts", EVCAT, V_EVENT, "event", ""),
    ("4C4961D9FC5B48EEB73067BEB9D4402A", "Messen/Märkte", "Fiere/mercati", "Fairs/markets", "lts", EVCAT, V_EVENT, "event", ""),
    ("6884FE362C88434B9F49725E3328112B", "Theater/Film/Vorführungen", "Teatro/film/spettacoli", "Theater/Film/Screenings", "lts", EVCAT, V_EVENT, "event", ""),
    ("7E048074BA004EC58E29E330A9AA476B", "Musik/Tanz", "Musica/danza", "Music/dance", "lts", EVCAT, V_EVENT, "event", ""),
    ("ACE8B613F2074A7BB59C0B1DD40A43CD", "Wanderungen/Ausflüge", "Gite/escursioni", "Hikes/trips", "lts", EVCAT, V_EVENT, "event", ""),
    ("B5467FEFE5C74FA5AD32B83793A76165", "Führungen/Besichtigungen", "Visite guidate/visite senza guida", "Guided tours/unguided tours", "lts", EVCAT, V_EVENT, "event", ""),
    ("C72CE969B98947FABC99CBC7B033F28E", "Ausstellungen/Kunst", "Mostre/arte", "Exhibitions/art", "lts", EVCAT, V_EVENT, "event", ""),
    ("61EBFB23AE5C464FB3FC995F364A8F96", "Green Event", "Green Event", "Green Event", "lts", &["eventtag"], V_EVENT, "event", ""),
    ("3C165EA886414DB7ABF24CB440516077", "Dolomiten: UNESCO-Welterbe", "Dolomiti, Patrimonio Mondiale UNESCO", "The Dolomites: UNESCO World Heritage", "lts", &["eventtag"], V_EVENT, "event", ""),
    ("4650BDEF28D545CE8AB37138E3C45B80", "Leistung", "Servizio", "Service", "lts", &["eventclassification"], V_EVENT, "event", ""),
    ("D8F5FF743D5741D1BF1F5D61671F552B", "Genehmigung", "Permesso", "Approval", "lts", &["eventclassification"], V_EVENT, "event", ""),
    ("noi", "NOI", "NOI", "NOI", "noi", &["eventlocation"], V_NOI, "event", ""),
    ("ec", "Eurac", "Eurac", "Eurac", "noi", &["eventlocation"], V_NOI, "event", ""),
    ("noibruneck", "NOI Bruneck", "NOI Brunico", "NOI Bruneck", "noi", &["eventlocation"], V_NOI, "event", ""),
    ("digital", "Digital", "Digital", "Digital", "noi", &["technologyfields"], V_NOI, "event", ""),
    ("green", "Green", "Green", "Green", "noi", &["technologyfields"], V_NOI, "event", ""),
    ("food", "Food & Health", "Food & Health", "Food & Health", "noi", &["technologyfields"], V_NOI, "event", ""),
    ("automotiveautomation", "Automotive / Automation", "Automotive / Automation", "Automotive / Automation", "noi", &["technologyfields"], V_NOI, "event", ""),
    ("startups", "Start-up", "Start-up", "Startups", "noi", &["customtagging"], V_NOI, "event", ""),
    ("researchers", "Forscher", "Per chi fa ricerca", "Researchers", "noi", &["customtagging"], V_NOI, "event", ""),
    ("companies", "Unternehmen", "Aziende", "Companies", "noi", &["customtagging"], V_NOI, "event", ""),
    ("public", "Public", "Public", "Public", "noi", &["customtagging"], V_NOI, "event", ""),
    ("opendatahub", "Open Data Hub", "Open Data Hub", "Open Data Hub", "noi", &["customtagging"], V_NOI, "event", ""),
    ("52281FAE51CA11D18F1400A02427D15E", "Hotel", "hotel", "hotel", "lts", ACCO_TYPE, V_ACCO, "accommodation", ""),
    ("52281FBA51CA11D18F1400A02427D15E", "Pension", "pensione", "Guest house", "lts", ACCO_TYPE, V_ACCO, "accommodation", ""),
    ("52281FB951CA11D18F1400A02427D15E", "Gasthof", "albergo", "guest house", "lts", ACCO_TYPE, V_ACCO, "accommodation", ""),
    ("52281FBB51CA11D18F1400A02427D15E", "Garni", "garni", "B&B hotel", "lts", ACCO_TYPE, V_ACCO, "accommodation", ""),
    ("5228203A51CA11D18F1400A02427D15E", "B&B and Appartments (priv.)", "B&B and Appartments (priv.)", "B&B and Appartments (priv.)", "lts", ACCO_TYPE, V_ACCO, "accommodation", ""),
    ("67979F0462FF11D18F2100A02427D15E", "Residence", "residence", "Apartment hotel", "lts", ACCO_TYPE, V_ACCO, "accommodation", ""),
    ("5228203E51CA11D18F1400A02427D15E", "Urlaub auf dem Bauernhof", "agriturismo", "Farm holidays", "lts", ACCO_TYPE, V_ACCO, "accommodation", ""),
    ("5228203F51CA11D18F1400A02427D15E", "Jugendherberge", "ostello della gioventù", "Youth hostel", "lts", ACCO_TYPE, V_ACCO, "accommodation", ""),
    ("5228204051CA11D18F1400A02427D15E", "Campingplatz", "campeggio", "Camping site", "lts", ACCO_TYPE, V_ACCO, "accommodation", ""),
    ("67979F0362FF11D18F2100A02427D15E", "Schutzhütte", "baita", "Mountain refuge", "lts", ACCO_TYPE, V_ACCO, "accommodation", ""),
    ("52281FA851CA11D18F1400A02427D15E", "1 Stern", "1 stella", "1 star", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("52281FA751CA11D18F1400A02427D15E", "2 Sterne", "2 stelle", "2 stars", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("52281FA651CA11D18F1400A02427D15E", "3 Sterne", "3 stelle", "3 stars", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("522AA59151CA11D18F1400A02427D15E", "3s Sterne", "3s stelle", "3s stars", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("52281FA551CA11D18F1400A02427D15E", "4 Sterne", "4 stelle", "4 stars", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("52281FA451CA11D18F1400A02427D15E", "4s Sterne", "4s stelle", "4s stars", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("52281FA351CA11D18F1400A02427D15E", "5 Sterne", "5 stelle", "5 stars", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("86179E1BDAA811D28E25006097B896BA", "2 Blumen", "2 fiori", "2 flowers", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("86179E1CDAA811D28E25006097B896BA", "3 Blumen", "3 fiori", "3 flowers", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("522AD59151CA11D18F1400A02427D15E", "4 Blumen", "4 fiori", "4 flowers", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("52281FAA51CA11D18F1400A02427D15E", "2 Sonnen", "2 soli", "2 suns", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("52281FA951CA11D18F1400A02427D15E", "3 Sonnen", "3 soli", "3 suns", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("522AC59151CA11D18F1400A02427D15E", "4 Sonnen", "4 soli", "4 suns", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("5BTTTTTT52F144A4BAF718259634F9AD", "Nicht kategorisiert", "Non categorizzato", "Not categorized", "lts", ACCO_CAT, V_ACCO, "accommodation", ""),
    ("5228204D51CA11D18F1400A02427D15E", "ohne Verpflegung", "solo pernottamento", "without board", "lts", MEAL, V_ACCO, "accommodation", ""),
    ("5228204E51CA11D18F1400A02427D15E", "Frühstück", "colazione", "breakfast", "lts", MEAL, V_ACCO, "accommodation", ""),
    ("5228204F51CA11D18F1400A02427D15E", "Halbpension", "mezza pensione", "half board", "lts", MEAL, V_ACCO, "accommodation", ""),
    ("5228205051CA11D18F1400A02427D15E", "Vollpension", "pensione completa", "full board", "lts", MEAL, V_ACCO, "accommodation", ""),
    ("guestcard", "Guestcard", "Guestcard", "Guestcard", "idm", &["cardtype"], V_ACCO, "accommodation", ""),
];

pub(crate) fn tag_def(id: &str) -> &'static TagDef {
    TAGS.iter()
        .find(|t| t.0 == id)
        .unwrap_or_else(|| panic!("tag {id:?} is not in the demo vocabulary"))
}

fn tag_name(t: &TagDef, lang: &str) -> &'static str {
    match lang {
        "it" => t.2,
        "en" => t.3,
        _ => t.1,
    }
}

/// Pre-built tagging fields for one combination of tag ids (built once, cloned per document).
pub(crate) struct TagSet {
    tags: Value,
    ids: Value,
    hub: Value,
    src: Value,
    cats: [Value; 3],
}

impl TagSet {
    pub(crate) fn new(ids: &[&str]) -> TagSet {
        let defs: Vec<&TagDef> = ids.iter().map(|id| tag_def(id)).collect();
        let tags = defs
            .iter()
            .map(|t| json!({"Id": t.0, "Source": t.4, "Type": t.5[0], "Name": t.1}))
            .collect::<Vec<_>>();
        let hub_ids: Vec<&str> = defs.iter().map(|t| t.8).filter(|h| !h.is_empty()).collect();
        let cat = |lang: &str| {
            let names: Vec<&str> = defs
                .iter()
                .filter(|t| t.4 == "idm" && t.5.contains(&"odhcategory"))
                .map(|t| tag_name(t, lang))
                .collect();
            json!(names)
        };
        TagSet {
            tags: Value::Array(tags),
            ids: json!(ids),
            hub: Value::Array(hub_ids.iter().map(|h| json!({"Id": h})).collect()),
            src: json!(hub_ids),
            cats: [cat("de"), cat("it"), cat("en")],
        }
    }

    /// Inserts Tags, TagIds, HubTags, SrcTags.
    pub(crate) fn put(&self, m: &mut Doc) {
        put(m, "Tags", self.tags.clone());
        put(m, "TagIds", self.ids.clone());
        put(m, "HubTags", self.hub.clone());
        put(m, "SrcTags", self.src.clone());
    }

    /// Display categories (names of the standardised category tags) in a language.
    pub(crate) fn categories(&self, lang: &str) -> Value {
        match lang {
            "it" => self.cats[1].clone(),
            "en" => self.cats[2].clone(),
            _ => self.cats[0].clone(),
        }
    }
}

pub(crate) fn tag_documents(
    rng: &mut impl Rng,
    now: chrono::NaiveDateTime,
    emit: &mut dyn FnMut(&'static str, Value),
) {
    for t in TAGS {
        let stamps = util::stamps(rng, now);
        let mut m = head(Head {
            id: t.0.to_owned(),
            typ: "tag",
            source: t.4,
            shortname: t.1.to_owned(),
            active: true,
            stamps,
            langs: &["de", "it", "en"],
        });
        put(&mut m, "TagName", json!({"de": t.1, "it": t.2, "en": t.3}));
        put(&mut m, "ValidForEntity", json!(t.6));
        put(&mut m, "Types", json!(t.5));
        put(&mut m, "MainEntity", json!(t.7));
        put(
            &mut m,
            "DisplayAsCategory",
            json!(t.5.contains(&"odhcategory")),
        );
        put(
            &mut m,
            "HubTagIds",
            if t.8.is_empty() {
                json!([])
            } else {
                json!([t.8])
            },
        );
        let mapping = match t.4 {
            "lts" => json!({"lts": {"rid": t.0}}),
            "idm" => json!({"idm": {"id": t.0}}),
            _ => json!({}),
        };
        put(&mut m, "Mapping", mapping);
        put(&mut m, "Description", json!({}));
        put(&mut m, "LicenseInfo", util::license(rng, t.4));
        put(&mut m, "PublishedOn", json!(["idm-marketplace"]));
        emit("Tag", Value::Object(m));
    }
}

/// Source id, names (de, it, en), description (de, it, en), content types, url.
type SourceRow = (
    &'static str,
    Tri,
    Tri,
    &'static [&'static str],
    &'static str,
);

#[rustfmt::skip]
const SOURCES: [SourceRow; 12] = [
    ("lts", ("LTS – Landesverband der Tourismusorganisationen Südtirols", "LTS – Associazione delle organizzazioni turistiche dell'Alto Adige", "LTS – Association of South Tyrol's tourism organisations"),
        ("Unterkünfte, Veranstaltungen, Aktivitäten und Webcams der Tourismusvereine.", "Alloggi, eventi, attività e webcam delle associazioni turistiche.", "Accommodations, events, activities and webcams of the tourism associations."),
        &["accommodation", "accommodationroom", "hubactivitypoi", "event", "webcam", "tag"], "https://www.lts.it"),
    ("hgv", ("HGV – Hoteliers- und Gastwirteverband", "HGV – Unione albergatori e pubblici esercenti", "HGV – Hoteliers and Innkeepers Association"),
        ("Hotelstammdaten und Verfügbarkeiten.", "Dati anagrafici degli alberghi e disponibilità.", "Hotel master data and availability."),
        &["accommodation", "accommodationroom"], "https://www.hgv.it"),
    ("idm", ("IDM Südtirol", "IDM Alto Adige", "IDM South Tyrol"),
        ("Redaktionelle Inhalte, Gebiete und Kategorien.", "Contenuti redazionali, territori e categorie.", "Editorial content, territories and categories."),
        &["hubactivitypoi", "article", "region", "municipality", "district", "area", "skiarea", "skiregion", "tourismassociation", "tag"], "https://www.idm-suedtirol.com"),
    ("siag", ("Südtiroler Informatik AG", "Informatica Alto Adige", "South Tyrol Informatics"),
        ("Wetterdaten des Landeswetterdienstes und Museen.", "Dati meteo del servizio meteorologico provinciale e musei.", "Weather data of the provincial weather service and museums."),
        &["weatherdistrict", "weatherforecast", "weatherrealtime", "hubactivitypoi"], "https://www.provinz.bz.it/wetter"),
    ("noi", ("NOI Techpark", "NOI Techpark", "NOI Techpark"),
        ("Veranstaltungen und Raumbuchungen im NOI Techpark.", "Eventi e prenotazioni delle sale al NOI Techpark.", "Events and room bookings at NOI Techpark."),
        &["eventshort", "tag"], "https://noi.bz.it"),
    ("eurac", ("Eurac Research", "Eurac Research", "Eurac Research"),
        ("Veranstaltungen im Eurac-Forschungszentrum.", "Eventi al centro di ricerca Eurac.", "Events at the Eurac research centre."),
        &["eventshort"], "https://www.eurac.edu"),
    ("a22", ("Brennerautobahn A22", "Autostrada del Brennero A22", "Brenner motorway A22"),
        ("Verkehrsmeldungen der Brennerautobahn.", "Notizie sul traffico dell'autostrada del Brennero.", "Traffic announcements of the Brenner motorway."),
        &["announcement"], "https://www.autobrennero.it"),
    ("provincebz", ("Autonome Provinz Bozen – Südtirol", "Provincia autonoma di Bolzano – Alto Adige", "Autonomous Province of Bolzano – South Tyrol"),
        ("Verkehrsmeldungen der Landesverkehrszentrale.", "Notizie sul traffico della centrale provinciale.", "Traffic announcements of the provincial traffic centre."),
        &["announcement"], "https://www.provinz.bz.it"),
    ("suedtirolwein", ("Südtirol Wein", "Vini Alto Adige", "South Tyrol Wine"),
        ("Weinkellereien und Weingüter.", "Cantine e tenute vinicole.", "Wineries and wine estates."),
        &["hubactivitypoi"], "https://www.suedtirolwein.com"),
    ("dss", ("Dolomiti Superski", "Dolomiti Superski", "Dolomiti Superski"),
        ("Aufstiegsanlagen und Pisten.", "Impianti di risalita e piste.", "Lifts and slopes."),
        &["hubactivitypoi", "skiarea"], "https://www.dolomitisuperski.com"),
    ("panomax", ("Panomax", "Panomax", "Panomax"),
        ("360°-Webcams.", "Webcam a 360°.", "360° webcams."),
        &["webcam"], "https://www.panomax.com"),
    ("feratel", ("feratel media technologies", "feratel media technologies", "feratel media technologies"),
        ("Webcams und Live-Bilder.", "Webcam e immagini in diretta.", "Webcams and live images."),
        &["webcam"], "https://www.feratel.com"),
];

pub(crate) fn source_documents(
    rng: &mut impl Rng,
    now: chrono::NaiveDateTime,
    emit: &mut dyn FnMut(&'static str, Value),
) {
    for (id, name, desc, types, url) in SOURCES {
        let stamps = util::stamps(rng, now);
        let mut m = head(Head {
            id: id.to_owned(),
            typ: "source",
            source: id,
            shortname: name.0.to_owned(),
            active: true,
            stamps,
            langs: &["de", "it", "en"],
        });
        put(
            &mut m,
            "Detail",
            json!({
                "de": {"Title": name.0, "BaseText": desc.0},
                "it": {"Title": name.1, "BaseText": desc.1},
                "en": {"Title": name.2, "BaseText": desc.2},
            }),
        );
        put(&mut m, "Name", util::names3(name));
        put(&mut m, "Description", util::names3(desc));
        put(&mut m, "Types", json!(types));
        put(&mut m, "Url", json!(url));
        put(&mut m, "LicenseInfo", util::license(rng, id));
        emit("Source", Value::Object(m));
    }
}

pub(crate) fn source_count() -> u64 {
    SOURCES.len() as u64
}
