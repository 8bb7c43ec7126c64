//! Whole queries of the Time Series read routes: scope, joins, fixed conditions,
//! closed-data rules, the compiled `where`, deterministic ordering, limit/offset.

use serde::{Deserialize, Serialize};

use super::access::{access, reachable_rules};
use super::filter;
use super::narrow::{narrow_history, NarrowParts, NarrowRange};
pub use super::narrow::{NarrowHistory, ProvenanceRead, MAX_NARROW_SERIES};
use super::order::{deterministic_order, order_by_terms};
use super::parser::Where;
use super::regex_check;
use super::schema::{DefList, Kind};
use super::select::{expand_select, Target};
use super::unordered::catalog_read;
pub use super::unordered::{
    CatalogKind, CatalogRead, CellSource, UnorderedRead, MAX_UNORDERED_ROWS,
};
use super::windows::HistoryWindows;
use super::TsQueryError;
use crate::{Dialect, SqlBuilder, SqlValue};

/// Which read route a query serves.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// `/{repr}/{stationTypes}`
    Stations,
    /// `/{repr}/{stationTypes}/{dataTypes}`
    StationsTypes,
    /// `…/latest`
    Latest,
    /// `…/{from}/{to}`, epoch milliseconds, half-open.
    History { from: i64, to: i64 },
    /// `…/{stationTypes}/metadata/{from}/{to}`
    MetadataHistory { from: i64, to: i64 },
    /// `/{repr},edge/{edgeTypes}`
    Edges,
    /// `/{repr},event/{origins}[/latest|/{t}|/{from}/{to}]`
    Events(EventScope),
}

#[derive(Debug, Clone, PartialEq)]
pub enum EventScope {
    All,
    Latest,
    At(i64),
    Range(i64, i64),
}

impl Route {
    /// The definition lists in scope (select and where).
    pub fn scope(&self) -> &'static [DefList] {
        use DefList::*;
        match self {
            Route::Stations => &[Station, Parent],
            Route::StationsTypes => &[Station, Parent, Datatype],
            Route::Latest | Route::History { .. } => {
                &[Station, Parent, Datatype, Measurement, Value, Provenance]
            }
            Route::MetadataHistory { .. } => &[Station, Parent, MetadataHistory],
            Route::Edges => &[Edge, StationBegin, StationEnd],
            Route::Events(_) => &[Event, Location, Provenance],
        }
    }
    fn measurements(&self) -> bool {
        matches!(self, Route::Latest | Route::History { .. })
    }
}

/// A closed-data rule: a measurement is visible when its series matches every non-empty
/// criterion. An empty rule matches everything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AccessRule {
    /// Station types (`ParkingStation`); empty = any.
    pub station_types: Vec<String>,
    /// Station origins (`FAMAS`); empty = any.
    pub origins: Vec<String>,
    /// Data type names (`free`); empty = any.
    pub data_types: Vec<String>,
    /// Periods in seconds; empty = any.
    pub periods: Vec<i64>,
}

/// Everything a read query needs.
#[derive(Debug, Clone)]
pub struct TsQuery {
    pub route: Route,
    pub tree: bool,
    /// Station types / edge types / event origins; `None` = all (`*`).
    pub types: Option<Vec<String>>,
    /// Data types; `None` = all.
    pub data_types: Option<Vec<String>>,
    pub filter: Option<Where>,
    pub select: Option<String>,
    pub distinct: bool,
    /// `<= 0` = no limit.
    pub limit: i64,
    /// `< 0` = no offset.
    pub offset: i64,
    /// Closed-data rules OR-ed together for measurement routes; `None` = sees all (admin).
    pub access: Option<Vec<AccessRule>>,
}

/// One output column of a compiled query.
#[derive(Debug, Clone)]
pub struct OutColumn {
    /// Output key (`sname`, `smetadata.a.b`, `_timestamp`, `_stationcode`).
    pub key: String,
    /// How to render (a JSON path makes it `Json`).
    pub kind: Kind,
    /// The definition list (None for grouping/ordering columns).
    pub list: Option<DefList>,
    /// Grouping columns of tree mode are never emitted.
    pub hidden: bool,
}

