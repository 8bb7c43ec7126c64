//! `GET /v1/Location`: the regions, tourism associations, municipalities and districts
//! as `{typ, name, id}` entries, in that order (`reg`, `tvs`, `mun`, `fra`), each group by
//! name then id. `typ` + `id` is exactly a `locfilter` token. Built from the stored
//! documents of those entity types.
//!
//! Parameters: `language` (then `name` is that language's title, else a `{lang: title}`
//! map), `type` (comma list of `reg,tvs,mun,fra`; default all), `showall` (default true:
//! every active entry; `false`: only those `VisibleInSearch`), `locfilter` (the same
//! tokens as on lists, `reg…`/`tvs…`/`mun…`/`fra…`: keep only the children of any of
//! them — entries whose `RegionId`, `TourismvereinId`, `MunicipalityId` or
//! `LocationInfo.*Info.Id` name it; the named entry itself is not its own child).
//!
//! No `mta` (meta-region) entries: the registry has no MetaRegion entity type, so there
//! is nothing to list or to filter by (see docs/decisions.md).
//!
//! `GET /v1/Location/Skiarea` (also `/v1/Location/SkiArea`): the ski areas as
//! `{typ: "ska", name, id}` (an `areafilter` token), with `language`, `showall` and
//! `locfilter`.

use axum::extract::{RawQuery as AxumRawQuery, State};
use axum::response::Response;
use hub_model::language::{fold, parse_language, LANGUAGES};
use serde_json::{json, Map, Value};

use super::{json_response, UtilityState};
use crate::error::ContentError;
use crate::params::{bool_value, RawQuery};
use crate::shape::Envelope;

/// (`typ`, entity name) in output order.
pub const LOCATION_TYPES: [(&str, &str); 4] = [
    ("reg", "Region"),
    ("tvs", "TourismAssociation"),
    ("mun", "Municipality"),
    ("fra", "District"),
];

/// The query of `/v1/Location`; also its OpenAPI parameters.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LocationQuery {
    /// Then name is this language's title, else a {lang: title} map
    pub language: Option<String>,
    /// Comma list of reg, tvs, mun, fra (default all)
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub location_type: Option<String>,
    /// true (default): every active entry; false: only those VisibleInSearch
    #[param(value_type = Option<bool>)]
    pub showall: Option<String>,
    /// Comma list of reg/tvs/mun/fra tokens; only their children
    pub locfilter: Option<String>,
}

/// The query of `/v1/Location/Skiarea`: as [`LocationQuery`], `type` only `ska`.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SkiareaLocationQuery {
    /// Then name is this language's title, else a {lang: title} map
    pub language: Option<String>,
    /// true (default): every active entry; false: only those VisibleInSearch
    #[param(value_type = Option<bool>)]
    pub showall: Option<String>,
    /// Comma list of reg/tvs/mun/fra tokens; only their children
    pub locfilter: Option<String>,
    /// Only ska (other types are refused: this route lists ski areas)
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub location_type: Option<String>,
}

impl From<SkiareaLocationQuery> for LocationQuery {
    fn from(q: SkiareaLocationQuery) -> Self {
        LocationQuery {
            language: q.language,
            location_type: q.location_type,
            showall: q.showall,
            locfilter: q.locfilter,
        }
    }
}

fn invalid(parameter: &str, detail: impl Into<String>) -> ContentError {
    ContentError::InvalidParameter {
        parameter: parameter.into(),
        detail: detail.into(),
    }
}

