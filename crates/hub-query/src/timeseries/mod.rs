//! # Time Series API languages
//!
//! The `where` filter and `select` list of the Time Series API (`/v2/...`), parsed as the
//! reference ("Ninja") parses them — same accepted inputs, same error texts and positions
//! — and compiled to SQL with bound parameters for SQLite and PostgreSQL. Also the field
//! catalogue (output names and their columns), the route queries, closed-data rules,
//! the narrow reads of history answers ([`NarrowHistory`]), the unordered reads of latest
//! values ([`UnorderedRead`]), the windows of a history page ([`HistoryWindows`]) and
//! the reference's date/time input format.
//!
//! Owns: ASTs, error texts, SQL text. Must not: run SQL, know HTTP, or render JSON (the
//! store runs [`CompiledTs`]; `hub-timeseries` shapes rows). The dialect switch lives in
//! the `match b.dialect` arms of `filter.rs`/`query.rs`; both dialects read the same
//! columns (the PostgreSQL schema is the SQLite schema's twin: epoch-ms times, x/y/srid,
//! JSON as text). Both rely on functions of `hub-store`: `hub_json_json`,
//! `hub_json_text`, `hub_json_num`, `hub_distance` (registered on SQLite, created by the
//! PostgreSQL migration), and on SQLite `regexp` and `hub_geom_intersects_box`, where
//! PostgreSQL uses `~` and PostGIS (`ST_Intersects` on generated geometry columns).

mod access;
#[cfg(test)]
mod catalog_only_tests;
pub mod cql2;
pub mod datetime;
pub mod filter;
mod java_numbers;
mod narrow;
mod order;
#[cfg(test)]
mod order_tests;
pub mod parser;
pub mod query;
pub mod regex_check;
pub mod schema;
pub mod select;
#[cfg(test)]
mod tests;
mod unordered;
pub mod windows;

pub use datetime::parse_datetime;
pub use parser::{parse_where, Where, WhereSyntaxError};
pub use query::{
    compile_query, AccessRule, CatalogKind, CatalogRead, CellSource, CompiledTs, EventScope,
    NarrowHistory, OutColumn, ProvenanceRead, Route, TsQuery, UnorderedRead, MAX_NARROW_SERIES,
    MAX_UNORDERED_ROWS,
};
pub use regex_check::REGEX_SIZE_LIMIT;
pub use schema::{DefList, Kind};
pub use windows::{HistoryWindows, Window};

/// Errors of the `where`/`select` languages. Every variant is the client's fault (400).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TsQueryError {
    #[error("{}", .0.message())]
    Syntax(WhereSyntaxError),
    #[error("SELECT EXPANSION ERROR: Syntax Error in WHERE clause: Alias '{0}' does not exist")]
    AliasNotFound(String),
    #[error("SELECT EXPANSION ERROR: Syntax Error in WHERE clause: '{op}' is not a valid operator for a value of type {type_key}. Valid operators for this type: {valid}")]
    InvalidOperator {
        op: String,
        type_key: String,
        valid: String,
    },
    #[error("SELECT EXPANSION ERROR: Syntax Error in WHERE clause: '{op}.<LIST>' with value {value} is not valid (checks failed)")]
    ChecksFailed { op: String, value: String },
    #[error("DATA FETCHING ERROR: 'mvalue' can only be used with NULL, NUMBERS or STRINGS: '{0}' given.")]
    MvalueType(String),
    #[error("SELECT EXPANSION ERROR: Key '{name}' is not reachable from the expanded select definition list: [{lists}]")]
    SelectKey { name: String, lists: String },
    #[error(
        "SELECT EXPANSION ERROR: The target '{0}' is invalid: use output names and JSON paths made of letters, digits, '.', '_' and '-'"
    )]
    SelectInvalid(String),
    #[error("SELECT EXPANSION ERROR: Syntax Error in WHERE clause: '{alias}' is a text field and the value '{raw}' is not quoted; string values must be quoted: {alias}.{op}.\"{raw}\"")]
    QuoteString {
        alias: String,
        op: String,
        raw: String,
    },
    #[error("SELECT EXPANSION ERROR: Syntax Error in WHERE clause: {0}")]
    TypeMismatch(String),
    /// A `re`/`ire`/`nre`/`nire` value the regex engine refuses or that compiles too large.
    #[error("Invalid regular expression '{pattern}': {detail}")]
    InvalidRegex { pattern: String, detail: String },
    /// An input over one of the documented size limits (`MAX_WHERE_*`, `MAX_SELECT_*`).
    #[error("{detail}")]
    Limit {
        parameter: &'static str,
        detail: String,
    },
    #[error("SELECT EXPANSION ERROR: Syntax Error in WHERE clause: SRID {0} is not supported in geospatial filters; use 4326 (longitude, latitude) or 3857")]
    Srid(i64),
}