/// SQL text, parameters and the column layout of the result.
#[derive(Debug, Clone)]
pub struct CompiledTs {
    pub sql: SqlBuilder,
    pub columns: Vec<OutColumn>,
    /// The same answer as two narrow reads a backend may merge instead of running
    /// `sql` (history routes whose `where` splits into series and measurement parts,
    /// and so on PostgreSQL latest values); see [`NarrowHistory`].
    pub narrow: Option<NarrowHistory>,
    /// The same answer read in any order and sorted by the store (latest values without
    /// a limit); see [`UnorderedRead`].
    pub unordered: Option<UnorderedRead>,
    /// Windows at the start of a flat history's range that may hold the whole page,
    /// tried before `sql`; see [`HistoryWindows`].
    pub windows: Option<HistoryWindows>,
    /// `sql` reads the catalog alone (stations, their metadata, data types, series and
    /// edges; no measurement, provenance or event): its answer changes only with the
    /// catalog, so a store may keep it while the catalog's revision stands.
    pub catalog_only: bool,
}

pub(super) fn yes(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => "1",
        Dialect::Postgres => "true",
    }
}

pub(super) fn in_list(b: &mut SqlBuilder, expr: &str, values: &[String]) {
    b.sql(&format!(" AND {expr} IN "));
    b.list(values.iter().cloned());
}

