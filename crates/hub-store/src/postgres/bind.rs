//! Binding `hub_query::SqlValue`s to PostgreSQL parameters.
//!
//! PostgreSQL infers each placeholder's type from the statement and the binary protocol
//! then demands exactly that type. The compilers bind integers where a column may be
//! `double precision`, and text that PostgreSQL may type as `jsonb`, so [`PgValue`]
//! converts to whatever type the server inferred, and refuses only what cannot convert.

use std::error::Error;

use bytes::BytesMut;
use hub_query::SqlValue;
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};

/// A `SqlValue` that converts to the parameter type the server asks for.
#[derive(Debug)]
pub(crate) struct PgValue<'a>(pub &'a SqlValue);

type BoxError = Box<dyn Error + Sync + Send>;

impl ToSql for PgValue<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self.0 {
            SqlValue::Null => Ok(IsNull::Yes),
            SqlValue::Bool(b) => match *ty {
                Type::BOOL => b.to_sql(ty, out),
                Type::INT2
                | Type::INT4
                | Type::INT8
                | Type::FLOAT4
                | Type::FLOAT8
                | Type::NUMERIC => PgValue(&SqlValue::Int(*b as i64)).to_sql(ty, out),
                _ => text(if *b { "true" } else { "false" }, ty, out),
            },
            SqlValue::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::FLOAT4 => (*i as f32).to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                _ => text(&i.to_string(), ty, out),
            },
            SqlValue::Real(f) => match *ty {
                Type::FLOAT8 => f.to_sql(ty, out),
                Type::FLOAT4 => (*f as f32).to_sql(ty, out),
                Type::INT8 if f.fract() == 0.0 => (*f as i64).to_sql(ty, out),
                _ => text(&f.to_string(), ty, out),
            },
            SqlValue::Text(s) => match *ty {
                Type::INT8 => s.trim().parse::<i64>()?.to_sql(ty, out),
                Type::INT4 => s.trim().parse::<i32>()?.to_sql(ty, out),
                Type::FLOAT8 => s.trim().parse::<f64>()?.to_sql(ty, out),
                Type::BOOL => s.trim().parse::<bool>()?.to_sql(ty, out),
                _ => text(s, ty, out),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// Text in the binary format of textual types; `jsonb` carries a version byte first.
fn text(s: &str, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    match *ty {
        Type::JSONB => {
            out.extend_from_slice(&[1]);
            out.extend_from_slice(s.as_bytes());
            Ok(IsNull::No)
        }
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
            out.extend_from_slice(s.as_bytes());
            Ok(IsNull::No)
        }
        _ => Err(format!("cannot send text as a parameter of type {ty}").into()),
    }
}

/// Parameter references for `query(sql, &bind(&values))`.
pub(crate) fn bind(values: &[SqlValue]) -> Vec<PgValue<'_>> {
    values.iter().map(PgValue).collect()
}

/// The slice of trait objects tokio-postgres takes.
pub(crate) fn refs<'a>(values: &'a [PgValue<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}
