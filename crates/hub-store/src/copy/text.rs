//! A chunk of SQLite rows as PostgreSQL `COPY` text, and the resumption keys kept in the
//! bookkeeping table. Pure encoding: no statement is sent from here.

use std::fmt::Write as _;

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::Connection;
use serde_json::{json, Value};

use super::plan::{select_sql, TablePlan};
use super::{config, PROGRESS_TABLE};
use crate::Result;

pub(super) struct Chunk {
    pub(super) rows: usize,
    pub(super) data: Vec<u8>,
    pub(super) last_key: Option<String>,
}

/// Reads the next chunk after `after` (all keys when `None`) and encodes it as COPY text.
pub(super) fn read_chunk(
    conn: &Connection,
    plan: &TablePlan,
    after: Option<&[SqlValue]>,
) -> Result<Chunk> {
    let mut stmt = conn.prepare_cached(&select_sql(plan, after.is_some()))?;
    let mut rows = stmt.query(rusqlite::params_from_iter(after.unwrap_or(&[]).iter()))?;
    let nkey = plan.key.len();
    let mut data = Vec::with_capacity(64 * 1024);
    let mut count = 0;
    let mut last = None;
    while let Some(row) = rows.next()? {
        let mut key = Vec::with_capacity(nkey);
        for i in 0..nkey {
            key.push(row.get_ref(i)?.into());
        }
        for (n, column) in plan.target.iter().enumerate() {
            if n > 0 {
                data.push(b'\t');
            }
            let value = row.get_ref(nkey + column.source)?;
            encode(&mut data, value, &column.data_type).map_err(|detail| {
                config(format!(
                    "{}.{} at key {}: {detail}",
                    plan.name,
                    column.name,
                    encode_key(&key)
                ))
            })?;
        }
        data.push(b'\n');
        count += 1;
        last = Some(key);
    }
    Ok(Chunk {
        rows: count,
        data,
        last_key: last.map(|k| encode_key(&k)),
    })
}

/// A key as JSON text: integers as numbers, text as strings, reals and blobs tagged.
fn encode_key(key: &[SqlValue]) -> String {
    Value::Array(
        key.iter()
            .map(|v| match v {
                SqlValue::Null => Value::Null,
                SqlValue::Integer(i) => json!(i),
                SqlValue::Real(f) => json!({ "real": f }),
                SqlValue::Text(s) => json!(s),
                SqlValue::Blob(b) => json!({ "blob": hex(b) }),
            })
            .collect(),
    )
    .to_string()
}

