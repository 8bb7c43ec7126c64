//! # hub-model
//!
//! The vocabulary every other Hub crate shares: the registry of Content API entity
//! types (names, routes, aliases, how ids and titles are found), the language codes
//! the platform knows, the Hub and ODH spellings of field and type names, RFC 7807 problem details, the caller's [`Principal`] with what
//! its roles open, and the timestamp formats used in documents.
//!
//! This crate owns *names and meanings*, nothing that moves: no I/O, no SQL. The one
//! piece of HTTP framework, `Problem`'s `IntoResponse`, sits behind the `http` feature
//! so that the storage crates do not pull axum in. A type added to the registry here becomes routable, storable and listed
//! in `GET /v1` without further changes elsewhere.

pub mod entity;
pub mod language;
pub mod naming;
pub mod principal;
pub mod problem;
pub mod text;
pub mod time;

pub use entity::{EntityType, ENTITY_TYPES};
pub use language::LANGUAGES;
pub use naming::Naming;
pub use principal::{Closed, Principal};
pub use problem::Problem;
