//! `GET /v1/GeoShapes` and `GET /v1/GeoShapes/{id}` (alias `GeoShape`): stored shapes in
//! the item shape of the reference (`Id, Self, Name, Source, Type, Country, _Meta,
//! LicenseInfo, Mapping, Srid, Geometry`), geometry as GeoJSON in the `srid` asked
//! (EPSG:4326 by default; 3857, 32632, 25832). Shapes are few and stored in EPSG:4326,
//! so filtering, ordering (Type, Name, Id) and paging happen here, in Rust.

use axum::extract::{Path, RawQuery as AxumRawQuery, State};
use axum::http::Uri;
use axum::response::Response;
use hub_geo::geo::Intersects;
use hub_geo::geojson::{from_geojson, to_geojson};
use hub_geo::srid::{transform, SUPPORTED};
use hub_geo::{Geometry, Srid};
use hub_model::language::fold;
use hub_query::content::polygon::PolygonSpec;
use serde_json::Value;

use super::{json_response, UtilityState};
use crate::error::ContentError;
use crate::geo_params::resolve_shape;
use crate::list_query::CommonListQuery;
use crate::params::{ListParams, RawQuery, SingleQuery};
use crate::shape::{shape_document, Envelope};

/// The output reference system of both GeoShapes routes.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SridQuery {
    /// Output reference system: 4326 (default), 3857, 32632, 25832; EPSG: prefix allowed
    pub srid: Option<String>,
}

/// The GeoShapes list's own filter.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ShapeTypeQuery {
    /// Comma list of shape types
    #[serde(rename = "type")]
    #[param(rename = "type")]
    pub shape_type: Option<String>,
}

fn output_srid(q: &SridQuery) -> Result<Srid, ContentError> {
    match q.srid.as_deref() {
        None => Ok(Srid::Wgs84),
        Some(v) => Srid::parse(v).ok_or_else(|| ContentError::InvalidParameter {
            parameter: "srid".into(),
            detail: format!(
                "'{v}' is not supported; use one of {SUPPORTED} (EPSG: prefix allowed)"
            ),
        }),
    }
}

/// The stored shape with its geometry in `srid`.
fn in_srid(mut doc: Value, srid: Srid) -> Result<Value, ContentError> {
    if srid != Srid::Wgs84 {
        if let Some(g) = from_geojson(&doc["Geometry"]) {
            let out =
                transform(&g, Srid::Wgs84, srid).map_err(|e| ContentError::InvalidParameter {
                    parameter: "srid".into(),
                    detail: e.to_string(),
                })?;
            doc["Geometry"] = to_geojson(&out);
        }
        doc["Srid"] = Value::String(format!("EPSG:{}", srid.code()));
    }
    Ok(doc)
}

fn text<'a>(doc: &'a Value, key: &str) -> &'a str {
    doc[key].as_str().unwrap_or_default()
}

pub(crate) async fn list(
    State(state): State<UtilityState>,
    uri: Uri,
    AxumRawQuery(query): AxumRawQuery,
) -> Result<Response, ContentError> {
    let raw = RawQuery::parse(query.as_deref());
    if let Some(entity) = hub_model::EntityType::by_name("GeoShape") {
        crate::odh_parameters::refuse_unsupported(entity, &raw)?;
    }
    let common: CommonListQuery = raw.typed();
    let shape_type: ShapeTypeQuery = raw.typed();
    let params = ListParams::parse(&common)?;
    let srid = output_srid(&raw.typed())?;
    let area: Option<Geometry<f64>> = match &params.geo.polygon {
        Some(PolygonSpec::Coordinates { geometry, .. }) => Some(geometry.clone()),
        Some(PolygonSpec::Shape(shape)) => Some(resolve_shape(&*state.content, shape).await?),
        None => None,
    };
    let list = |value: Option<&str>| {
        value.map(|v| {
            v.split(',')
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        })
    };
    let (ids, sources, types) = (
        list(common.idlist.as_deref()),
        list(common.source.as_deref()),
        list(shape_type.shape_type.as_deref()),
    );
    let search = common.searchfilter.as_deref().map(fold);

    let mut shapes: Vec<Value> = state
        .content
        .all("GeoShape")
        .await?
        .into_iter()
        .filter(|d| {
            ids.as_ref()
                .is_none_or(|l| l.contains(&text(d, "Id").to_lowercase()))
        })
        .filter(|d| {
            sources
                .as_ref()
                .is_none_or(|l| l.contains(&text(d, "Source").to_lowercase()))
        })
        .filter(|d| {
            types
                .as_ref()
                .is_none_or(|l| l.contains(&text(d, "Type").to_lowercase()))
        })
        .filter(|d| {
            search.as_ref().is_none_or(|s| {
                fold(text(d, "Name")).contains(s.as_str()) || text(d, "Id").eq_ignore_ascii_case(s)
            })
        })
        .filter(|d| {
            area.as_ref()
                .is_none_or(|a| from_geojson(&d["Geometry"]).is_some_and(|g| a.intersects(&g)))
        })
        .collect();
    shapes.sort_by(|a, b| {
        (
            text(a, "Type"),
            fold(text(a, "Name")),
            text(a, "Id").to_lowercase(),
        )
            .cmp(&(
                text(b, "Type"),
                fold(text(b, "Name")),
                text(b, "Id").to_lowercase(),
            ))
    });

    if params.as_id_array {
        let ids: Vec<&str> = shapes.iter().map(|d| text(d, "Id")).collect();
        return Ok(json_response(serde_json::json!(ids).to_string()));
    }
    // `pagesize=-1`: every shape on one page (there are few; they are in memory already).
    let (size, number) = if params.whole_dataset {
        (shapes.len().max(1), 1)
    } else {
        (params.page.size as usize, params.page.number as usize)
    };
    let total = shapes.len() as u64;
    let total_pages = total.div_ceil(size as u64);
    let link = |n: usize| {
        format!(
            "{}{}?{}",
            state.base_url,
            uri.path(),
            raw.with(&[("pagenumber", n.to_string())])
        )
    };
    let items = shapes
        .into_iter()
        .skip((number - 1).saturating_mul(size))
        .take(size)
        .map(|d| {
            let doc = in_srid(d, srid)?;
            Ok(shape_document(&doc.to_string(), &params.projection)?)
        })
        .collect::<Result<Vec<String>, ContentError>>()?;
    let envelope = Envelope {
        total_results: total,
        total_pages,
        current_page: number as u32,
        previous_page: (number > 1 && number as u64 <= total_pages).then(|| link(number - 1)),
        next_page: ((number as u64) < total_pages).then(|| link(number + 1)),
        seed: None,
        total_estimated: false,
    };
    Ok(json_response(envelope.render(&items)))
}

pub(crate) async fn single(
    State(state): State<UtilityState>,
    Path(id): Path<String>,
    AxumRawQuery(query): AxumRawQuery,
) -> Result<Response, ContentError> {
    let raw = RawQuery::parse(query.as_deref());
    let srid = output_srid(&raw.typed())?;
    let projection = crate::params::Projection::parse(&raw.typed::<SingleQuery>())?;
    let stored =
        state.content.get("GeoShape", &id).await?.ok_or_else(|| {
            ContentError::NotFound(format!("GeoShapes has no shape with id '{id}'"))
        })?;
    let doc: Value = serde_json::from_str(&stored).map_err(hub_store::StoreError::from)?;
    Ok(json_response(shape_document(
        &in_srid(doc, srid)?.to_string(),
        &projection,
    )?))
}