pub(super) fn decode_key(text: &str) -> Result<Vec<SqlValue>> {
    let bad = || config(format!("unreadable key in {PROGRESS_TABLE}: {text}"));
    let Value::Array(items) = serde_json::from_str::<Value>(text).map_err(|_| bad())? else {
        return Err(bad());
    };
    items
        .into_iter()
        .map(|v| match v {
            Value::Null => Ok(SqlValue::Null),
            Value::Number(n) => n.as_i64().map(SqlValue::Integer).ok_or_else(bad),
            Value::String(s) => Ok(SqlValue::Text(s)),
            Value::Object(o) => match (
                o.get("real").and_then(Value::as_f64),
                o.get("blob").and_then(Value::as_str),
            ) {
                (Some(f), _) => Ok(SqlValue::Real(f)),
                (_, Some(h)) => unhex(h).map(SqlValue::Blob).ok_or_else(bad),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Appends `text` escaped for COPY's text format.
fn escape(out: &mut Vec<u8>, text: &[u8]) {
    for &b in text {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => out.push(b),
        }
    }
}

fn float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else {
        // Rust prints the shortest text that reads back as the same double.
        format!("{f}")
    }
}

/// Appends one SQLite value in COPY text form for a column of PostgreSQL type `data_type`.
fn encode(
    out: &mut Vec<u8>,
    value: ValueRef<'_>,
    data_type: &str,
) -> std::result::Result<(), String> {
    let kind = |v: &ValueRef<'_>| match v {
        ValueRef::Null => "NULL",
        ValueRef::Integer(_) => "integer",
        ValueRef::Real(_) => "real",
        ValueRef::Text(_) => "text",
        ValueRef::Blob(_) => "blob",
    };
    let refuse = |v: &ValueRef<'_>| {
        Err(format!(
            "cannot store a SQLite {} in a {data_type} column",
            kind(v)
        ))
    };
    match (data_type, value) {
        (_, ValueRef::Null) => out.extend_from_slice(b"\\N"),
        ("boolean", ValueRef::Integer(i)) => out.push(if i != 0 { b't' } else { b'f' }),
        ("boolean", ValueRef::Real(f)) => out.push(if f != 0.0 { b't' } else { b'f' }),
        ("boolean", ValueRef::Text(t)) => escape(out, t),
        ("smallint" | "integer" | "bigint", ValueRef::Integer(i)) => {
            out.extend_from_slice(i.to_string().as_bytes())
        }
        ("smallint" | "integer" | "bigint", ValueRef::Real(f))
            if f.fract() == 0.0 && f.abs() < 9.2e18 =>
        {
            out.extend_from_slice((f as i64).to_string().as_bytes())
        }
        ("smallint" | "integer" | "bigint", ValueRef::Text(t)) => escape(out, t),
        ("double precision" | "real" | "numeric", ValueRef::Integer(i)) => {
            out.extend_from_slice(i.to_string().as_bytes())
        }
        ("double precision" | "real" | "numeric", ValueRef::Real(f)) => {
            out.extend_from_slice(float(f).as_bytes())
        }
        ("double precision" | "real" | "numeric", ValueRef::Text(t)) => escape(out, t),
        ("bytea", ValueRef::Blob(b) | ValueRef::Text(b)) => {
            out.extend_from_slice(b"\\\\x");
            out.extend_from_slice(hex(b).as_bytes());
        }
        ("jsonb" | "json", ValueRef::Text(t)) => escape(out, t),
        ("jsonb" | "json", ValueRef::Integer(i)) => out.extend_from_slice(i.to_string().as_bytes()),
        ("jsonb" | "json", ValueRef::Real(f)) if f.is_finite() => {
            out.extend_from_slice(float(f).as_bytes())
        }
        (
            "boolean" | "smallint" | "integer" | "bigint" | "double precision" | "real" | "numeric"
            | "bytea" | "jsonb" | "json",
            v,
        ) => return refuse(&v),
        // Text and every other type: PostgreSQL reads the value's text form.
        (_, ValueRef::Text(t)) => escape(out, t),
        (_, ValueRef::Integer(i)) => out.extend_from_slice(i.to_string().as_bytes()),
        (_, ValueRef::Real(f)) => out.extend_from_slice(float(f).as_bytes()),
        (_, ValueRef::Blob(b)) => match std::str::from_utf8(b) {
            Ok(t) => escape(out, t.as_bytes()),
            Err(_) => return refuse(&value),
        },
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        let key = vec![
            SqlValue::Integer(-5),
            SqlValue::Text("a\"b".into()),
            SqlValue::Real(1.5),
            SqlValue::Blob(vec![0, 255]),
            SqlValue::Null,
        ];
        assert_eq!(decode_key(&encode_key(&key)).unwrap(), key);
    }

    #[test]
    fn values_encode_for_copy() {
        let mut out = Vec::new();
        encode(&mut out, ValueRef::Integer(0), "boolean").unwrap();
        encode(&mut out, ValueRef::Text(b"a\tb\\c\n"), "text").unwrap();
        encode(&mut out, ValueRef::Blob(&[1, 171]), "bytea").unwrap();
        encode(&mut out, ValueRef::Real(0.1), "double precision").unwrap();
        encode(&mut out, ValueRef::Null, "jsonb").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "fa\\tb\\\\c\\n\\\\x01ab0.1\\N"
        );
        assert!(encode(&mut Vec::new(), ValueRef::Blob(&[1]), "jsonb").is_err());
    }
}
