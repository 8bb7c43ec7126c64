//! History answers read narrow: the compiled history query joins every measurement row
//! with its station, parent, data type and metadata columns and sorts those wide rows by
//! time, although the history is stored in (series, time) order. The same answer is two
//! reads: one row per series with every series-level column (station, parent, type,
//! period; measurement columns left NULL), and, per series, its measurement columns in
//! time order. Within one series the answer's order is time order (the time is unique
//! in a series and every ordering key before it is a series column), so merging the
//! series' reads by the answer's ordering keys gives the compiled query's rows in its
//! order; `distinct`, `offset` and `limit` apply after the merge as in SQL.
//!
//! Owns: the decision whether a query splits this way (every top-level `where` item
//! refers to series fields only or to measurement fields only) and the SQL of both
//! reads. Must not: run SQL or merge rows (the store does, the same way on any backend).

use super::access::access;
use super::filter;
use super::parser::{Node, Where};
use super::query::{
    in_list, join_provenance, select_target, station_joins, time_param, yes, AccessRule,
    ParentJoin, TsQuery,
};
use super::schema::{field, Field, Kind};
use super::select::Target;
use super::unordered::MAX_UNORDERED_ROWS;
use super::TsQueryError;
use crate::{Dialect, SqlBuilder, SqlValue};

/// The most series a narrow read merges; a query matching more is answered by the
/// compiled query (each merged series holds an open cursor). The series read asks for
/// one more row so the store can tell.
pub const MAX_NARROW_SERIES: usize = 512;

/// The two reads of a history answer and how their rows make the compiled query's rows.
#[derive(Debug, Clone)]
pub struct NarrowHistory {
    /// One row per series: its id, then every SQL column of the compiled query, those of
    /// the measurement (`measured`) NULL. At most [`MAX_NARROW_SERIES`] + 1 rows, no
    /// order.
    pub series: SqlBuilder,
    /// One series' measurement columns (those at `measured`, in that order) in time
    /// order, then its provenance id when `provenance` is read apart. Its parameter at
    /// `series_param` is the series id (bound to 0 here; the store binds each series'
    /// id in its place).
    pub history: SqlBuilder,
    /// Which of `history`'s parameters is the series id: selected JSON paths of the
    /// measurement come before it.
    pub series_param: usize,
    /// Which of `history`'s parameters are the time range's start and end (epoch
    /// milliseconds, `[start, end)`): a store may read the range in parts. `None` for
    /// latest values ([`NarrowRange::Latest`]).
    pub range_params: Option<(usize, usize)>,
    /// Where `history`'s SQL ends its time range conditions ([`Self::history_within`]).
    range_end: usize,
    /// The provenance columns the answer selects, read once apart instead of joined to
    /// every measurement row (unless a `where` item filters on them).
    pub provenance: Option<ProvenanceRead>,
    /// Positions (0-based, in the compiled query's SQL columns) of the columns the
    /// history read fills, ascending.
    pub measured: Vec<usize>,
    /// For each of `measured`, the history read's column that holds it: a column the
    /// answer shows twice (`_timestamp` and `mvalidtime`) is read once.
    pub measured_from: Vec<usize>,
    /// The history read's measurement columns (before the provenance id).
    pub read_columns: usize,
    /// Which of the history read's columns is the measurement's time, when it reads it
    /// plain: where a store may start reading a series' history again.
    pub time_column: Option<usize>,
    /// Positions of the ordering keys, most significant first; each compares as SQL
    /// orders it (NULL first, numbers by value, then text by bytes).
    pub order: Vec<usize>,
    /// Rows equal in every column are answered once (they are adjacent once merged).
    pub distinct: bool,
    /// Rows skipped after the ordering (and `distinct`).
    pub offset: u64,
    /// Most rows answered after the offset; `None` = all.
    pub limit: Option<u64>,
    /// The most series merged: [`MAX_NARROW_SERIES`] for a history (each series holds
    /// an open cursor), [`MAX_UNORDERED_ROWS`] for latest values (one statement reads
    /// all of them). The series read asks for one more row.
    pub max_series: usize,
}

/// Every provenance with the columns an answer selects of it; the store fills them in
/// each merged row by the history read's provenance id (none or unknown: NULL, as the
/// compiled query's LEFT JOIN answers).
#[derive(Debug, Clone)]
pub struct ProvenanceRead {
    /// `SELECT pr.id, …columns FROM ts_provenance pr`.
    pub sql: SqlBuilder,
    /// Positions of those columns in the compiled query's SQL columns.
    pub positions: Vec<usize>,
}

