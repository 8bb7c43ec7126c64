//! # hub-query
//!
//! The small languages of the Hub APIs and their compilation to SQL. Every parser here
//! turns a client's text into an AST whose errors carry a 1-based character position,
//! so the HTTP layer can say *where* an expression went wrong. Every compiler emits
//! SQL text with bound parameters for one of two dialects (SQLite, PostgreSQL);
//! client input never becomes SQL text.
//!
//! Pure functions only: no I/O, no connections, no HTTP. The table layout the compiled
//! SQL expects is described in [`content::schema`] and created by `hub-store`.

pub mod content;
pub mod fields;
pub mod sql;
pub mod timeseries;

pub use sql::{Dialect, SqlBuilder, SqlValue};
