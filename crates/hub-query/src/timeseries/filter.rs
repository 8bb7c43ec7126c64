//! Compilation of a parsed `where` into SQL with bound parameters. Checks, in the
//! reference's order: alias in scope, operator valid for the value type, list lengths;
//! then (Hub's addition) that the value fits the column, so `scode.eq.105` is a clean
//! 400 asking for quotes instead of a database error.

use super::parser::{Clause, Node, Operand, Typed, Value, Where};
use super::schema::{field, DefList, Field, Kind};
use super::TsQueryError;
use crate::{Dialect, SqlBuilder, SqlValue};

const OPS: &[(&str, &[&str])] = &[
    ("NULL", &["eq", "neq"]),
    ("BOOLEAN", &["eq", "neq"]),
    ("NUMBER", &["eq", "gt", "gteq", "lt", "lteq", "neq"]),
    ("STRING", &["eq", "ire", "neq", "nire", "nre", "re"]),
    ("DATE", &["eq", "gt", "gteq", "lt", "lteq", "neq"]),
    ("LIST/NUMBER", &["bbc", "bbi", "dlt", "in", "nin"]),
    ("LIST/STRING", &["in", "nin"]),
    ("LIST/NULL", &["in", "nin"]),
    ("JSON/NULL", &["eq", "neq"]),
    ("JSON/BOOLEAN", &["eq", "neq"]),
    ("JSON/NUMBER", &["eq", "gt", "gteq", "lt", "lteq", "neq"]),
    ("JSON/STRING", &["eq", "ire", "neq", "nire", "nre", "re"]),
    ("JSON/LIST/STRING", &["in", "nin"]),
    ("JSON/LIST/NUMBER", &["in", "nin"]),
    ("JSON/LIST/NULL", &["in", "nin"]),
    ("JSON/LIST/MIXED", &["in", "nin"]),
];

/// The reference's type key of a clause value: `[JSON/]TYPE` or `[JSON/]LIST/ELEMTYPE|MIXED`.
pub fn type_key(c: &Clause) -> String {
    let base = match &c.value {
        Operand::Single(v) => v.typed.type_name().to_string(),
        Operand::List(vs) => {
            let first = vs[0].typed.type_name();
            let elem = if vs.iter().all(|v| v.typed.type_name() == first) {
                first
            } else {
                "MIXED"
            };
            format!("LIST/{elem}")
        }
    };
    if c.json_path.is_some() {
        format!("JSON/{base}")
    } else {
        base
    }
}

/// Walks clauses depth-first.
pub fn clauses(w: &Where) -> Vec<&Clause> {
    fn walk<'a>(n: &'a [Node], out: &mut Vec<&'a Clause>) {
        for x in n {
            match x {
                Node::Clause(c) => out.push(c),
                Node::And(v) | Node::Or(v) => walk(v, out),
            }
        }
    }
    let mut out = Vec::new();
    walk(&w.items, &mut out);
    out
}

/// Resolves and checks every clause; returns the fields used (for joins).
pub fn check(w: &Where, scope: &[DefList]) -> Result<Vec<&'static Field>, TsQueryError> {
    let mut used = Vec::new();
    for c in clauses(w) {
        let f = match field(&c.alias) {
            Some(f) if scope.contains(&f.list) => f,
            _ => return Err(TsQueryError::AliasNotFound(c.alias.clone())),
        };
        let key = type_key(c);
        let op = c.op.to_ascii_lowercase();
        let valid: &[&str] = OPS
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
            .unwrap_or(&[]);
        if !valid.contains(&op.as_str()) {
            return Err(TsQueryError::InvalidOperator {
                op: c.op.clone(),
                type_key: key,
                valid: valid.join(", "),
            });
        }
        if let Operand::List(vs) = &c.value {
            let n = vs.len();
            // NaN and infinities parse as numbers (as in Java) but are no coordinate.
            let finite = || {
                vs.iter()
                    .all(|v| !matches!(v.typed, Typed::Double(d) if !d.is_finite()))
            };
            let ok = match op.as_str() {
                "bbi" | "bbc" => (n == 4 || n == 5) && finite(),
                "dlt" => (n == 3 || n == 4) && finite(),
                _ => true,
            };
            if !ok {
                let shown: Vec<String> = vs.iter().map(java_list_item).collect();
                return Err(TsQueryError::ChecksFailed {
                    op: op.to_uppercase(),
                    value: format!("[{}]", shown.join(", ")),
                });
            }
        }
        fits_column(c, f, &op)?;
        used.push(f);
    }
    Ok(used)
}

