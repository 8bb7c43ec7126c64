//! CQL2 text for the OGC station collections: the filter the one CQL2 parser
//! ([`crate::content::cql2`]) reads, rewritten into a Time Series `where` ([`Where`]), so
//! the compiler that serves `/v2/…?where=` checks names, operators and value types and
//! writes the SQL. Nothing here evaluates a filter.
//!
//! | CQL2 (as parsed) | `where` |
//! |---|---|
//! | `a = v`, `<>`, `<`, `<=`, `>`, `>=` | `a.eq.v`, `neq`, `lt`, `lteq`, `gt`, `gteq` |
//! | `a LIKE 'p%'` (case-insensitive) | `a.ire.^p.*$` |
//! | `a IN (…)`, `NOT IN` | `a.in.(…)`, `nin` |
//! | `a IS NULL`, `IS NOT NULL` | `a.eq.null`, `a.neq.null` |
//! | `AND`, `OR` | `and(…)`, `or(…)` |
//! | `smetadata.x.y = v` | `smetadata.x.y.eq.v` (a JSON selector) |
//!
//! `where` has no negation, so `NOT` is pushed down to the conditions: operators invert,
//! groups follow De Morgan. As in the content compiler, a condition on a missing value
//! is false before negation, so a negated comparison also matches a missing value
//! (`or(a.neq.v, a.eq.null)`). Array positions and wildcards in a path have no `where`
//! spelling and are refused with their position.

use chrono::{DateTime, FixedOffset, NaiveDateTime};

use super::parser::{Clause, Node, Operand, Typed, Value, Where, MAX_WHERE_CLAUSES};
use crate::content::rawfilter::{
    CompareOp, JsonPath, Literal, PathSegment, RawFilter, RawFilterError,
};

/// The `where` with the same meaning as a parsed CQL2 filter.
/// The `where` parser's clause limit holds for rewritten filters too (each clause
/// becomes SQL, and SQLite's expression depth is bounded).
pub fn where_from_filter(filter: &RawFilter) -> Result<Where, RawFilterError> {
    let rewritten = Where {
        items: vec![node(filter, false)?],
    };
    let count = super::filter::clauses(&rewritten).len();
    if count > MAX_WHERE_CLAUSES {
        return Err(RawFilterError {
            position: 1,
            message: format!(
                "the filter has {count} conditions on stations (negations count twice); at most {MAX_WHERE_CLAUSES}"
            ),
        });
    }
    Ok(rewritten)
}

fn node(filter: &RawFilter, negated: bool) -> Result<Node, RawFilterError> {
    let all = |parts: &[RawFilter]| -> Result<Vec<Node>, RawFilterError> {
        parts.iter().map(|p| node(p, negated)).collect()
    };
    Ok(match filter {
        RawFilter::And(parts) if negated => Node::Or(all(parts)?),
        RawFilter::And(parts) => Node::And(all(parts)?),
        RawFilter::Or(parts) if negated => Node::And(all(parts)?),
        RawFilter::Or(parts) => Node::Or(all(parts)?),
        RawFilter::Not(inner) => node(inner, !negated)?,
        RawFilter::Compare {
            op, path, value, ..
        } => {
            let op = match (op, negated) {
                (CompareOp::Eq, false) | (CompareOp::Ne, true) => "eq",
                (CompareOp::Ne, false) | (CompareOp::Eq, true) => "neq",
                (CompareOp::Lt, false) | (CompareOp::Ge, true) => "lt",
                (CompareOp::Le, false) | (CompareOp::Gt, true) => "lteq",
                (CompareOp::Gt, false) | (CompareOp::Le, true) => "gt",
                (CompareOp::Ge, false) | (CompareOp::Lt, true) => "gteq",
            };
            or_missing(
                clause(path, op, Operand::Single(value_of(value, path)?))?,
                path,
                negated,
            )?
        }
        RawFilter::Like { path, text } => {
            let pattern = regex::escape(text);
            let op = if negated { "nire" } else { "ire" };
            or_missing(
                clause(path, op, Operand::Single(text_value(pattern)))?,
                path,
                negated,
            )?
        }
        RawFilter::LikeIn { path, patterns } => {
            let op = if negated { "nire" } else { "ire" };
            let each = patterns
                .iter()
                .map(|p| clause(path, op, Operand::Single(text_value(p.clone()))))
                .collect::<Result<Vec<_>, _>>()?;
            let group = match (negated, each.len()) {
                (_, 1) => each.into_iter().next().expect("one"),
                (false, _) => Node::Or(each),
                (true, _) => Node::And(each),
            };
            match negated {
                true => Node::Or(vec![group, clause(path, "eq", null())?]),
                false => group,
            }
        }
        RawFilter::In {
            path,
            values,
            negated: nin,
        } => {
            let list = values
                .iter()
                .map(|v| value_of(v, path))
                .collect::<Result<Vec<_>, _>>()?;
            let op = if *nin != negated { "nin" } else { "in" };
            let missing_too = *nin != negated;
            or_missing(clause(path, op, Operand::List(list))?, path, missing_too)?
        }
        RawFilter::IsNull {
            path,
            negated: not_null,
        } => {
            let op = if *not_null != negated { "neq" } else { "eq" };
            clause(path, op, null())?
        }
    })
}