/// `{lang: title}` of `Detail.*.Title`.
fn titles(doc: &Value) -> Map<String, Value> {
    doc["Detail"]
        .as_object()
        .map(|d| {
            d.iter()
                .filter_map(|(lang, v)| {
                    v["Title"]
                        .as_str()
                        .map(|t| (lang.clone(), Value::String(t.to_string())))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The `locfilter` tokens this document is a child of, lower case.
fn parent_tokens(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (prefix, key, info) in [
        ("reg", "RegionId", "RegionInfo"),
        ("tvs", "TourismvereinId", "TvInfo"),
        ("mun", "MunicipalityId", "MunicipalityInfo"),
        ("fra", "DistrictId", "DistrictInfo"),
    ] {
        for id in [doc[key].as_str(), doc["LocationInfo"][info]["Id"].as_str()]
            .into_iter()
            .flatten()
        {
            out.push(format!("{prefix}{}", id.to_lowercase()));
        }
    }
    out
}

/// `GET /v1/Location/Skiarea`.
pub(crate) async fn skiareas(
    State(state): State<UtilityState>,
    AxumRawQuery(query): AxumRawQuery,
) -> Result<Response, ContentError> {
    let q: SkiareaLocationQuery = RawQuery::parse(query.as_deref()).typed();
    if let Some(v) = q.location_type.as_deref() {
        if !v.trim().eq_ignore_ascii_case("ska") {
            return Err(invalid(
                "type",
                format!("'{v}' is not listed here; /v1/Location/Skiarea lists ska entries only"),
            ));
        }
    }
    answer(&state, &q.into(), &[("ska", "SkiArea")]).await
}

pub(crate) async fn list(
    State(state): State<UtilityState>,
    AxumRawQuery(query): AxumRawQuery,
) -> Result<Response, ContentError> {
    let q: LocationQuery = RawQuery::parse(query.as_deref()).typed();
    answer(&state, &q, &LOCATION_TYPES).await
}

async fn answer(
    state: &UtilityState,
    q: &LocationQuery,
    types: &[(&'static str, &'static str)],
) -> Result<Response, ContentError> {
    let locations = super::locfilter(q.locfilter.as_deref())?;
    let language = q
        .language
        .as_deref()
        .map(|v| {
            parse_language(v).ok_or_else(|| {
                invalid(
                    "language",
                    format!(
                        "'{v}' is not a known language; use one of {}",
                        LANGUAGES.join(", ")
                    ),
                )
            })
        })
        .transpose()?;
    let show_all = bool_value("showall", q.showall.as_deref())?.unwrap_or(true);
    let wanted: Vec<&str> = match q.location_type.as_deref().filter(|_| types.len() > 1) {
        None => types.iter().map(|(t, _)| *t).collect(),
        Some(v) => v
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| {
                LOCATION_TYPES
                    .iter()
                    .find(|(typ, _)| typ.eq_ignore_ascii_case(t))
                    .map(|(typ, _)| *typ)
                    .ok_or_else(|| {
                        invalid(
                            "type",
                            format!("'{t}' is not a location type; use reg, tvs, mun or fra"),
                        )
                    })
            })
            .collect::<Result<_, _>>()?,
    };

    let mut items = Vec::new();
    for &(typ, entity) in types {
        if !wanted.contains(&typ) {
            continue;
        }
        let mut entries: Vec<(String, String, Value)> = state
            .content
            .all(entity)
            .await?
            .into_iter()
            .filter(|d| {
                if show_all {
                    d["Active"].as_bool() != Some(false)
                } else {
                    d["VisibleInSearch"].as_bool() == Some(true)
                }
            })
            .filter(|d| {
                locations
                    .as_ref()
                    .is_none_or(|wanted| parent_tokens(d).iter().any(|t| wanted.contains(t)))
            })
            .filter_map(|d| {
                let id = d["Id"].as_str()?.to_string();
                let all = titles(&d);
                let fallback = d["Shortname"].as_str().unwrap_or(&id).to_string();
                let name = match language {
                    Some(lang) => Value::String(
                        all.get(lang)
                            .and_then(Value::as_str)
                            .unwrap_or(&fallback)
                            .to_string(),
                    ),
                    None => Value::Object(all.clone()),
                };
                let sort = fold(
                    all.get(language.unwrap_or("de"))
                        .and_then(Value::as_str)
                        .unwrap_or(&fallback),
                );
                Some((sort, id, name))
            })
            .collect();
        entries.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        items.extend(
            entries
                .into_iter()
                .map(|(_, id, name)| json!({"typ": typ, "name": name, "id": id}).to_string()),
        );
    }
    let envelope = Envelope {
        total_results: items.len() as u64,
        total_pages: 1,
        current_page: 1,
        previous_page: None,
        next_page: None,
        seed: None,
        total_estimated: false,
    };
    Ok(json_response(envelope.render(&items)))
}