fn java_list_item(v: &Value) -> String {
    match &v.typed {
        Typed::Int(i) => i.to_string(),
        Typed::Double(d) => format!("{d:?}"),
        Typed::Null => "null".into(),
        _ => v.raw.clone().unwrap_or_default(),
    }
}

fn values(c: &Clause) -> Vec<&Value> {
    match &c.value {
        Operand::Single(v) => vec![v],
        Operand::List(vs) => vs.iter().collect(),
    }
}

fn fits_column(c: &Clause, f: &Field, op: &str) -> Result<(), TsQueryError> {
    let name = &f.name;
    let mismatch = |why: String| Err(TsQueryError::TypeMismatch(why));
    if c.json_path.is_some() {
        if !matches!(f.kind, Kind::Json | Kind::Value) {
            return mismatch(format!(
                "'{name}' has no JSON content; JSON paths work on smetadata, pmetadata, tmetadata, mvalue, evmetadata"
            ));
        }
        return Ok(());
    }
    let vals = values(c);
    let all =
        |p: &dyn Fn(&Typed) -> bool| vals.iter().all(|v| p(&v.typed) || v.typed == Typed::Null);
    match f.kind {
        Kind::Text => {
            if let Some(v) = vals
                .iter()
                .find(|v| !matches!(v.typed, Typed::Str(_) | Typed::Null))
            {
                let raw = v.raw.clone().unwrap_or_default();
                return Err(TsQueryError::QuoteString {
                    alias: c.alias.clone(),
                    op: c.op.clone(),
                    raw,
                });
            }
        }
        Kind::Bool if !all(&|t| matches!(t, Typed::Bool(_))) => {
            return mismatch(format!(
                "'{name}' is a boolean field: compare it with true or false"
            ));
        }
        Kind::Int if !all(&|t| matches!(t, Typed::Int(_) | Typed::Double(_))) => {
            return mismatch(format!(
                "'{name}' is a numeric field: compare it with a number"
            ));
        }
        Kind::Time if !all(&|t| matches!(t, Typed::Date(_))) => {
            return mismatch(format!(
                "'{name}' is a time field: compare it with a date such as 2024-01-15 or 2024-01-15T10:30:00+0200"
            ));
        }
        Kind::Json if !all(&|_| false) => {
            return mismatch(format!(
                "'{name}' is a JSON field: add a path, e.g. {name}.somekey.eq.\"x\""
            ));
        }
        Kind::Point | Kind::Geometry
            if !matches!(op, "bbi" | "bbc" | "dlt" | "eq" | "neq")
                || (f.kind == Kind::Geometry && op == "dlt") =>
        {
            return mismatch(format!(
                "'{name}' is a geometry: use bbi, bbc{} with numbers",
                if f.kind == Kind::Point { " or dlt" } else { "" }
            ));
        }
        Kind::Point | Kind::Geometry if matches!(op, "eq" | "neq") && !all(&|_| false) => {
            return mismatch(format!(
                "'{name}' is a geometry: only eq.null / neq.null compare it directly"
            ));
        }
        _ => {}
    }
    Ok(())
}

/// Which value kinds (0 double, 1 string, 2 JSON) the first `mvalue` clause selects
/// (the reference's table-selection rule); `None` = all.
pub fn mvalue_tables(w: &Where) -> Result<Option<Vec<i64>>, TsQueryError> {
    let Some(c) = clauses(w).into_iter().find(|c| c.alias == "mvalue") else {
        return Ok(None);
    };
    if c.json_path.is_some() {
        return Ok(Some(vec![2]));
    }
    let first = values(c)[0];
    match &first.typed {
        Typed::Int(_) | Typed::Double(_) => Ok(Some(vec![0])),
        Typed::Str(_) => Ok(Some(vec![1])),
        Typed::Null => Ok(Some(vec![0, 1])),
        t => Err(TsQueryError::MvalueType(t.type_name().to_string())),
    }
}