impl NarrowHistory {
    /// Whether a series read that returned `series` rows may be merged.
    pub fn merges(&self, series: usize) -> bool {
        series <= self.max_series
    }

    /// Whether `history` reads latest values: the rows of every series whose ids are
    /// bound at `series_param` (PostgreSQL: an `int8[]`), each row ending with its
    /// series id after the measured columns and the provenance id.
    pub fn reads_latest(&self) -> bool {
        self.range_params.is_none()
    }

    /// `history`'s SQL with its rows also kept within `[start, end)` (epoch
    /// milliseconds) by literal bounds, written after the range parameters' conditions.
    /// The bounds are the store's own numbers (a partition's month), never a client's
    /// text. PostgreSQL prunes partitions by literals when it plans, so a generic plan
    /// of a read within one monthly partition is that partition's index read in time
    /// order; with parameters alone the DEFAULT partition stays in the plan, and the
    /// rows of every partition left at run time are appended and sorted.
    pub fn history_within(&self, start: i64, end: i64) -> String {
        if self.reads_latest() {
            return self.history.as_sql().to_string();
        }
        let (conditions, rest) = self.history.as_sql().split_at(self.range_end);
        format!("{conditions} AND me.timestamp >= {start} AND me.timestamp < {end}{rest}")
    }

    /// Columns of a history read's row: the measured ones, then the provenance id when
    /// the provenance is read apart.
    pub fn history_columns(&self) -> usize {
        self.read_columns + usize::from(self.provenance.is_some())
    }
}

/// The history read's select list, each SQL column once, and where the answer's
/// measured columns come from in it.
#[derive(Default)]
struct HistoryColumns {
    /// The columns read: their SQL when plain (`None`: computed with parameters).
    read: Vec<Option<String>>,
    positions: Vec<usize>,
    sources: Vec<usize>,
}

impl HistoryColumns {
    fn separate(&self, h: &mut SqlBuilder) {
        if !self.read.is_empty() {
            h.sql(", ");
        }
    }

    /// Plain columns (no parameters) at positions `at..`, each read once however often
    /// the answer shows it.
    fn plain(&mut self, h: &mut SqlBuilder, at: usize, exprs: &[String]) {
        for (k, expr) in exprs.iter().enumerate() {
            self.positions.push(at + k);
            match self
                .read
                .iter()
                .position(|r| r.as_deref() == Some(expr.as_str()))
            {
                Some(read) => self.sources.push(read),
                None => {
                    self.separate(h);
                    h.sql(expr);
                    self.sources.push(self.read.len());
                    self.read.push(Some(expr.clone()));
                }
            }
        }
    }

    /// A column computed with parameters (a JSON path) at position `at`: read as its own.
    fn computed(&mut self, h: &mut SqlBuilder, at: usize, write: impl FnOnce(&mut SqlBuilder)) {
        self.separate(h);
        write(h);
        self.positions.push(at);
        self.sources.push(self.read.len());
        self.read.push(None);
    }
}

/// Which measurements a narrow read takes of each series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NarrowRange {
    /// Its history within `[from, to)`, one series per statement.
    History { from: i64, to: i64 },
    /// Its latest value, of all the series in one statement (PostgreSQL only: it binds
    /// the series' ids as one array).
    Latest,
}

/// What `compile_query` already worked out that the narrow reads reuse.
pub(super) struct NarrowParts<'a> {
    pub range: NarrowRange,
    /// The leading columns: key, kind, hidden, SQL expression.
    pub lead: &'a [(&'a str, Kind, bool, String)],
    pub targets: &'a [Target],
    pub mvalue_tables: Option<&'a [i64]>,
    /// The closed-data rules left for the query's types (`None`: sees all).
    pub access: Option<&'a [AccessRule]>,
    pub needs_parent: bool,
    pub uses: &'a dyn Fn(&str) -> bool,
    /// 1-based ordinals of the compiled ORDER BY.
    pub order: &'a [usize],
    pub distinct: bool,
}

/// Whether a field is read from the measurement row (history and its provenance)
/// rather than from the series (station, parent, type, period).
fn measured(f: &Field) -> bool {
    matches!(f.table, "me" | "pr") || f.kind == Kind::Value
}

/// Which side a top-level `where` item filters: `Some(true)` measurements only,
/// `Some(false)` series only, `None` both (the query is not split).
fn item_side(n: &Node) -> Option<bool> {
    let w = Where {
        items: vec![n.clone()],
    };
    let mut sides = filter::clauses(&w)
        .into_iter()
        .map(|c| field(&c.alias).map(measured));
    let first = sides.next()??;
    sides.all(|s| s == Some(first)).then_some(first)
}

