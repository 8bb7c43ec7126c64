//! Documents of the geography: Region, TourismAssociation, Municipality, District,
//! Area, SkiRegion and SkiArea.

use chrono::NaiveDateTime;
use rand::Rng;
use serde_json::{json, Value};

use crate::geo::{info, Geo};
use crate::places::{SKI_AREAS, TVS};
use crate::tags::TagSet;
use crate::util::{self, head, put, round_to, splitmix, Doc, Gps, Head, Tail};

const L3: &[&str] = &["de", "it", "en"];

fn detail3(de: (String, String), it: (String, String), en: (String, String)) -> Value {
    json!({
        "de": {"Title": de.0, "BaseText": de.1},
        "it": {"Title": it.0, "BaseText": it.1},
        "en": {"Title": en.0, "BaseText": en.1},
    })
}

struct GeoDoc<'a> {
    id: &'a str,
    typ: &'static str,
    names: (&'a str, &'a str, &'a str),
    texts: (String, String, String),
    tags: &'a TagSet,
    pos: (f64, f64, f64),
    area_ids: Value,
}

fn geo_doc(rng: &mut impl Rng, now: NaiveDateTime, d: GeoDoc<'_>) -> Doc {
    let stamps = util::stamps(rng, now);
    let mut m = head(Head {
        id: d.id.to_owned(),
        typ: d.typ,
        source: "idm",
        shortname: d.names.0.to_owned(),
        active: true,
        stamps,
        langs: L3,
    });
    put(
        &mut m,
        "Detail",
        detail3(
            (d.names.0.to_owned(), d.texts.0),
            (d.names.1.to_owned(), d.texts.1),
            (d.names.2.to_owned(), d.texts.2),
        ),
    );
    let titles = json!({"de": d.names.0, "it": d.names.1, "en": d.names.2});
    let images = util::images(rng, d.typ, d.id, "idm", &titles, 2);
    util::tail(
        &mut m,
        rng,
        Tail {
            tags: d.tags,
            poi_infos: None,
            gps: Gps::Always(d.pos),
            mapping: json!({"lts": {"rid": d.id}}),
            area_ids: d.area_ids,
            source: "idm",
            contact: None,
            images,
        },
    );
    put(&mut m, "VisibleInSearch", json!(true));
    m
}

fn centroid<'a>(geo: &Geo, munis: impl Iterator<Item = &'a usize>) -> (f64, f64, f64) {
    let (mut la, mut lo, mut al, mut n) = (0.0, 0.0, 0.0, 0.0);
    for i in munis {
        let m = &geo.munis[*i];
        la += m.lat;
        lo += m.lon;
        al += f64::from(m.alt);
        n += 1.0;
    }
    (round_to(la / n, 6), round_to(lo / n, 6), (al / n).round())
}