/// Appends the SQL of the whole expression (an implicit AND).
pub fn compile(
    w: &Where,
    b: &mut SqlBuilder,
    patterns: &mut Vec<String>,
) -> Result<(), TsQueryError> {
    group(&w.items, " AND ", b, patterns)
}

fn group(
    items: &[Node],
    joiner: &str,
    b: &mut SqlBuilder,
    patterns: &mut Vec<String>,
) -> Result<(), TsQueryError> {
    b.sql("(");
    for (k, n) in items.iter().enumerate() {
        if k > 0 {
            b.sql(joiner);
        }
        match n {
            Node::Clause(c) => clause(c, b, patterns)?,
            Node::And(v) => group(v, " AND ", b, patterns)?,
            Node::Or(v) => group(v, " OR ", b, patterns)?,
        }
    }
    if items.is_empty() {
        b.sql("1 = 1");
    }
    b.sql(")");
    Ok(())
}

fn bind(b: &mut SqlBuilder, t: &Typed) {
    let d = b.dialect;
    match t {
        Typed::Null | Typed::Str(None) => b.param(SqlValue::Null),
        Typed::Bool(x) => b.bool_param(*x),
        Typed::Int(i) => b.param(SqlValue::Int(*i)),
        Typed::Double(x) => match d {
            Dialect::Sqlite => b.param(SqlValue::Real(*x)),
            // Typed, so an integer column compares as a number instead of refusing 1.5.
            Dialect::Postgres => b.param(SqlValue::Real(*x)).sql("::float8"),
        },
        Typed::Str(Some(s)) => b.param(SqlValue::Text(s.clone())),
        // Times are epoch milliseconds in both schemas.
        Typed::Date(dt) => b.param(SqlValue::Int(dt.timestamp_millis())),
    };
}

fn json_text(t: &Typed) -> SqlValue {
    match t {
        Typed::Null | Typed::Str(None) => SqlValue::Null,
        Typed::Bool(x) => SqlValue::Text(x.to_string()),
        Typed::Int(i) => SqlValue::Text(i.to_string()),
        Typed::Double(x) => SqlValue::Text(serde_json::Value::from(*x).to_string()),
        Typed::Str(Some(s)) => SqlValue::Text(serde_json::Value::from(s.as_str()).to_string()),
        Typed::Date(d) => SqlValue::Text(serde_json::Value::from(d.to_rfc3339()).to_string()),
    }
}

fn cmp_op(op: &str) -> &'static str {
    match op {
        "eq" => " = ",
        "neq" => " <> ",
        "lt" => " < ",
        "gt" => " > ",
        "lteq" => " <= ",
        _ => " >= ",
    }
}

/// A JSON path access: `how` = json (JSON text), text (`#>>`), num (double). Both
/// dialects call the `hub_json_*` functions (registered on SQLite, created by the
/// PostgreSQL migration with the same semantics).
pub fn json_access(b: &mut SqlBuilder, column: &str, path: &str, how: &str) {
    b.sql(&format!("hub_json_{how}({column}, "))
        .text(path)
        .sql(")");
}

