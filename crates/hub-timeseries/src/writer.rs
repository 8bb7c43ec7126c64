//! Writer (ingestion) endpoints for data collectors, under `/v2/json/...` and protected
//! by the writer role: provenance, syncStations, syncDataTypes, pushRecords,
//! getDateOfLastRecord. Payloads are checked field by field; a bad one is a 400 naming
//! the JSON path of the offending value.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{Extensions, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use hub_store::timeseries::{
    DataTypeInput, ProvenanceInput, RecordInput, RecordValue, StationInput,
};
use serde_json::{json, Map, Value};

use crate::{ApiError, TimeseriesState};

fn authorize(st: &TimeseriesState, ext: &Extensions) -> Result<(), ApiError> {
    let principal = ext
        .get::<hub_model::Principal>()
        .ok_or(ApiError::Unauthorized)?;
    if principal.has_series_role(&st.config.writer_role)
        || principal.has_series_role(&st.config.admin_role)
    {
        Ok(())
    } else {
        Err(ApiError::Forbidden(format!(
            "The writer endpoints need the role '{}'",
            st.config.writer_role
        )))
    }
}

fn body(bytes: &Bytes) -> Result<Value, ApiError> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad(format!("The request body is not valid JSON: {e}")))?;
    match hub_model::text::first_nul(&v) {
        Some(path) => Err(at(
            &path,
            "holds a NUL character (\\u0000), which no value may contain",
        )),
        None => Ok(v),
    }
}

fn at(path: &str, what: &str) -> ApiError {
    ApiError::bad(format!("{path}: {what}"))
}

fn opt_str(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>, ApiError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(at(&format!("{path}.{key}"), "must be a string")),
    }
}

fn req_str(o: &Map<String, Value>, key: &str, path: &str) -> Result<String, ApiError> {
    opt_str(o, key, path)?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| at(&format!("{path}.{key}"), "is required (a non-empty string)"))
}

fn obj<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, ApiError> {
    v.as_object()
        .ok_or_else(|| at(path, "must be a JSON object"))
}

fn arr<'a>(v: &'a Value, path: &str) -> Result<&'a Vec<Value>, ApiError> {
    v.as_array().ok_or_else(|| at(path, "must be a JSON array"))
}

/// `[StationDto]` of the reference writer.
pub fn parse_stations(v: &Value, path: &str, stype: &str) -> Result<Vec<StationInput>, ApiError> {
    let mut out = Vec::new();
    for (i, s) in arr(v, path)?.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let o = obj(s, &p)?;
        let num = |k: &str| -> Result<Option<f64>, ApiError> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => Ok(n.as_f64()),
                Some(_) => Err(at(&format!("{p}.{k}"), "must be a number")),
            }
        };
        let (lat, lon) = (num("latitude")?, num("longitude")?);
        let coordinate = match (lon, lat) {
            (Some(x), Some(y)) => {
                let crs = opt_str(o, "coordinateReferenceSystem", &p)?
                    .unwrap_or_else(|| "EPSG:4326".into());
                match crs.as_str() {
                    "EPSG:4326" => Some((x, y)),
                    "EPSG:3857" => {
                        const R: f64 = 6_378_137.0;
                        Some((
                            (x / R).to_degrees(),
                            (2.0 * (y / R).exp().atan() - std::f64::consts::FRAC_PI_2).to_degrees(),
                        ))
                    }
                    other => {
                        return Err(at(
                            &format!("{p}.coordinateReferenceSystem"),
                            &format!("'{other}' is not supported; use EPSG:4326 or EPSG:3857"),
                        ))
                    }
                }
            }
            (None, None) => None,
            _ => return Err(at(&p, "latitude and longitude must be given together")),
        };
        let metadata = match o.get("metaData") {
            None | Some(Value::Null) => None,
            Some(m @ Value::Object(_)) => Some(m.clone()),
            Some(_) => return Err(at(&format!("{p}.metaData"), "must be a JSON object")),
        };
        let parent = match opt_str(o, "parentStation", &p)? {
            Some(code) => Some((
                opt_str(o, "parentStationType", &p)?.unwrap_or_else(|| stype.to_string()),
                code,
            )),
            None => None,
        };
        if let Some(t) = opt_str(o, "stationType", &p)? {
            if t != stype {
                return Err(at(
                    &format!("{p}.stationType"),
                    &format!("'{t}' differs from the station type '{stype}' of the request"),
                ));
            }
        }
        out.push(StationInput {
            code: req_str(o, "id", &p)?,
            name: req_str(o, "name", &p)?,
            origin: opt_str(o, "origin", &p)?,
            coordinate,
            parent,
            metadata,
        });
    }
    Ok(out)
}

