//! `hub import-timeseries`: loads the writer's JSON shapes from a file.
//!
//! File shape (every key optional): `{"provenance": {lineage, dataCollector, …},
//! "dataTypes": [DataTypeDto], "stations": {stationType: [StationDto]},
//! "records": {stationType: {station: {type: [{timestamp, value, period}]}}}}`.
//! Stations are synced in file order per type (parents first), without deactivating others.

use std::path::Path;

use hub_store::timeseries::{SyncFlags, TimeSeriesRepo};
use serde_json::Value;

use crate::writer::{parse_data_types, parse_provenance, parse_records, parse_stations};
use crate::ApiError;

#[derive(Debug, Default, Clone, PartialEq, serde::Serialize)]
pub struct ImportSummary {
    pub data_types: u64,
    pub stations: u64,
    pub records: u64,
    pub skipped_records: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not valid JSON: {source}")]
    Json {
        path: String,
        source: serde_json::Error,
    },
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] hub_store::StoreError),
}

impl From<ApiError> for ImportError {
    fn from(e: ApiError) -> Self {
        ImportError::Invalid(e.to_string())
    }
}

pub async fn import_file(
    store: &dyn TimeSeriesRepo,
    path: &Path,
) -> Result<ImportSummary, ImportError> {
    let p = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ImportError::Io {
        path: p.clone(),
        source,
    })?;
    let v: Value =
        serde_json::from_str(&text).map_err(|source| ImportError::Json { path: p, source })?;
    import_value(store, &v).await
}

pub async fn import_value(
    store: &dyn TimeSeriesRepo,
    v: &Value,
) -> Result<ImportSummary, ImportError> {
    let o = v
        .as_object()
        .ok_or_else(|| ImportError::Invalid("$: must be a JSON object".into()))?;
    let mut sum = ImportSummary::default();
    let provenance = match o.get("provenance") {
        Some(p) => Some(
            store
                .provenance(parse_provenance(p, "$.provenance")?)
                .await?,
        ),
        None => None,
    };
    if let Some(t) = o.get("dataTypes") {
        let types = parse_data_types(t, "$.dataTypes")?;
        sum.data_types = types.len() as u64;
        store.sync_data_types(types).await?;
    }
    if let Some(s) = o.get("stations") {
        let map = s
            .as_object()
            .ok_or_else(|| ImportError::Invalid("$.stations: must be a JSON object".into()))?;
        for (stype, list) in map {
            let stations = parse_stations(list, &format!("$.stations.{stype}"), stype)?;
            sum.stations += stations.len() as u64;
            store
                .sync_stations(stype.clone(), stations, SyncFlags::default())
                .await?;
        }
    }
    if let Some(r) = o.get("records") {
        let map = r
            .as_object()
            .ok_or_else(|| ImportError::Invalid("$.records: must be a JSON object".into()))?;
        for (stype, inner) in map {
            let (records, prov) = parse_records(inner, &format!("$.records.{stype}"))?;
            let s = store
                .push_records(stype.clone(), prov.or(provenance.clone()), records)
                .await?;
            sum.records += s.inserted;
            sum.skipped_records += s.skipped_older;
        }
    }
    Ok(sum)
}