/// Compiles a read query.
pub fn compile_query(q: &TsQuery, dialect: Dialect) -> Result<CompiledTs, TsQueryError> {
    let scope = q.route.scope();
    let targets = expand_select(q.select.as_deref(), scope)?;
    let used_where = match &q.filter {
        Some(w) => filter::check(w, scope)?,
        None => Vec::new(),
    };
    let access_rules = reachable_rules(
        q.access.as_deref(),
        q.types.as_deref(),
        q.data_types.as_deref(),
    );
    let mvalue_tables = match (&q.filter, q.route.measurements()) {
        (Some(w), true) => filter::mvalue_tables(w)?,
        _ => None,
    };
    let uses = |t: &str| {
        targets.iter().any(|x| x.field.table == t) || used_where.iter().any(|f| f.table == t)
    };
    let mut b = SqlBuilder::new(dialect);
    let mut columns = Vec::new();
    let y = yes(dialect);

    // Hidden / leading columns.
    let mut lead: Vec<(&str, Kind, bool, String)> = Vec::new(); // key, kind, hidden, expr
    let time_expr = |c: &str| c.to_string();
    match (&q.route, q.tree) {
        (Route::Latest | Route::History { .. }, false) => {
            lead.push(("_timestamp", Kind::Time, false, time_expr("me.timestamp")))
        }
        (Route::Edges, true) => {
            lead.push(("_edgetype", Kind::Text, true, "i.stationtype".into()));
            lead.push(("_edgecode", Kind::Text, true, "i.stationcode".into()));
        }
        (Route::Events(_), true) => {
            lead.push(("_eventorigin", Kind::Text, true, "ev.origin".into()));
            lead.push((
                "_eventseriesuuid",
                Kind::Text,
                true,
                "ev.event_series_uuid".into(),
            ));
            lead.push(("_eventuuid", Kind::Text, true, "ev.uuid".into()));
        }
        (Route::Edges | Route::Events(_), false) => {}
        (route, true) => {
            lead.push(("_stationtype", Kind::Text, true, "s.stationtype".into()));
            lead.push(("_stationcode", Kind::Text, true, "s.stationcode".into()));
            if !matches!(route, Route::Stations | Route::MetadataHistory { .. }) {
                lead.push(("_datatypename", Kind::Text, true, "t.cname".into()));
            }
            if route.measurements() {
                lead.push(("_timestamp", Kind::Time, true, time_expr("me.timestamp")));
            }
            if let Route::MetadataHistory { .. } = route {
                lead.push(("_timestamp", Kind::Time, true, time_expr("mh.created_on")));
            }
        }
        (_, false) => {}
    }
    // When the output contains a unique key of the route's rows, DISTINCT is a no-op and
    // the preferred ordering is already total: skip both (large speed-up on big selects).
    let has = |alts: &[&str]| {
        alts.iter()
            .any(|k| lead.iter().any(|l| l.0 == *k) || targets.iter().any(|t| t.key() == *k))
    };
    let unique = match &q.route {
        Route::Latest | Route::History { .. } => [
            &["stype", "_stationtype"][..],
            &["scode", "_stationcode"],
            &["tname", "_datatypename"],
            &["mperiod"],
            &["mvalidtime", "_timestamp"],
            &["mvalue"],
        ]
        .iter()
        .all(|a| has(a)),
        Route::Stations => has(&["stype", "_stationtype"]) && has(&["scode", "_stationcode"]),
        Route::Edges => has(&["etype", "_edgetype"]) && has(&["ecode", "_edgecode"]),
        Route::Events(_) => has(&["evuuid", "_eventuuid"]),
        _ => false,
    };
    b.sql(if q.distinct && !unique {
        "SELECT DISTINCT "
    } else {
        "SELECT "
    });
    let mut first = true;
    let mut comma = |b: &mut SqlBuilder| {
        if !first {
            b.sql(", ");
        }
        first = false;
    };
    // Each SQL column's expression when it is a plain column (the catalog plan of an
    // unordered read takes those of stations, types and provenances from the store).
    let mut plain_exprs: Vec<Option<String>> = Vec::new();
    for (key, kind, hidden, expr) in &lead {
        comma(&mut b);
        b.sql(expr);
        plain_exprs.push(Some(expr.clone()));
        columns.push(OutColumn {
            key: key.to_string(),
            kind: *kind,
            list: None,
            hidden: *hidden,
        });
    }
    for t in &targets {
        comma(&mut b);
        select_target(&mut b, t);
        match t.json_path {
            Some(_) => plain_exprs.push(None),
            None => plain_exprs.extend(t.field.exprs(dialect).into_iter().map(Some)),
        }
        let kind = if t.json_path.is_some() {
            Kind::Json
        } else {
            t.field.kind
        };
        columns.push(OutColumn {
            key: t.key(),
            kind,
            list: Some(t.field.list),
            hidden: false,
        });
    }
    if columns.is_empty() {
        b.sql("NULL");
        plain_exprs.push(Some("NULL".into()));
        columns.push(OutColumn {
            key: "_none".into(),
            kind: Kind::Text,
            list: None,
            hidden: true,
        });
    }
    let select_end = b.as_sql().len();
    let select_has_params = !b.params().is_empty();

    let ordinals = deterministic_order(q, &columns, unique);
    // A page in station order (trees, station lists) can walk the station index and
    // stop after its limit when PostgreSQL finds parents by key (see `station_joins`).
    let parents = match ordinals.first().and_then(|o| plain_exprs[o - 1].as_deref()) {
        Some("s.stationtype") if q.limit > 0 => ParentJoin::ByKey,
        _ => ParentJoin::Hashed,
    };

    // FROM and joins.
    let needs_parent = uses("p") || uses("pm");
    let station_joins = |b: &mut SqlBuilder| {
        station_joins(b, uses("m"), needs_parent.then_some(parents), uses("pm"));
    };
    match &q.route {
        Route::Stations => {
            b.sql(" FROM ts_station s");
            station_joins(&mut b);
        }
        Route::MetadataHistory { .. } => {
            b.sql(" FROM ts_station s JOIN ts_metadata mh ON mh.station_id = s.id");
            station_joins(&mut b);
        }
        Route::StationsTypes | Route::Latest | Route::History { .. } => {
            match &q.route {
                Route::Latest => {
                    b.sql(" FROM ts_latest me JOIN ts_series ts ON ts.id = me.series_id")
                }
                Route::History { .. } => {
                    b.sql(" FROM ts_history me JOIN ts_series ts ON ts.id = me.series_id")
                }
                _ => b.sql(" FROM ts_series ts"),
            };
            b.sql(" JOIN ts_station s ON s.id = ts.station_id JOIN ts_type t ON t.id = ts.type_id");
            station_joins(&mut b);
            if uses("tm") {
                b.sql(" LEFT JOIN ts_type_metadata tm ON tm.id = t.meta_data_id");
            }
            if uses("pr") {
                join_provenance(&mut b, "me.provenance_id");
            }
        }
        Route::Edges => {
            b.sql(" FROM ts_edge e JOIN ts_station i ON i.id = e.edge_data_id");
            b.sql(" LEFT JOIN ts_station o ON o.id = e.origin_id LEFT JOIN ts_station d ON d.id = e.destination_id");
        }
        Route::Events(_) => {
            b.sql(" FROM ts_event ev LEFT JOIN ts_location loc ON loc.id = ev.location_id");
            join_provenance(&mut b, "ev.provenance_id");
            b.sql(" LEFT JOIN ts_metadata evm ON evm.id = ev.meta_data_id");
        }
    }

    // Fixed conditions.
    match &q.route {
        Route::Edges => {
            b.sql(&format!(
                " WHERE i.available = {y} AND (o.id IS NULL OR o.available = {y}) AND (d.id IS NULL OR d.available = {y})"
            ));
            if let Some(types) = &q.types {
                in_list(&mut b, "i.stationtype", types);
            }
        }
        Route::Events(scope) => {
            b.sql(" WHERE 1 = 1");
            if let Some(types) = &q.types {
                in_list(&mut b, "ev.origin", types);
            }
            let t = |b: &mut SqlBuilder, ms: i64| time_param(b, ms);
            match scope {
                EventScope::All => {}
                EventScope::Latest => {
                    // SQLite sorts NULLs first ascending (last descending); PostgreSQL is told to.
                    b.sql(match dialect {
                        Dialect::Sqlite => " AND ev.id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY origin, event_series_uuid ORDER BY event_start DESC, event_end DESC, id DESC) AS rn FROM ts_event) AS lat WHERE rn = 1)",
                        Dialect::Postgres => " AND ev.id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY origin, event_series_uuid ORDER BY event_start DESC NULLS LAST, event_end DESC NULLS LAST, id DESC) AS rn FROM ts_event) AS lat WHERE rn = 1)",
                    });
                }
                EventScope::At(ms) => {
                    b.sql(" AND (ev.event_end IS NULL OR ev.event_end > ");
                    t(&mut b, *ms);
                    b.sql(")");
                }
                EventScope::Range(from, to) => {
                    b.sql(" AND (ev.event_end IS NULL OR ev.event_end > ");
                    t(&mut b, *from);
                    b.sql(") AND ev.event_start <= ");
                    t(&mut b, *to);
                }
            }
        }
        route => {
            b.sql(&format!(" WHERE s.available = {y}"));
            if needs_parent {
                b.sql(&format!(" AND (p.id IS NULL OR p.available = {y})"));
            }
            if let Some(types) = &q.types {
                in_list(&mut b, "s.stationtype", types);
            }
            if !matches!(route, Route::Stations | Route::MetadataHistory { .. }) {
                if let Some(dts) = &q.data_types {
                    in_list(&mut b, "t.cname", dts);
                }
            }
            match route {
                Route::History { from, to } => {
                    b.sql(" AND me.timestamp >= ");
                    time_param(&mut b, *from);
                    b.sql(" AND me.timestamp < ");
                    time_param(&mut b, *to);
                }
                Route::MetadataHistory { from, to } => {
                    b.sql(" AND mh.created_on >= ");
                    time_param(&mut b, *from);
                    b.sql(" AND mh.created_on < ");
                    time_param(&mut b, *to);
                }
                _ => {}
            }
            if route.measurements() {
                if let Some(tables) = &mvalue_tables {
                    b.sql(" AND ts.value_table IN (");
                    for (k, v) in tables.iter().enumerate() {
                        if k > 0 {
                            b.sql(", ");
                        }
                        b.param(SqlValue::Int(*v));
                    }
                    b.sql(")");
                }
                if let Some(rules) = &access_rules {
                    b.sql(" AND ");
                    access(&mut b, rules);
                }
            }
        }
    }
    let mut patterns = Vec::new();
    if let Some(w) = &q.filter {
        if !w.items.is_empty() {
            b.sql(" AND ");
            filter::compile(w, &mut b, &mut patterns)?;
        }
    }

    let range = match &q.route {
        Route::History { from, to } => Some(NarrowRange::History {
            from: *from,
            to: *to,
        }),
        Route::Latest => Some(NarrowRange::Latest),
        _ => None,
    };
    let narrow = match range {
        Some(range) => narrow_history(
            q,
            dialect,
            NarrowParts {
                range,
                lead: &lead,
                targets: &targets,
                mvalue_tables: mvalue_tables.as_deref(),
                access: access_rules.as_deref(),
                needs_parent,
                uses: &uses,
                order: &ordinals,
                distinct: q.distinct && !unique,
            },
        )?,
        _ => None,
    };
    let unordered = match (&q.route, q.limit) {
        (Route::Latest, limit) if limit <= 0 => Some(UnorderedRead {
            catalog: match (dialect, select_has_params, q.distinct && !unique) {
                (Dialect::Postgres, false, false) => {
                    catalog_read(&b, select_end, &plain_exprs, needs_parent)
                }
                _ => None,
            },
            sql: b.clone(),
            order: ordinals.iter().map(|o| o - 1).collect(),
            offset: q.offset.max(0) as u64,
            max_rows: MAX_UNORDERED_ROWS,
        }),
        _ => None,
    };
    b.sql(" ORDER BY ")
        .sql(&order_by_terms(&ordinals, &plain_exprs, dialect));
    if q.limit > 0 {
        b.sql(" LIMIT ").param(SqlValue::Int(q.limit));
    } else if q.offset > 0 && dialect == Dialect::Sqlite {
        b.sql(" LIMIT -1");
    }
    if q.offset > 0 {
        b.sql(" OFFSET ").param(SqlValue::Int(q.offset));
    }
    // Checked last, so that any other error of the query is answered first (as before
    // the check moved here from the API crate).
    patterns
        .iter()
        .try_for_each(|p| regex_check::check_pattern(p))?;
    Ok(CompiledTs {
        sql: b,
        columns,
        narrow,
        unordered,
        windows: HistoryWindows::of(q, dialect),
        catalog_only: matches!(
            q.route,
            Route::Stations | Route::StationsTypes | Route::MetadataHistory { .. } | Route::Edges
        ) && !uses("me")
            && !uses("pr"),
    })
}