/// `[DataTypeDto]`.
pub fn parse_data_types(v: &Value, path: &str) -> Result<Vec<DataTypeInput>, ApiError> {
    let mut out = Vec::new();
    for (i, t) in arr(v, path)?.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let o = obj(t, &p)?;
        let metadata = match o.get("metaData") {
            None | Some(Value::Null) => None,
            Some(m @ Value::Object(_)) => Some(m.clone()),
            Some(_) => return Err(at(&format!("{p}.metaData"), "must be a JSON object")),
        };
        out.push(DataTypeInput {
            name: req_str(o, "name", &p)?,
            unit: opt_str(o, "unit", &p)?,
            description: opt_str(o, "description", &p)?,
            rtype: opt_str(o, "rtype", &p)?,
            metadata,
        });
    }
    Ok(out)
}

fn parse_record_list(
    v: &Value,
    path: &str,
    code: &str,
    dtype: &str,
    out: &mut Vec<RecordInput>,
) -> Result<(), ApiError> {
    for (i, r) in arr(v, path)?.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let o = obj(r, &p)?;
        let timestamp = o.get("timestamp").and_then(Value::as_i64).ok_or_else(|| {
            at(
                &format!("{p}.timestamp"),
                "is required (epoch milliseconds, an integer)",
            )
        })?;
        let period = o
            .get("period")
            .and_then(Value::as_i64)
            .ok_or_else(|| at(&format!("{p}.period"), "is required (seconds, an integer)"))?;
        let value = match o.get("value") {
            Some(Value::Number(n)) => RecordValue::Double(n.as_f64().unwrap_or(f64::NAN)),
            Some(Value::String(s)) => RecordValue::Text(s.clone()),
            Some(j @ Value::Object(_)) => RecordValue::Json(j.to_string()),
            _ => {
                return Err(at(
                    &format!("{p}.value"),
                    "is required: a number, a string or a JSON object",
                ))
            }
        };
        out.push(RecordInput {
            station_code: code.to_string(),
            data_type: dtype.to_string(),
            period,
            timestamp,
            value,
        });
    }
    Ok(())
}

/// Records of one station type: either the reference's DataMap (`{provenance, branch:
/// {code: {branch: {type: {data: [...]}}}}}`) or the plain `{code: {type: [...]}}`.
/// Returns the records and the DataMap's provenance uuid.
pub fn parse_records(
    v: &Value,
    path: &str,
) -> Result<(Vec<RecordInput>, Option<String>), ApiError> {
    let o = obj(v, path)?;
    let mut out = Vec::new();
    if let Some(branch) = o.get("branch") {
        let provenance = opt_str(o, "provenance", path)?;
        let bp = format!("{path}.branch");
        for (code, st) in obj(branch, &bp)? {
            let sp = format!("{bp}.{code}");
            let types = obj(st, &sp)?
                .get("branch")
                .map(|b| obj(b, &format!("{sp}.branch")))
                .transpose()?;
            for (dtype, t) in types.into_iter().flatten() {
                let tp = format!("{sp}.branch.{dtype}");
                let data = obj(t, &tp)?
                    .get("data")
                    .ok_or_else(|| at(&tp, "has no 'data' array"))?;
                parse_record_list(data, &format!("{tp}.data"), code, dtype, &mut out)?;
            }
        }
        return Ok((out, provenance));
    }
    for (code, st) in o {
        let sp = format!("{path}.{code}");
        for (dtype, list) in obj(st, &sp)? {
            parse_record_list(list, &format!("{sp}.{dtype}"), code, dtype, &mut out)?;
        }
    }
    Ok((out, None))
}

