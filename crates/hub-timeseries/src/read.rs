//! Read routes: dispatch by number of path segments (as the reference does), query
//! compilation, execution and the envelope.

use axum::extract::{Path, RawQuery, State};
use axum::http::{header, Extensions, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use hub_query::timeseries::{compile_query, parse_where, EventScope, Route, TsQuery, TsQueryError};
use hub_store::timeseries::TypeList;
use serde_json::{json, Map, Value};

use crate::access::rules_for;
use crate::params::{
    csv_set, parse_path_date, parse_representation, parse_timezone, Dataset, TsQueryParams, Zone,
};
use crate::{flat_writer, shape};
use crate::{ApiError, TimeseriesState};

const ROOT: &[(&str, &str)] = &[
    (
        "tree,node",
        "Topology: Retrieve stations, data types and measurements in a hierarchical form: Useful for overviews and browsing",
    ),
    (
        "flat,node",
        "Data: Retrieve stations, data types and measurements in a flattened form: Useful for aggregation and retrieval of subsets of data",
    ),
    (
        "tree,edge",
        "Topology: Retrieve edges (connections between stations, e.g. road links) in a hierarchical form",
    ),
    (
        "flat,edge",
        "Data: Retrieve edges (connections between stations, e.g. road links) in a flattened form",
    ),
    ("tree,event", "Topology: Retrieve events in a hierarchical form (deprecated)"),
    ("flat,event", "Data: Retrieve events in a flattened form (deprecated)"),
    ("apispec", "The OpenAPI description of this API"),
];

pub async fn root(State(st): State<TimeseriesState>) -> Json<Value> {
    let base = &st.config.base_url;
    Json(Value::Array(
        ROOT.iter()
            .map(|(id, d)| json!({"id": id, "description": d, "self": format!("{base}/{id}")}))
            .collect(),
    ))
}

pub async fn dispatch(
    State(st): State<TimeseriesState>,
    Path(rest): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ext: Extensions,
) -> Result<Response, ApiError> {
    let segs: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    if segs.iter().any(|s| s.is_empty()) || segs.len() > 5 {
        return Err(ApiError::NotFound("Route does not exist".into()));
    }
    let repr = parse_representation(segs[0])?;
    if segs.len() == 1 {
        return type_list(&st, &repr).await;
    }
    let not_found = || {
        ApiError::NotFound(format!(
            "Route does not exist for representation {}",
            repr.enum_name()
        ))
    };
    let types = csv_set(segs[1]);
    let (route, data_types) = match (repr.dataset, &segs[2..]) {
        (Dataset::Node, []) => (Route::Stations, None),
        (Dataset::Node, [dt]) => (Route::StationsTypes, csv_set(dt)),
        (Dataset::Node, [dt, l]) if l.eq_ignore_ascii_case("latest") => {
            (Route::Latest, csv_set(dt))
        }
        (Dataset::Node, [m, from, to]) if m.eq_ignore_ascii_case("metadata") => (
            Route::MetadataHistory {
                from: parse_path_date(from)?,
                to: parse_path_date(to)?,
            },
            None,
        ),
        (Dataset::Node, [dt, from, to]) => (
            Route::History {
                from: parse_path_date(from)?,
                to: parse_path_date(to)?,
            },
            csv_set(dt),
        ),
        (Dataset::Edge, []) => (Route::Edges, None),
        (Dataset::Event, []) => (Route::Events(EventScope::All), None),
        (Dataset::Event, [l]) if l.eq_ignore_ascii_case("latest") => {
            (Route::Events(EventScope::Latest), None)
        }
        (Dataset::Event, [t]) => (Route::Events(EventScope::At(parse_path_date(t)?)), None),
        (Dataset::Event, [from, to]) => (
            Route::Events(EventScope::Range(
                parse_path_date(from)?,
                parse_path_date(to)?,
            )),
            None,
        ),
        _ => return Err(not_found()),
    };
    let p = TsQueryParams::read(query.as_deref()).parse()?;
    // GeoJSON is offered where a row has one geometry: stations, latest measurements,
    // edges. An explicit `format=geojson` elsewhere is a mistake; an Accept header asking
    // for it elsewhere is ignored (clients send broad Accept lists).
    let geo_route = !repr.tree && matches!(route, Route::Stations | Route::Latest | Route::Edges);
    let geojson = crate::geojson::wants_geojson(p.format.as_deref(), &headers)?;
    if geojson && !geo_route && p.format.is_some() {
        return Err(ApiError::bad(
            "Parameter 'format': geojson is offered on the flat stations, latest measurements and edges routes only (/v2/flat/{stationTypes}, /v2/flat/{stationTypes}/{dataTypes}/latest, /v2/flat,edge/{edgeTypes})",
        ));
    }
    let geojson = geojson && geo_route;
    let zone = match (&p.timezone, segs.len() >= 4) {
        (Some(tz), true) => parse_timezone(tz)?,
        _ => Zone::Fixed(chrono::FixedOffset::east_opt(0).expect("zero offset")),
    };
    let filter = match &p.filter {
        Some(w) => Some(parse_where(w)?),
        None => None,
    };
    let q = TsQuery {
        route: route.clone(),
        tree: repr.tree,
        types,
        data_types,
        filter,
        select: p.select.clone(),
        distinct: p.distinct,
        limit: p.limit,
        offset: p.offset,
        access: rules_for(&st.config, ext.get::<hub_model::Principal>()),
    };
    let compiled = compile_query(&q, st.store.dialect()).map_err(|e| match e {
        // hub-query checked the pattern; the answer keeps its description.
        e @ TsQueryError::InvalidRegex { .. } => ApiError::BadRequest {
            message: e.to_string(),
            description: Some("Error in a re/ire/nre/nire filter value".into()),
            info: None,
        },
        e => e.into(),
    })?;
    if geojson {
        let (columns, rows) =
            crate::geojson::collect_rows(&st, compiled, st.config.max_tree_rows).await?;
        let rows = crate::geojson::objects(shape::flat(&columns, &rows, zone, p.shownull));
        return Ok(crate::geojson::feature_collection(
            &route, rows, p.offset, p.limit,
        ));
    }
    let columns = compiled.columns.clone();
    let mut batches = st.store.query_batches(compiled);
    // The first batch (or the query's error) before any byte is written: a failing query
    // is still answered with its status.
    let first = batches.next().await.transpose()?.unwrap_or_default();
    let mut head = Vec::with_capacity(64);
    head.extend_from_slice(b"{\"offset\":");
    serde_json::to_writer(&mut head, &p.offset).expect("writing to a Vec");
    head.extend_from_slice(b",\"limit\":");
    serde_json::to_writer(&mut head, &p.limit).expect("writing to a Vec");
    head.extend_from_slice(b",\"data\":");
    if repr.tree {
        // A tree's keys are sorted, so no part of it is final before its last row: it is
        // built in memory from at most `max_tree_rows` rows (the cursor stops at one more).
        let max = st.config.max_tree_rows;
        let mut rows = first;
        if rows.len() <= max {
            while let Some(batch) = batches.next().await {
                rows.extend(batch?);
                if rows.len() > max {
                    break;
                }
            }
        }
        drop(batches);
        if rows.len() > max {
            return Err(ApiError::bad(format!(
                "TREE BUILDING: Response of more than {max} rows. Please rephrase your request. Use a flat representation (it is streamed, of any size), WHERE, SELECT, LIMIT with OFFSET or a narrow time interval."
            )));
        }
        let mut body = head;
        let data_start = body.len();
        shape::tree_into(&route, &columns, &rows, zone, p.shownull, &mut body);
        #[cfg(debug_assertions)]
        debug_assert_eq!(
            String::from_utf8_lossy(&body[data_start..]),
            serde_json::to_string(&shape::tree_reference(
                &route, &columns, &rows, zone, p.shownull
            ))
            .unwrap_or_default(),
            "streamed tree differs from the value tree"
        );
        let _ = data_start;
        body.push(b'}');
        return Ok(bytes_response(body));
    }
    let second = match first.len() {
        n if n < hub_store::batches::BATCH_ROWS => None,
        _ => batches.next().await.transpose()?,
    };
    let Some(second) = second else {
        // The whole answer is in hand: one body with its length, as before.
        let mut body = head;
        let data_start = body.len();
        body.push(b'[');
        flat_writer::FlatWriter::new(&columns, zone, p.shownull).rows(&first, &mut body);
        body.push(b']');
        #[cfg(debug_assertions)]
        debug_assert_eq!(
            String::from_utf8_lossy(&body[data_start..]),
            serde_json::to_string(&shape::flat(&columns, &first, zone, p.shownull))
                .unwrap_or_default(),
            "written flat rows differ from the value tree"
        );
        let _ = data_start;
        body.push(b'}');
        return Ok(bytes_response(body));
    };
    Ok(stream_flat(
        head,
        columns,
        zone,
        p.shownull,
        vec![first, second],
        batches,
    ))
}

/// A flat answer larger than one batch, written batch by batch into a chunked body: the
/// server holds a batch of rows and its JSON, not the answer. Each chunk is written when
/// the body is polled for it, in the connection's own task: a writer task of its own
/// would hand every chunk over to the connection's (a wake-up per batch, often on the
/// other core). A store error after the first bytes can no longer change the status; it
/// ends the body early (the client sees truncated JSON) and is logged.
fn stream_flat(
    head: Vec<u8>,
    columns: Vec<hub_query::timeseries::OutColumn>,
    zone: Zone,
    shownull: bool,
    ready: Vec<Vec<Vec<hub_store::timeseries::Cell>>>,
    batches: hub_store::Batches<Vec<hub_store::timeseries::Cell>>,
) -> Response {
    let mut chunk = head;
    chunk.push(b'[');
    let writing = FlatChunks {
        writer: flat_writer::FlatWriter::new(&columns, zone, shownull),
        ready: ready.into_iter(),
        batches,
        chunk,
    };
    // `fuse`: the compression layer polls a finished body again, which an `unfold`
    // alone does not allow.
    let chunks = futures::stream::unfold(Some(writing), |writing| async move {
        let mut w = writing?;
        let rows = match w.ready.next() {
            Some(rows) => rows,
            None => match w.batches.next().await {
                Some(Ok(rows)) => rows,
                Some(Err(e)) => {
                    tracing::error!(error = %e, "time series answer ended early");
                    return Some((Err(std::io::Error::other(e.to_string())), None));
                }
                None => {
                    w.chunk.extend_from_slice(b"]}");
                    return Some((Ok(std::mem::take(&mut w.chunk)), None));
                }
            },
        };
        w.writer.rows(&rows, &mut w.chunk);
        w.batches.give_back(rows);
        let out = sized_like(&mut w.chunk);
        Some((Ok(out), Some(w)))
    });
    let body = axum::body::Body::from_stream(futures::StreamExt::fuse(chunks));
    let mut r = body.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json;charset=UTF-8"),
    );
    r
}