pub(crate) fn documents(
    geo: &Geo,
    rng: &mut impl Rng,
    now: NaiveDateTime,
    emit: &mut dyn FnMut(&'static str, Value),
) {
    let t_region = TagSet::new(&["region"]);
    let t_tv = TagSet::new(&["tourismassociation"]);
    let t_none = TagSet::new(&[]);
    let t_ski = TagSet::new(&["ski areas", "winter"]);
    let t_skiregion = TagSet::new(&["ski region", "winter"]);
    let all: Vec<usize> = (0..geo.munis.len()).collect();

    for (r, reg) in geo.regions.iter().enumerate() {
        let members: Vec<usize> = all
            .iter()
            .copied()
            .filter(|i| geo.munis[*i].region == r)
            .collect();
        let texts = (
            format!("Die Ferienregion {} umfasst {} Gemeinden: Wandern im Sommer, Skifahren im Winter, Südtiroler Küche das ganze Jahr.", reg.de, members.len()),
            format!("La regione turistica {} comprende {} comuni: escursioni d'estate, sci d'inverno e cucina altoatesina tutto l'anno.", reg.it, members.len()),
            format!("The holiday region {} covers {} municipalities: hiking in summer, skiing in winter, South Tyrolean food all year.", reg.en, members.len()),
        );
        let names = (reg.de.as_str(), reg.it.as_str(), reg.en.as_str());
        let pos = centroid(geo, members.iter());
        let mut m = geo_doc(
            rng,
            now,
            GeoDoc {
                id: &reg.id,
                typ: "region",
                names,
                texts,
                tags: &t_region,
                pos,
                area_ids: json!([]),
            },
        );
        let skiareas: Vec<&str> = geo
            .ski_areas
            .iter()
            .filter(|(_, mu)| geo.munis[*mu].region == r)
            .map(|(s, _)| s.id.as_str())
            .collect();
        put(&mut m, "SkiareaIds", json!(skiareas));
        put(&mut m, "DetailThemed", json!({}));
        emit("Region", Value::Object(m));
    }

    for (t, tv) in geo.tvs.iter().enumerate() {
        let members: Vec<usize> = all
            .iter()
            .copied()
            .filter(|i| geo.munis[*i].tv == t)
            .collect();
        let first = &geo.munis[members[0]];
        let texts = (
            format!(
                "Informationen und Gästeservice im Tourismusbüro {}.",
                first.de
            ),
            format!(
                "Informazioni e servizio ospiti presso l'ufficio turistico di {}.",
                first.it
            ),
            format!(
                "Information and guest service at the {} tourist office.",
                first.de
            ),
        );
        let names = (tv.de.as_str(), tv.it.as_str(), tv.en.as_str());
        let pos = centroid(geo, members.iter());
        let mut m = geo_doc(
            rng,
            now,
            GeoDoc {
                id: &tv.id,
                typ: "tourismassociation",
                names,
                texts,
                tags: &t_tv,
                pos,
                area_ids: json!([]),
            },
        );
        let region = &geo.regions[TVS[t].2];
        put(&mut m, "RegionId", json!(region.id));
        let skiareas: Vec<&str> = geo
            .ski_areas
            .iter()
            .filter(|(_, mu)| geo.munis[*mu].tv == t)
            .map(|(s, _)| s.id.as_str())
            .collect();
        put(&mut m, "SkiareaIds", json!(skiareas));
        put(
            &mut m,
            "LocationInfo",
            json!({"RegionInfo": info(&region.id, &region.de, &region.it, &region.en)}),
        );
        emit("TourismAssociation", Value::Object(m));
    }

    for (i, mu) in geo.munis.iter().enumerate() {
        let texts = (
            format!(
                "{} liegt auf {} m Meereshöhe und zählt rund {} Einwohner.",
                mu.de, mu.alt, mu.inh
            ),
            format!(
                "{} si trova a {} m di altitudine e conta circa {} abitanti.",
                mu.it, mu.alt, mu.inh
            ),
            format!(
                "{} lies at {} m above sea level and has about {} inhabitants.",
                mu.de, mu.alt, mu.inh
            ),
        );
        let en = format!("{}/{}", mu.de, mu.it);
        let names = (
            mu.de,
            mu.it,
            if mu.de == mu.it { mu.de } else { en.as_str() },
        );
        let pos = (mu.lat, mu.lon, f64::from(mu.alt));
        let mut m = geo_doc(
            rng,
            now,
            GeoDoc {
                id: &mu.id,
                typ: "municipality",
                names,
                texts,
                tags: &t_none,
                pos,
                area_ids: geo.area_ids(i),
            },
        );
        put(&mut m, "Plz", json!(mu.plz));
        put(&mut m, "RegionId", json!(geo.regions[mu.region].id));
        put(&mut m, "TourismvereinId", json!(geo.tvs[mu.tv].id));
        put(
            &mut m,
            "SiagId",
            json!(mu.istat[3..].trim_start_matches('0')),
        );
        put(&mut m, "Inhabitants", json!(mu.inh));
        put(&mut m, "IstatNumber", json!(mu.istat));
        let loc = &geo.districts[mu.districts[0]].loc;
        put(
            &mut m,
            "LocationInfo",
            json!({"RegionInfo": loc["RegionInfo"], "TvInfo": loc["TvInfo"]}),
        );
        emit("Municipality", Value::Object(m));
    }

    for d in &geo.districts {
        let mu = &geo.munis[d.muni];
        let texts = (
            format!("Ortsteil der Gemeinde {} auf {} m.", mu.de, d.alt),
            format!("Frazione del comune di {} a {} m.", mu.it, d.alt),
            format!("Part of the municipality of {}, at {} m.", mu.de, d.alt),
        );
        let names = (d.de.as_str(), d.it.as_str(), d.de.as_str());
        let pos = (d.lat, d.lon, f64::from(d.alt));
        let mut m = geo_doc(
            rng,
            now,
            GeoDoc {
                id: &d.id,
                typ: "district",
                names,
                texts,
                tags: &t_none,
                pos,
                area_ids: geo.area_ids(d.muni),
            },
        );
        put(&mut m, "IsComune", json!(d.comune));
        put(&mut m, "RegionId", json!(geo.regions[mu.region].id));
        put(&mut m, "TourismvereinId", json!(geo.tvs[mu.tv].id));
        put(&mut m, "MunicipalityId", json!(mu.id));
        put(
            &mut m,
            "SiagId",
            json!(format!(
                "{}{:02}",
                mu.istat,
                mu.districts
                    .iter()
                    .position(|x| geo.districts[*x].id == d.id)
                    .unwrap_or(0)
            )),
        );
        put(&mut m, "LocationInfo", d.loc.clone());
        emit("District", Value::Object(m));
    }

    for a in &geo.areas {
        let mu = &geo.munis[a.muni];
        let texts = (
            format!("{} bei {}.", a.n.de, mu.de),
            format!("{} presso {}.", a.n.it, mu.it),
            format!("{} near {}.", a.n.en, mu.de),
        );
        let names = (a.n.de.as_str(), a.n.it.as_str(), a.n.en.as_str());
        let h = splitmix(a.n.id.len() as u64 ^ u64::from(mu.alt as u32));
        let pos = (mu.lat, mu.lon, f64::from(mu.alt + 300 + (h % 700) as i32));
        let tags = if a.kind == "SkiArea" { &t_ski } else { &t_none };
        let mut m = geo_doc(
            rng,
            now,
            GeoDoc {
                id: &a.n.id,
                typ: "area",
                names,
                texts,
                tags,
                pos,
                area_ids: json!([a.n.id]),
            },
        );
        put(&mut m, "RegionId", json!(geo.regions[mu.region].id));
        put(&mut m, "TourismvereinId", json!(geo.tvs[mu.tv].id));
        put(&mut m, "MunicipalityId", json!(mu.id));
        put(
            &mut m,
            "SkiAreaID",
            a.ski_area
                .map_or(Value::Null, |s| json!(geo.ski_areas[s].0.id)),
        );
        put(&mut m, "GID", json!(format!("{:08}", h % 100_000_000)));
        put(&mut m, "LtsID", json!(a.n.id));
        put(&mut m, "AreaType", json!(a.kind));
        emit("Area", Value::Object(m));
    }

    for (r, sr) in geo.ski_regions.iter().enumerate() {
        let members: Vec<usize> = SKI_AREAS
            .iter()
            .enumerate()
            .filter(|(_, s)| s.3 == r)
            .map(|(i, _)| geo.ski_areas[i].1)
            .collect();
        let texts = (
            format!(
                "Der Skiverbund {} vereint {} Skigebiete mit einem Skipass.",
                sr.de,
                members.len()
            ),
            format!(
                "Il comprensorio {} unisce {} aree sciistiche con un unico skipass.",
                sr.it,
                members.len()
            ),
            format!(
                "{} links {} ski areas with one ski pass.",
                sr.en,
                members.len()
            ),
        );
        let names = (sr.de.as_str(), sr.it.as_str(), sr.en.as_str());
        let pos = centroid(geo, members.iter());
        let mut m = geo_doc(
            rng,
            now,
            GeoDoc {
                id: &sr.id,
                typ: "skiregion",
                names,
                texts,
                tags: &t_skiregion,
                pos,
                area_ids: json!([]),
            },
        );
        let ids: Vec<&str> = SKI_AREAS
            .iter()
            .enumerate()
            .filter(|(_, s)| s.3 == r)
            .map(|(i, _)| geo.ski_areas[i].0.id.as_str())
            .collect();
        put(&mut m, "SkiAreaIds", json!(ids));
        emit("SkiRegion", Value::Object(m));
    }

    for (s, (sa, muni)) in geo.ski_areas.iter().enumerate() {
        let row = SKI_AREAS[s];
        let mu = &geo.munis[*muni];
        let sr = &geo.ski_regions[row.3];
        let texts = (
            format!(
                "{} km Pisten zwischen {} und {} m, {} Liftanlagen.",
                row.6, row.4, row.5, row.7
            ),
            format!(
                "{} km di piste tra {} e {} m, {} impianti di risalita.",
                row.6, row.4, row.5, row.7
            ),
            format!(
                "{} km of slopes between {} and {} m, {} lifts.",
                row.6, row.4, row.5, row.7
            ),
        );
        let names = (sa.de.as_str(), sa.it.as_str(), sa.en.as_str());
        let pos = (mu.lat, mu.lon, f64::from((row.4 + row.5) / 2));
        let area_ids: Vec<&str> = geo
            .areas
            .iter()
            .filter(|a| a.ski_area == Some(s))
            .map(|a| a.n.id.as_str())
            .collect();
        let mut m = geo_doc(
            rng,
            now,
            GeoDoc {
                id: &sa.id,
                typ: "skiarea",
                names,
                texts,
                tags: &t_ski,
                pos,
                area_ids: json!(area_ids),
            },
        );
        let blue = row.6 * 4 / 10;
        let black = row.6 / 8;
        put(&mut m, "SkiRegionId", json!(sr.id));
        put(
            &mut m,
            "SkiRegionName",
            util::names3((&sr.de, &sr.it, &sr.en)),
        );
        put(
            &mut m,
            "SkiAreaMapURL",
            json!(format!(
                "https://images.example.com/skimaps/{}.jpg",
                util::slug(&sa.de)
            )),
        );
        put(&mut m, "TotalSlopeKm", json!(row.6.to_string()));
        put(&mut m, "SlopeKmBlue", json!(blue.to_string()));
        put(
            &mut m,
            "SlopeKmRed",
            json!((row.6 - blue - black).to_string()),
        );
        put(&mut m, "SlopeKmBlack", json!(black.to_string()));
        put(&mut m, "LiftCount", json!(row.7.to_string()));
        put(&mut m, "AreaRadius", json!((row.6 / 10 + 3).to_string()));
        put(&mut m, "AltitudeFrom", json!(row.4));
        put(&mut m, "AltitudeTo", json!(row.5));
        put(&mut m, "AreaId", json!(area_ids));
        put(
            &mut m,
            "LocationInfo",
            geo.districts[mu.districts[0]].loc.clone(),
        );
        put(&mut m, "TourismvereinIds", json!([geo.tvs[mu.tv].id]));
        put(&mut m, "RegionIds", json!([geo.regions[mu.region].id]));
        put(&mut m, "MunicipalityIds", json!([mu.id]));
        put(
            &mut m,
            "DistrictIds",
            json!(mu
                .districts
                .iter()
                .map(|d| geo.districts[*d].id.as_str())
                .collect::<Vec<_>>()),
        );
        emit("SkiArea", Value::Object(m));
    }
}