pub fn parse_provenance(v: &Value, path: &str) -> Result<ProvenanceInput, ApiError> {
    let o = obj(v, path)?;
    Ok(ProvenanceInput {
        uuid: opt_str(o, "uuid", path)?.unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
        lineage: req_str(o, "lineage", path)?,
        data_collector: req_str(o, "dataCollector", path)?,
        data_collector_version: opt_str(o, "dataCollectorVersion", path)?.unwrap_or_default(),
    })
}

#[derive(serde::Deserialize)]
pub struct SyncFlags {
    #[serde(rename = "syncState", default = "yes")]
    sync_state: bool,
    #[serde(rename = "onlyActivation", default)]
    only_activation: bool,
    /// Provenance uuid for pushRecords in the plain shape.
    provenance: Option<String>,
}

fn yes() -> bool {
    true
}

pub async fn provenance(
    State(st): State<TimeseriesState>,
    ext: Extensions,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    authorize(&st, &ext)?;
    let p = parse_provenance(&body(&bytes)?, "$")?;
    let uuid = st.store.provenance(p).await?;
    Ok((StatusCode::OK, Json(json!(uuid))).into_response())
}

pub async fn sync_stations(
    State(st): State<TimeseriesState>,
    Path(stype): Path<String>,
    Query(f): Query<SyncFlags>,
    ext: Extensions,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    authorize(&st, &ext)?;
    let stations = parse_stations(&body(&bytes)?, "$", &stype)?;
    let sum = st
        .store
        .sync_stations(
            stype,
            stations,
            hub_store::timeseries::SyncFlags {
                sync_state: f.sync_state,
                only_activation: f.only_activation,
            },
        )
        .await?;
    Ok((StatusCode::CREATED, Json(json!(sum))).into_response())
}

pub async fn sync_data_types(
    State(st): State<TimeseriesState>,
    ext: Extensions,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    authorize(&st, &ext)?;
    let types = parse_data_types(&body(&bytes)?, "$")?;
    let sum = st.store.sync_data_types(types).await?;
    Ok((StatusCode::CREATED, Json(json!(sum))).into_response())
}

pub async fn push_records(
    State(st): State<TimeseriesState>,
    Path(stype): Path<String>,
    Query(f): Query<SyncFlags>,
    ext: Extensions,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    authorize(&st, &ext)?;
    let (records, prov) = parse_records(&body(&bytes)?, "$")?;
    let sum = st
        .store
        .push_records(stype, prov.or(f.provenance), records)
        .await?;
    Ok((StatusCode::CREATED, Json(json!(sum))).into_response())
}

/// `{stationType: {station: {type: [records]}}}` in one transaction per station type.
pub async fn push_records_all(
    State(st): State<TimeseriesState>,
    Query(f): Query<SyncFlags>,
    ext: Extensions,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    authorize(&st, &ext)?;
    let v = body(&bytes)?;
    let mut parsed = Vec::new();
    for (stype, inner) in obj(&v, "$")? {
        parsed.push((
            stype.clone(),
            parse_records(inner, &format!("$.{stype}"))?.0,
        ));
    }
    let mut total = hub_store::timeseries::PushSummary::default();
    for (stype, records) in parsed {
        let s = st
            .store
            .push_records(stype, f.provenance.clone(), records)
            .await?;
        total.inserted += s.inserted;
        total.skipped_older += s.skipped_older;
        total.unknown_stations += s.unknown_stations;
        total.unknown_types += s.unknown_types;
    }
    Ok((StatusCode::CREATED, Json(json!(total))).into_response())
}

#[derive(serde::Deserialize)]
pub struct LastRecord {
    #[serde(rename = "stationId")]
    station_id: Option<String>,
    #[serde(rename = "typeId")]
    type_id: Option<String>,
    period: Option<i64>,
}

pub async fn date_of_last_record(
    State(st): State<TimeseriesState>,
    Path(stype): Path<String>,
    Query(q): Query<LastRecord>,
    ext: Extensions,
) -> Result<Response, ApiError> {
    authorize(&st, &ext)?;
    let code = q
        .station_id
        .ok_or_else(|| ApiError::bad("Query parameter 'stationId' is required"))?;
    let ms = st
        .store
        .last_record(stype, code, q.type_id, q.period)
        .await?;
    Ok(Json(json!(ms)).into_response())
}