/// `or(condition, path.eq.null)` when a missing value must match too.
fn or_missing(condition: Node, path: &JsonPath, missing: bool) -> Result<Node, RawFilterError> {
    Ok(match missing {
        true => Node::Or(vec![condition, clause(path, "eq", null())?]),
        false => condition,
    })
}

fn clause(path: &JsonPath, op: &str, value: Operand) -> Result<Node, RawFilterError> {
    let mut keys = Vec::with_capacity(path.segments.len());
    for segment in &path.segments {
        match segment {
            PathSegment::Key(k) => keys.push(k.as_str()),
            PathSegment::Index(_) | PathSegment::AnyElement => {
                return Err(RawFilterError {
                    position: path.position,
                    message: format!(
                        "'{}': array positions are not supported in station filters",
                        path.text
                    ),
                })
            }
        }
    }
    let (alias, selector) = keys.split_first().ok_or_else(|| RawFilterError {
        position: path.position,
        message: "a property name is missing".into(),
    })?;
    Ok(Node::Clause(Clause {
        alias: alias.to_string(),
        json_path: (!selector.is_empty()).then(|| selector.join(".")),
        op: op.to_string(),
        value,
        position: path.position,
    }))
}

fn null() -> Operand {
    Operand::Single(Value {
        raw: None,
        typed: Typed::Null,
        quoted: false,
    })
}

fn text_value(text: String) -> Value {
    Value {
        raw: Some(text.clone()),
        typed: Typed::Str(Some(text)),
        quoted: true,
    }
}