/// The narrow reads of a history or latest query, or `None` when its `where` mixes
/// series and measurement fields inside one item (such a query runs as compiled), or a
/// latest read is asked of SQLite (which reads the compiled query in process as fast).
pub(super) fn narrow_history(
    q: &TsQuery,
    dialect: Dialect,
    p: NarrowParts<'_>,
) -> Result<Option<NarrowHistory>, TsQueryError> {
    if p.range == NarrowRange::Latest && dialect != Dialect::Postgres {
        return Ok(None);
    }
    let max_series = match p.range {
        NarrowRange::History { .. } => MAX_NARROW_SERIES,
        NarrowRange::Latest => MAX_UNORDERED_ROWS,
    };
    let mut series_items = Vec::new();
    let mut measured_items = Vec::new();
    if let Some(w) = &q.filter {
        for n in &w.items {
            match item_side(n) {
                Some(true) => measured_items.push(n.clone()),
                Some(false) => series_items.push(n.clone()),
                None => return Ok(None),
            }
        }
    }
    // Provenance columns are joined to the measurements only when a `where` item needs
    // them there; otherwise they are read once, apart.
    let where_provenance = measured_items.iter().any(|n| {
        filter::clauses(&Where {
            items: vec![n.clone()],
        })
        .iter()
        .any(|c| field(&c.alias).is_some_and(|f| f.table == "pr"))
    });
    let mut pr = SqlBuilder::new(dialect);
    pr.sql("SELECT pr.id");
    let mut provenance_positions = Vec::new();
    let y = yes(dialect);
    let mut s = SqlBuilder::new(dialect);
    let mut h = SqlBuilder::new(dialect);
    s.sql("SELECT ts.id");
    h.sql("SELECT ");
    let mut columns = HistoryColumns::default();
    let mut at = 0;
    let mut uses_provenance = false;
    for (_, kind, _, expr) in p.lead {
        if expr.starts_with("me.") {
            columns.plain(&mut h, at, std::slice::from_ref(expr));
            s.sql(", NULL");
        } else {
            s.sql(", ").sql(expr);
        }
        at += kind.width();
    }
    for t in p.targets {
        let width = if t.json_path.is_some() {
            1
        } else {
            t.field.kind.width()
        };
        if t.field.table == "pr" && !where_provenance {
            provenance_positions.extend(at..at + width);
            pr.sql(", ");
            select_target(&mut pr, t);
            s.sql(&", NULL".repeat(width));
        } else if measured(t.field) {
            uses_provenance |= t.field.table == "pr";
            match &t.json_path {
                None => columns.plain(&mut h, at, &t.field.exprs(dialect)),
                Some(_) => columns.computed(&mut h, at, |h| select_target(h, t)),
            }
            s.sql(&", NULL".repeat(width));
        } else {
            s.sql(", ");
            select_target(&mut s, t);
        }
        at += width;
    }

    // The series: the compiled query's joins and conditions without the measurement.
    s.sql(" FROM ts_series ts JOIN ts_station s ON s.id = ts.station_id JOIN ts_type t ON t.id = ts.type_id");
    let parents = p.needs_parent.then_some(ParentJoin::Hashed);
    station_joins(&mut s, (p.uses)("m"), parents, (p.uses)("pm"));
    if (p.uses)("tm") {
        s.sql(" LEFT JOIN ts_type_metadata tm ON tm.id = t.meta_data_id");
    }
    s.sql(&format!(" WHERE s.available = {y}"));
    if p.needs_parent {
        s.sql(&format!(" AND (p.id IS NULL OR p.available = {y})"));
    }
    if let Some(types) = &q.types {
        in_list(&mut s, "s.stationtype", types);
    }
    if let Some(dts) = &q.data_types {
        in_list(&mut s, "t.cname", dts);
    }
    if let Some(tables) = p.mvalue_tables {
        s.sql(" AND ts.value_table IN (");
        for (k, v) in tables.iter().enumerate() {
            if k > 0 {
                s.sql(", ");
            }
            s.param(SqlValue::Int(*v));
        }
        s.sql(")");
    }
    if let Some(rules) = p.access {
        s.sql(" AND ");
        access(&mut s, rules);
    }
    // Regular expressions were checked by the compiled query already.
    let mut patterns = Vec::new();
    if !series_items.is_empty() {
        s.sql(" AND ");
        filter::compile(
            &Where {
                items: series_items,
            },
            &mut s,
            &mut patterns,
        )?;
    }
    s.sql(&format!(" LIMIT {}", max_series + 1));

    // One series' measurements in time order (its primary key's order).
    let provenance = (!provenance_positions.is_empty()).then(|| {
        h.sql(if columns.read.is_empty() {
            "me.provenance_id"
        } else {
            ", me.provenance_id"
        });
        pr.sql(" FROM ts_provenance pr");
        ProvenanceRead {
            sql: pr,
            positions: provenance_positions,
        }
    });
    let latest = p.range == NarrowRange::Latest;
    if latest {
        h.sql(", me.series_id");
    }
    h.sql(if latest {
        " FROM ts_latest me"
    } else {
        " FROM ts_history me"
    });
    if uses_provenance || where_provenance {
        join_provenance(&mut h, "me.provenance_id");
    }
    let series_param;
    let mut range_params = None;
    let mut range_end = 0;
    match p.range {
        NarrowRange::Latest => {
            h.sql(" WHERE me.series_id = ANY(");
            series_param = h.params().len();
            h.param(SqlValue::Int(0));
            h.sql(")");
        }
        NarrowRange::History { from, to } => {
            h.sql(" WHERE me.series_id = ");
            series_param = h.params().len();
            h.param(SqlValue::Int(0));
            h.sql(" AND me.timestamp >= ");
            range_params = Some((h.params().len(), h.params().len() + 1));
            time_param(&mut h, from);
            h.sql(" AND me.timestamp < ");
            time_param(&mut h, to);
            range_end = h.as_sql().len();
        }
    }
    if !measured_items.is_empty() {
        h.sql(" AND ");
        filter::compile(
            &Where {
                items: measured_items,
            },
            &mut h,
            &mut patterns,
        )?;
    }
    if !latest {
        h.sql(" ORDER BY me.timestamp");
    }
    Ok(Some(NarrowHistory {
        series: s,
        history: h,
        series_param,
        range_params,
        range_end,
        provenance,
        measured: columns.positions,
        measured_from: columns.sources,
        read_columns: columns.read.len(),
        time_column: columns
            .read
            .iter()
            .position(|r| r.as_deref() == Some("me.timestamp")),
        order: p.order.iter().map(|o| o - 1).collect(),
        distinct: p.distinct,
        offset: q.offset.max(0) as u64,
        limit: (q.limit > 0).then_some(q.limit as u64),
        max_series,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::query::compile_query;
    use super::*;
    use crate::timeseries::Route;

    /// A history query of `[from, to)` by an admin, without `where`.
    fn history(from: i64, to: i64, select: Option<&str>) -> TsQuery {
        TsQuery {
            route: Route::History { from, to },
            tree: false,
            types: None,
            data_types: None,
            filter: None,
            select: select.map(str::to_string),
            distinct: false,
            limit: 0,
            offset: -1,
            access: None,
        }
    }

    /// The series id and the time range are found by position whatever the selection
    /// puts before them (a JSON path of the measurement is a parameter too).
    #[test]
    fn the_series_and_range_parameters_are_named_by_position() {
        for (select, dialect) in [
            ("mvalidtime,mvalue", Dialect::Sqlite),
            ("mvalidtime,mvalue.a.b,smetadata.city", Dialect::Sqlite),
            ("mvalue.a,mvalue.b", Dialect::Postgres),
        ] {
            let q = history(111, 222, Some(select));
            let plan = compile_query(&q, dialect).unwrap().narrow.expect("narrow");
            let params = plan.history.params();
            assert_eq!(params[plan.series_param], SqlValue::Int(0), "{select}");
            let (from, to) = plan.range_params.expect("a range");
            assert_eq!(params[from], SqlValue::Int(111), "{select}");
            assert_eq!(params[to], SqlValue::Int(222), "{select}");
        }
    }

    /// `_timestamp` and `mvalidtime` are the same column: read once, shown twice; JSON
    /// paths of the value are each computed (they carry parameters).
    #[test]
    fn a_column_the_answer_shows_twice_is_read_once() {
        // (select, history select list, measured_from)
        let table: [(Option<&str>, &str, &[usize]); 3] = [
            (
                None,
                "SELECT me.timestamp, me.created_on, me.double_value, me.string_value, me.json_value, me.provenance_id FROM",
                &[0, 1, 0, 2, 3, 4],
            ),
            (
                Some("mvalidtime,mvalue"),
                "SELECT me.timestamp, me.double_value, me.string_value, me.json_value FROM",
                &[0, 0, 1, 2, 3],
            ),
            (Some("mvalue.a,mvalue.b"), "SELECT me.timestamp, ", &[0, 1, 2]),
        ];
        for (select, list, from) in table {
            let plan = compile_query(&history(1, 2, select), Dialect::Postgres)
                .unwrap()
                .narrow
                .expect("narrow");
            assert!(
                plan.history.as_sql().starts_with(list),
                "{}",
                plan.history.as_sql()
            );
            assert_eq!(plan.measured_from, from, "{select:?}");
            assert_eq!(plan.time_column, Some(0), "{select:?}");
            assert_eq!(plan.measured.len(), from.len(), "{select:?}");
            assert_eq!(
                plan.read_columns,
                from.iter().max().unwrap() + 1,
                "{select:?}"
            );
        }
    }

    /// A read kept within a month has the month's bounds as literals right after the
    /// range's own conditions: before a measurement filter (whatever its operators)
    /// and the ordering, with the same parameters.
    #[test]
    fn a_read_within_a_month_has_its_bounds_after_the_range() {
        let mut q = history(1_000, 2_000, Some("mvalidtime,mvalue"));
        q.filter = Some(super::super::parser::parse_where("or(mvalue.lt.1,mvalue.gt.9)").unwrap());
        let plan = compile_query(&q, Dialect::Postgres)
            .unwrap()
            .narrow
            .expect("narrow");
        let sql = plan.history_within(500, 2_500);
        let range = "me.timestamp >= $2 AND me.timestamp < $3";
        let bounded = format!("{range} AND me.timestamp >= 500 AND me.timestamp < 2500 AND (");
        assert!(sql.contains(&bounded), "{sql}");
        assert!(sql.ends_with(" ORDER BY me.timestamp"), "{sql}");
        assert_eq!(
            sql.replace(" AND me.timestamp >= 500 AND me.timestamp < 2500", ""),
            plan.history.as_sql()
        );
    }

    /// Latest values read narrow (PostgreSQL): the series read as for a history, up to
    /// the bound an in-memory merge takes, and every series' latest row in one statement
    /// by an array of ids, each row ending with its series id; SQLite reads the compiled
    /// query.
    #[test]
    fn latest_values_are_read_by_series_ids_on_postgres_only() {
        let mut q = history(0, 0, Some("mvalidtime,mvalue,prname"));
        q.route = Route::Latest;
        q.filter = Some(super::super::parser::parse_where("mvalue.gt.100,sname.eq.x").unwrap());
        assert!(compile_query(&q, Dialect::Sqlite).unwrap().narrow.is_none());
        let plan = compile_query(&q, Dialect::Postgres)
            .unwrap()
            .narrow
            .expect("narrow");
        assert!(plan.reads_latest());
        assert_eq!(plan.range_params, None);
        let sql = plan.history.as_sql();
        assert!(
            sql.starts_with(
                "SELECT me.timestamp, me.double_value, me.string_value, me.json_value, me.provenance_id, me.series_id FROM ts_latest me WHERE me.series_id = ANY($"
            ),
            "{sql}"
        );
        assert!(
            sql.contains("me.double_value > "),
            "the measurement's item: {sql}"
        );
        assert!(!sql.contains("ORDER BY"), "{sql}");
        assert_eq!(plan.history.params()[plan.series_param], SqlValue::Int(0));
        assert!(
            plan.series.as_sql().contains("s.name = "),
            "the series' item"
        );
        assert!(plan.series.as_sql().ends_with(" LIMIT 10001"));
        assert!(plan.merges(10_000) && !plan.merges(10_001));
        assert_eq!(plan.history_within(1, 2), sql, "no month to keep to");
    }

    /// A caller's closed-data rules are in the series read's text and parameters, what
    /// a store keeps the series it found by: one caller's series are not another's.
    #[test]
    fn the_series_of_latest_values_are_read_with_the_callers_rules() {
        let mut q = history(0, 0, None);
        q.route = Route::Latest;
        let open = compile_query(&q, Dialect::Postgres)
            .unwrap()
            .narrow
            .unwrap();
        let rule = |origin: &str| AccessRule {
            origins: vec![origin.to_string()],
            ..Default::default()
        };
        q.access = Some(vec![rule("FAMAS")]);
        let famas = compile_query(&q, Dialect::Postgres)
            .unwrap()
            .narrow
            .unwrap();
        q.access = Some(vec![rule("A22")]);
        let a22 = compile_query(&q, Dialect::Postgres)
            .unwrap()
            .narrow
            .unwrap();
        let read = |p: &NarrowHistory| format!("{} {:?}", p.series.as_sql(), p.series.params());
        assert_ne!(read(&open), read(&famas));
        assert_ne!(read(&famas), read(&a22));
        assert_eq!(famas.history.as_sql(), a22.history.as_sql());
    }
}