/// How PostgreSQL finds a station's parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ParentJoin {
    /// From a table of the stations that are some station's parent: a hash join
    /// otherwise builds its table from every station to find, usually, none (a fifth of
    /// a latest answer's time for 1,000 stations without parents; the parents come from
    /// the `parent_id` index).
    Hashed,
    /// By the parent's key, for a page that walks stations in order and stops at its
    /// limit: the table above is built whole before the walk's first row (2.5 of 4 ms
    /// of a 200-row tree page at scale 10).
    ByKey,
}

/// The station's metadata, parent (when `parent` says how) and parent's metadata, each
/// joined when used. SQLite looks each parent up by its key either way.
pub(super) fn station_joins(
    b: &mut SqlBuilder,
    metadata: bool,
    parent: Option<ParentJoin>,
    parent_metadata: bool,
) {
    if metadata {
        b.sql(" LEFT JOIN ts_metadata m ON m.id = s.meta_data_id");
    }
    if let Some(how) = parent {
        b.sql(match (b.dialect, how) {
            (Dialect::Postgres, ParentJoin::Hashed) => " LEFT JOIN (SELECT *, xmin FROM ts_station WHERE id IN (SELECT parent_id FROM ts_station WHERE parent_id IS NOT NULL)) p ON p.id = s.parent_id",
            _ => " LEFT JOIN ts_station p ON p.id = s.parent_id",
        });
    }
    if parent_metadata {
        b.sql(" LEFT JOIN ts_metadata pm ON pm.id = p.meta_data_id");
    }
}