fn value_of(literal: &Literal, path: &JsonPath) -> Result<Value, RawFilterError> {
    let plain = |raw: String, typed: Typed| Value {
        raw: Some(raw),
        typed,
        quoted: false,
    };
    Ok(match literal {
        Literal::Bool(b) => plain(b.to_string(), Typed::Bool(*b)),
        Literal::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => {
            plain((*n as i64).to_string(), Typed::Int(*n as i64))
        }
        Literal::Number(n) => plain(n.to_string(), Typed::Double(*n)),
        Literal::Text(t) => text_value(t.clone()),
        Literal::Date(d) => {
            let at: DateTime<FixedOffset> = NaiveDateTime::parse_from_str(d, "%Y-%m-%d %H:%M:%S")
                .map_err(|_| RawFilterError {
                    position: path.position,
                    message: format!("'{d}' is not a time"),
                })?
                .and_utc()
                .fixed_offset();
            plain(d.clone(), Typed::Date(at))
        }
        Literal::EmptyArray => {
            return Err(RawFilterError {
                position: path.position,
                message: format!("'{}' cannot be compared with an array", path.text),
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::cql2::parse_cql2;
    use crate::timeseries::parse_where;

    /// The meaning of a `where` without positions and spellings of values.
    fn shape(nodes: &[Node]) -> String {
        nodes
            .iter()
            .map(|n| match n {
                Node::And(v) => format!("and({})", shape(v)),
                Node::Or(v) => format!("or({})", shape(v)),
                Node::Clause(c) => {
                    let value = |v: &Value| format!("{:?}", v.typed);
                    let operand = match &c.value {
                        Operand::Single(v) => value(v),
                        Operand::List(vs) => vs.iter().map(value).collect::<Vec<_>>().join("|"),
                    };
                    format!("{}[{:?}].{}.{}", c.alias, c.json_path, c.op, operand)
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Each CQL2 filter becomes exactly what the `where` parser reads from its twin.
    #[test]
    fn cql2_becomes_the_where_a_client_would_write() {
        for (cql2, twin) in [
            ("scode = 'A1'", "scode.eq.\"A1\""),
            (
                "sactive = TRUE AND sname <> 'x'",
                "and(sactive.eq.true,sname.neq.\"x\")",
            ),
            ("smetadata.capacity >= 100", "smetadata.capacity.gteq.100"),
            ("smetadata.fee < 1.5", "smetadata.fee.lt.1.5"),
            ("sorigin IN ('a', 'b')", "sorigin.in.(\"a\",\"b\")"),
            (
                "sorigin NOT IN ('a')",
                "or(sorigin.nin.(\"a\"),sorigin.eq.null)",
            ),
            (
                "sorigin IS NULL OR sorigin IS NOT NULL",
                "or(sorigin.eq.null,sorigin.neq.null)",
            ),
            (
                "NOT (scode = 'A' OR sname = 'B')",
                "and(or(scode.neq.\"A\",scode.eq.null),or(sname.neq.\"B\",sname.eq.null))",
            ),
            ("NOT NOT scode = 'A'", "scode.eq.\"A\""),
            (
                "NOT smetadata.capacity > 3",
                "or(smetadata.capacity.lteq.3,smetadata.capacity.eq.null)",
            ),
            ("sname LIKE 'Park%'", "sname.ire.\"^Park.*$\""),
            (
                "sname NOT LIKE 'P_'",
                "or(sname.nire.\"^P.$\",sname.eq.null)",
            ),
            (
                "smetadata.capacity BETWEEN 1 AND 9",
                "and(smetadata.capacity.gteq.1,smetadata.capacity.lteq.9)",
            ),
        ] {
            let parsed = parse_cql2(cql2).unwrap().filter.unwrap();
            let translated = where_from_filter(&parsed).unwrap();
            let expected = parse_where(twin).unwrap();
            assert_eq!(shape(&translated.items), shape(&expected.items), "{cql2}");
        }
    }

    #[test]
    fn a_filter_past_the_where_clause_limit_is_refused() {
        let many = (0..=MAX_WHERE_CLAUSES)
            .map(|i| format!("scode = 'c{i}'"))
            .collect::<Vec<_>>()
            .join(" OR ");
        let parsed = parse_cql2(&many).unwrap().filter.unwrap();
        let error = where_from_filter(&parsed).unwrap_err();
        assert!(error.message.contains("at most 200"), "{}", error.message);
        let fits = (0..MAX_WHERE_CLAUSES)
            .map(|i| format!("scode = 'c{i}'"))
            .collect::<Vec<_>>()
            .join(" OR ");
        assert!(where_from_filter(&parse_cql2(&fits).unwrap().filter.unwrap()).is_ok());
    }

    #[test]
    fn array_positions_have_no_where_spelling() {
        let parsed = parse_cql2("smetadata.outlets[0].power > 3").unwrap();
        let error = where_from_filter(&parsed.filter.unwrap()).unwrap_err();
        assert_eq!(error.position, 1);
        assert!(
            error.message.contains("array positions"),
            "{}",
            error.message
        );
    }
}
