//! The geography every other document refers to (regions, tourism associations,
//! municipalities, districts, areas, ski areas and ski regions); its documents are
//! built in `geo_docs`.
//! Ids are derived from names, so they do not depend on generation order or scale.

use serde_json::{json, Value};

use crate::places::{FRACTIONS, HAMLETS, MUNICIPALITIES, REGIONS, SKI_AREAS, SKI_REGIONS, TVS};
use crate::util::{name_id, round_to, splitmix};

pub(crate) struct Muni {
    pub id: String,
    pub de: &'static str,
    pub it: &'static str,
    pub ld: Option<&'static str>,
    pub lat: f64,
    pub lon: f64,
    pub alt: i32,
    pub plz: &'static str,
    pub inh: u32,
    pub tv: usize,
    pub region: usize,
    pub istat: String,
    pub districts: Vec<usize>,
    pub areas: Vec<usize>,
}

impl Muni {
    /// The place name in a language (English uses the German name, Ladin its own where one exists).
    pub(crate) fn name(&self, lang: &str) -> &'static str {
        match lang {
            "it" => self.it,
            "ld" => self.ld.unwrap_or(self.de),
            _ => self.de,
        }
    }
}

pub(crate) struct District {
    pub id: String,
    pub muni: usize,
    pub de: String,
    pub it: String,
    pub lat: f64,
    pub lon: f64,
    pub alt: i32,
    pub comune: bool,
    /// Pre-built LocationInfo for documents located in this district.
    pub loc: Value,
}

impl District {
    /// The district name in a language (English and Ladin use the German name).
    pub(crate) fn name(&self, lang: &str) -> &str {
        if lang == "it" {
            &self.it
        } else {
            &self.de
        }
    }
}

pub(crate) struct Named {
    pub id: String,
    pub de: String,
    pub it: String,
    pub en: String,
}

pub(crate) struct Area {
    pub n: Named,
    pub muni: usize,
    pub ski_area: Option<usize>,
    pub kind: &'static str,
}

pub(crate) struct Geo {
    pub regions: Vec<Named>,
    pub tvs: Vec<Named>,
    pub munis: Vec<Muni>,
    pub districts: Vec<District>,
    pub areas: Vec<Area>,
    pub ski_regions: Vec<Named>,
    pub ski_areas: Vec<(Named, usize)>,
}

pub(crate) fn info(id: &str, de: &str, it: &str, en: &str) -> Value {
    json!({"Id": id, "Name": {"de": de, "it": it, "en": en}})
}