/// What a streamed flat answer has still to write: batches in hand, then those to come.
struct FlatChunks {
    writer: flat_writer::FlatWriter,
    ready: std::vec::IntoIter<Vec<Vec<hub_store::timeseries::Cell>>>,
    batches: hub_store::Batches<Vec<hub_store::timeseries::Cell>>,
    chunk: Vec<u8>,
}

/// Takes the written chunk, leaving an empty one with room for a chunk like it: batches
/// write alike, and growing each chunk from nothing copied it about twice over.
fn sized_like(chunk: &mut Vec<u8>) -> Vec<u8> {
    let room = chunk.len() + chunk.len() / 8;
    std::mem::replace(chunk, Vec::with_capacity(room))
}

fn json_response(v: Value) -> Response {
    bytes_response(serde_json::to_vec(&v).unwrap_or_default())
}

fn bytes_response(body: Vec<u8>) -> Response {
    let mut r = body.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json;charset=UTF-8"),
    );
    r
}

async fn type_list(
    st: &TimeseriesState,
    repr: &crate::params::Representation,
) -> Result<Response, ApiError> {
    let what = match repr.dataset {
        Dataset::Node => TypeList::StationTypes,
        Dataset::Edge => TypeList::EdgeTypes,
        Dataset::Event => TypeList::EventOrigins,
    };
    let ids = st.store.type_list(what).await?;
    let base = format!("{}/{}", st.config.base_url, repr.raw);
    let out: Vec<Value> = ids
        .iter()
        .map(|id| {
            let mut m = Map::new();
            m.insert("id".into(), json!(id));
            m.insert("description".into(), Value::Null);
            let links: Vec<(&str, String)> = match repr.dataset {
                Dataset::Node => vec![
                    ("stations", format!("{base}/{id}")),
                    ("stations+datatypes", format!("{base}/{id}/*")),
                    (
                        "stations+datatypes+measurements",
                        format!("{base}/{id}/*/latest"),
                    ),
                ],
                Dataset::Edge => vec![("edges", format!("{base}/{id}"))],
                Dataset::Event => vec![("events", format!("{base}/{id}"))],
            };
            if repr.tree {
                let mut s = Map::new();
                for (k, v) in links {
                    s.insert(k.into(), json!(v));
                }
                m.insert("self".into(), Value::Object(s));
            } else {
                for (k, v) in links {
                    m.insert(format!("self.{k}"), json!(v));
                }
            }
            Value::Object(m)
        })
        .collect();
    Ok(json_response(Value::Array(out)))
}