fn clause(c: &Clause, b: &mut SqlBuilder, patterns: &mut Vec<String>) -> Result<(), TsQueryError> {
    let f = field(&c.alias).expect("checked");
    let d = b.dialect;
    let op = c.op.to_ascii_lowercase();
    let vals = values(c);
    let first = &vals[0].typed;
    // Column expression.
    let column = match (f.kind, first) {
        (Kind::Value, _) if c.json_path.is_some() => "me.json_value".to_string(),
        (Kind::Value, Typed::Str(_)) => "me.string_value".to_string(),
        (Kind::Value, Typed::Null) => match d {
            Dialect::Sqlite => "COALESCE(me.double_value, me.string_value)".to_string(),
            Dialect::Postgres => "COALESCE(me.double_value::text, me.string_value)".to_string(),
        },
        (Kind::Value, _) => "me.double_value".to_string(),
        _ => f.filter_expr(d),
    };
    let lhs = |b: &mut SqlBuilder, how: &str| match &c.json_path {
        Some(p) => json_access(b, &column, p, how),
        None => {
            b.sql(&column);
        }
    };
    match op.as_str() {
        "eq" | "neq" if *first == Typed::Null => {
            lhs(b, "json");
            b.sql(if op == "eq" {
                " IS NULL"
            } else {
                " IS NOT NULL"
            });
        }
        "eq" | "neq" | "lt" | "gt" | "lteq" | "gteq" => match (&c.json_path, first) {
            (Some(_), Typed::Bool(_)) => {
                lhs(b, "json");
                b.sql(cmp_op(&op)).param(json_text(first));
            }
            (Some(_), Typed::Int(_) | Typed::Double(_)) => {
                lhs(b, "num");
                b.sql(cmp_op(&op));
                bind(b, first);
            }
            (Some(_), _) => {
                lhs(b, "text");
                b.sql(cmp_op(&op));
                bind(b, first);
            }
            (None, _) => {
                lhs(b, "json");
                b.sql(cmp_op(&op));
                bind(b, first);
            }
        },
        "re" | "ire" | "nre" | "nire" => {
            let pattern = match first {
                Typed::Str(Some(s)) => s.clone(),
                _ => String::new(),
            };
            patterns.push(pattern.clone());
            let negate = op.starts_with('n');
            let insensitive = op.contains("ire");
            match d {
                Dialect::Sqlite => {
                    b.sql(if negate { "NOT regexp(" } else { "regexp(" });
                    b.text(if insensitive {
                        format!("(?i){pattern}")
                    } else {
                        pattern
                    });
                    b.sql(", ");
                    lhs(b, "text");
                    b.sql(")");
                }
                Dialect::Postgres => {
                    lhs(b, "text");
                    b.sql(match op.as_str() {
                        "re" => " ~ ",
                        "ire" => " ~* ",
                        "nre" => " !~ ",
                        _ => " !~* ",
                    });
                    b.text(pattern);
                }
            }
        }
        "in" | "nin" => {
            let key = type_key(c);
            let how = if c.json_path.is_none() {
                "json"
            } else if key.ends_with("LIST/STRING") {
                "text"
            } else if key.ends_with("LIST/NUMBER") {
                "num"
            } else {
                "raw"
            };
            lhs(b, if how == "raw" { "json" } else { how });
            b.sql(if op == "in" { " IN (" } else { " NOT IN (" });
            for (k, v) in vals.iter().enumerate() {
                if k > 0 {
                    b.sql(", ");
                }
                if how == "raw" {
                    b.param(json_text(&v.typed));
                } else {
                    bind(b, &v.typed);
                }
            }
            b.sql(")");
        }
        "bbi" | "bbc" | "dlt" => geo(c, f, &op, &vals, b)?,
        _ => unreachable!("operators are checked"),
    }
    Ok(())
}

fn num(v: &Value) -> f64 {
    match v.typed {
        Typed::Int(i) => i as f64,
        Typed::Double(x) => x,
        _ => f64::NAN,
    }
}

/// Converts a point in `srid` to EPSG:4326 (lon, lat). 4326 and 3857 are supported.
fn to_wgs84(x: f64, y: f64, srid: i64) -> Result<(f64, f64), TsQueryError> {
    match srid {
        4326 => Ok((x, y)),
        3857 | 900913 => {
            const R: f64 = 6_378_137.0;
            let lon = (x / R).to_degrees();
            let lat = (2.0 * (y / R).exp().atan() - std::f64::consts::FRAC_PI_2).to_degrees();
            Ok((lon, lat))
        }
        other => Err(TsQueryError::Srid(other)),
    }
}