impl Geo {
    pub(crate) fn build() -> Geo {
        let regions: Vec<Named> = REGIONS
            .iter()
            .map(|r| Named {
                id: name_id("region", r.0),
                de: r.0.into(),
                it: r.1.into(),
                en: r.2.into(),
            })
            .collect();
        let tvs: Vec<Named> = TVS
            .iter()
            .map(|t| Named {
                id: name_id("tourismassociation", t.0),
                de: format!("Tourismusverein {}", t.0),
                it: format!("Associazione turistica {}", t.1),
                en: format!("Tourism Association {}", t.0),
            })
            .collect();
        let mut munis: Vec<Muni> = MUNICIPALITIES
            .iter()
            .map(|m| Muni {
                id: name_id("municipality", m.0),
                de: m.0,
                it: m.1,
                ld: if m.2.is_empty() { None } else { Some(m.2) },
                lat: m.3,
                lon: m.4,
                alt: m.5,
                plz: m.6,
                inh: m.7,
                tv: m.8,
                region: TVS[m.8].2,
                istat: String::new(),
                districts: Vec::new(),
                areas: Vec::new(),
            })
            .collect();
        // ISTAT numbers follow the alphabetical order of the Italian names (province code 021).
        let mut order: Vec<usize> = (0..munis.len()).collect();
        order.sort_by(|a, b| munis[*a].it.cmp(munis[*b].it));
        for (n, i) in order.into_iter().enumerate() {
            munis[i].istat = format!("021{:03}", n + 1);
        }

        let mut districts = Vec::new();
        for i in 0..munis.len() {
            let m = &munis[i];
            let mut names: Vec<(String, String, bool)> =
                vec![(m.de.to_owned(), m.it.to_owned(), true)];
            for f in FRACTIONS.iter().filter(|f| f.0 == m.de) {
                names.push((f.1.to_owned(), f.2.to_owned(), false));
            }
            let target = 2 + usize::from(i % 3 != 0) + usize::from(m.inh > 5000);
            let mut k = 0;
            while names.len() < target {
                let h = HAMLETS[(i * 5 + k * 7) % HAMLETS.len()];
                names.push((
                    format!("{} ({})", h.0, m.de),
                    format!("{} ({})", h.1, m.it),
                    false,
                ));
                k += 1;
            }
            for (k, (de, it, comune)) in names.into_iter().enumerate() {
                let h = splitmix((i as u64) << 8 | k as u64);
                let (lat, lon) = if comune {
                    (m.lat, m.lon)
                } else {
                    let dlat = ((h & 0xFFFF) as f64 / 65_535.0 - 0.5) * 0.05;
                    let dlon = (((h >> 16) & 0xFFFF) as f64 / 65_535.0 - 0.5) * 0.07;
                    (round_to(m.lat + dlat, 6), round_to(m.lon + dlon, 6))
                };
                let alt = if comune {
                    m.alt
                } else {
                    m.alt - 80 + ((h >> 32) % 450) as i32
                };
                let id = name_id("district", &format!("{}/{}", m.de, de));
                let loc = json!({
                    "RegionInfo": info(&regions[m.region].id, &regions[m.region].de, &regions[m.region].it, &regions[m.region].en),
                    "TvInfo": info(&tvs[m.tv].id, &tvs[m.tv].de, &tvs[m.tv].it, &tvs[m.tv].en),
                    "MunicipalityInfo": info(&m.id, m.de, m.it, m.de),
                    "DistrictInfo": info(&id, &de, &it, &de),
                });
                districts.push(District {
                    id,
                    muni: i,
                    de,
                    it,
                    lat,
                    lon,
                    alt,
                    comune,
                    loc,
                });
            }
        }
        for (d, dist) in districts.iter().enumerate() {
            munis[dist.muni].districts.push(d);
        }

        let ski_regions: Vec<Named> = SKI_REGIONS
            .iter()
            .map(|s| Named {
                id: name_id("skiregion", s.0),
                de: s.0.into(),
                it: s.1.into(),
                en: s.2.into(),
            })
            .collect();
        let muni_index = |de: &str| {
            munis
                .iter()
                .position(|m| m.de == de)
                .expect("ski area municipality exists")
        };
        let ski_areas: Vec<(Named, usize)> = SKI_AREAS
            .iter()
            .map(|s| {
                let n = Named {
                    id: name_id("skiarea", s.0),
                    de: s.0.into(),
                    it: s.1.into(),
                    en: format!("{} ski area", s.0),
                };
                (n, muni_index(s.2))
            })
            .collect();

        let mut areas = Vec::new();
        for (s, (sa, muni)) in ski_areas.iter().enumerate() {
            areas.push(Area {
                n: Named {
                    id: name_id("area", &format!("ski/{}", sa.de)),
                    de: format!("Skigebiet {}", sa.de),
                    it: format!("Area sciistica {}", sa.it),
                    en: format!("{} ski slopes", sa.de),
                },
                muni: *muni,
                ski_area: Some(s),
                kind: "SkiArea",
            });
            areas.push(Area {
                n: Named {
                    id: name_id("area", &format!("hike/{}", sa.de)),
                    de: format!("Wandergebiet {}", sa.de),
                    it: format!("Area escursionistica {}", sa.it),
                    en: format!("{} hiking area", sa.de),
                },
                muni: *muni,
                ski_area: Some(s),
                kind: "HikingArea",
            });
        }
        for (i, m) in munis.iter().enumerate().filter(|(i, _)| i % 3 == 0) {
            areas.push(Area {
                n: Named {
                    id: name_id("area", &format!("village/{}", m.de)),
                    de: format!("Wandergebiet {}", m.de),
                    it: format!("Area escursionistica {}", m.it),
                    en: format!("{} hiking area", m.de),
                },
                muni: i,
                ski_area: None,
                kind: "HikingArea",
            });
        }
        for (a, area) in areas.iter().enumerate() {
            munis[area.muni].areas.push(a);
        }
        Geo {
            regions,
            tvs,
            munis,
            districts,
            areas,
            ski_regions,
            ski_areas,
        }
    }

    pub(crate) fn area_ids(&self, muni: usize) -> Value {
        json!(self.munis[muni]
            .areas
            .iter()
            .map(|a| self.areas[*a].n.id.as_str())
            .collect::<Vec<_>>())
    }

    /// Fixed document counts of the geography types.
    pub(crate) fn counts(&self) -> [(&'static str, u64); 7] {
        [
            ("Region", self.regions.len() as u64),
            ("TourismAssociation", self.tvs.len() as u64),
            ("Municipality", self.munis.len() as u64),
            ("District", self.districts.len() as u64),
            ("Area", self.areas.len() as u64),
            ("SkiRegion", self.ski_regions.len() as u64),
            ("SkiArea", self.ski_areas.len() as u64),
        ]
    }

    /// Whether the municipality is in a Ladin-speaking valley.
    pub(crate) fn ladin(&self, muni: usize) -> bool {
        self.munis[muni].ld.is_some()
    }

    pub(crate) fn phone_area(&self, muni: usize) -> &'static str {
        REGIONS[self.munis[muni].region].3
    }
}

/// ContactInfos for the given languages.
#[allow(clippy::too_many_arguments)]
pub(crate) fn contact(
    geo: &Geo,
    langs: &[&str],
    muni: usize,
    company: &dyn Fn(&str) -> String,
    street: (&str, &str),
    number: u32,
    email: &str,
    url: &str,
    phone: &str,
) -> Value {
    let m = &geo.munis[muni];
    let mut out = serde_json::Map::new();
    for l in langs {
        let st = if *l == "it" { street.1 } else { street.0 };
        out.insert(
            (*l).to_owned(),
            json!({
                "CompanyName": company(l),
                "Address": format!("{st} {number}"),
                "City": m.name(l),
                "ZipCode": m.plz,
                "CountryCode": "IT",
                "CountryName": match *l { "it" => "Italia", "en" => "Italy", _ => "Italien" },
                "Phonenumber": phone,
                "Email": email,
                "Url": url,
                "Language": l,
            }),
        );
    }
    Value::Object(out)
}