/// Times are epoch milliseconds in both schemas.
pub(super) fn time_param(b: &mut SqlBuilder, ms: i64) {
    b.param(SqlValue::Int(ms));
}

pub(super) fn select_target(b: &mut SqlBuilder, t: &Target) {
    let d = b.dialect;
    match &t.json_path {
        Some(path) => {
            let col = match t.field.kind {
                Kind::Value => "me.json_value".to_string(),
                _ => format!("{}.{}", t.field.table, t.field.column),
            };
            filter::json_access(b, &col, path, "json");
        }
        None => {
            b.sql(&t.field.exprs(d).join(", "));
        }
    }
}

/// `LEFT JOIN` of the provenance (alias `pr`) to rows whose provenance id is `id`. On
/// PostgreSQL the provenance rows are a subquery planned apart (`OFFSET 0` keeps it from
/// being merged into the join): joined directly, a small `ts_provenance` gets a nested
/// loop that scans it again for every row, each scan asking the file's size (measured
/// on an empty one: 5–10 ms of a 10,000-row read against 2–3 ms when its rows are read
/// once and joined from memory). A large table still gets the hash join its size calls
/// for.
pub(super) fn join_provenance(b: &mut SqlBuilder, id: &str) {
    match b.dialect {
        // `xmin`: the row version a catalog read compares (see `CatalogRead`).
        Dialect::Postgres => b.sql(" LEFT JOIN (SELECT *, xmin FROM ts_provenance OFFSET 0) pr"),
        Dialect::Sqlite => b.sql(" LEFT JOIN ts_provenance pr"),
    };
    b.sql(" ON pr.id = ").sql(id);
}