fn geo(
    c: &Clause,
    f: &Field,
    op: &str,
    vals: &[&Value],
    b: &mut SqlBuilder,
) -> Result<(), TsQueryError> {
    let n: Vec<f64> = vals.iter().map(|v| num(v)).collect();
    let t = f.table;
    if op == "dlt" {
        let srid = if n.len() == 4 { n[3] as i64 } else { 4326 };
        let (x, y) = to_wgs84(n[1], n[2], srid)?;
        match b.dialect {
            Dialect::Sqlite => {
                b.sql(&format!("hub_distance({t}.x, {t}.y, "));
                b.param(SqlValue::Real(x))
                    .sql(", ")
                    .param(SqlValue::Real(y))
                    .sql(") < ")
                    .param(SqlValue::Real(n[0]));
            }
            Dialect::Postgres => {
                // The migration's `hub_distance`: same sphere and formula as SQLite's.
                b.sql(&format!("hub_distance({t}.x, {t}.y, "));
                b.param(SqlValue::Real(x))
                    .sql("::float8, ")
                    .param(SqlValue::Real(y))
                    .sql("::float8) < ")
                    .param(SqlValue::Real(n[0]));
            }
        }
        return Ok(());
    }
    let srid = if n.len() == 5 { n[4] as i64 } else { 4326 };
    let (x1, y1) = to_wgs84(n[0], n[1], srid)?;
    let (x2, y2) = to_wgs84(n[2], n[3], srid)?;
    let (xmin, xmax, ymin, ymax) = (x1.min(x2), x1.max(x2), y1.min(y2), y1.max(y2));
    let _ = c;
    match (b.dialect, f.kind) {
        (Dialect::Sqlite, Kind::Point) => {
            b.sql(&format!("({t}.x BETWEEN "))
                .param(SqlValue::Real(xmin))
                .sql(" AND ")
                .param(SqlValue::Real(xmax));
            b.sql(&format!(" AND {t}.y BETWEEN "))
                .param(SqlValue::Real(ymin))
                .sql(" AND ")
                .param(SqlValue::Real(ymax))
                .sql(")");
        }
        (Dialect::Sqlite, _) if op == "bbc" => {
            b.sql(&format!("({t}.minx >= ")).param(SqlValue::Real(xmin));
            b.sql(&format!(" AND {t}.maxx <= "))
                .param(SqlValue::Real(xmax));
            b.sql(&format!(" AND {t}.miny >= "))
                .param(SqlValue::Real(ymin));
            b.sql(&format!(" AND {t}.maxy <= "))
                .param(SqlValue::Real(ymax))
                .sql(")");
        }
        (Dialect::Sqlite, _) => {
            b.sql(&format!("({t}.maxx >= ")).param(SqlValue::Real(xmin));
            b.sql(&format!(" AND {t}.minx <= "))
                .param(SqlValue::Real(xmax));
            b.sql(&format!(" AND {t}.maxy >= "))
                .param(SqlValue::Real(ymin));
            b.sql(&format!(" AND {t}.miny <= "))
                .param(SqlValue::Real(ymax));
            b.sql(&format!(" AND hub_geom_intersects_box({t}.{}, ", f.column));
            b.param(SqlValue::Real(xmin))
                .sql(", ")
                .param(SqlValue::Real(ymin))
                .sql(", ");
            b.param(SqlValue::Real(xmax))
                .sql(", ")
                .param(SqlValue::Real(ymax))
                .sql(") = 1)");
        }
        (Dialect::Postgres, Kind::Point) => {
            // Exact and inclusive like BETWEEN, and served by the GiST index.
            b.sql(&format!("ST_Intersects({}, ", f.geometry_column()));
            envelope(b, [xmin, ymin, xmax, ymax]);
            b.sql(")");
        }
        (Dialect::Postgres, _) if op == "bbc" => {
            // The bounding box inside the box: the same columns SQLite compares.
            b.sql(&format!("({t}.minx >= ")).param(SqlValue::Real(xmin));
            b.sql(&format!(" AND {t}.maxx <= "))
                .param(SqlValue::Real(xmax));
            b.sql(&format!(" AND {t}.miny >= "))
                .param(SqlValue::Real(ymin));
            b.sql(&format!(" AND {t}.maxy <= "))
                .param(SqlValue::Real(ymax))
                .sql(")");
        }
        (Dialect::Postgres, _) => {
            // SQLite's test: a vertex in the box or a segment crossing it, i.e. polygons
            // by their rings; `&&` lets the GiST index prefilter.
            let g = f.geometry_column();
            b.sql(&format!("({g} && "));
            envelope(b, [xmin, ymin, xmax, ymax]);
            b.sql(&format!(" AND ST_Intersects(CASE WHEN ST_Dimension({g}) = 2 THEN ST_Boundary({g}) ELSE {g} END, "));
            envelope(b, [xmin, ymin, xmax, ymax]);
            b.sql("))");
        }
    }
    Ok(())
}

fn envelope(b: &mut SqlBuilder, corners: [f64; 4]) {
    b.sql("ST_MakeEnvelope(");
    for (k, v) in corners.into_iter().enumerate() {
        if k > 0 {
            b.sql(", ");
        }
        b.param(SqlValue::Real(v)).sql("::float8");
    }
    b.sql(", 4326)");
}
