//! Indexed `rawfilter` paths: which JSON paths of which entity the store keeps in an
//! index (configured as `Entity:Path`, e.g. `HubActivityPoi:GpsInfo.0.Altitude`), the
//! index each entity gets, and the registry the compiler reads to spell those paths
//! exactly as the index does.
//!
//! Why: a `rawfilter` clause reads its value out of the document of every row it
//! tests. On SQLite the JSONB copy sits after the ~5 KB text document in the same row,
//! so every test walks the row's overflow pages (≈ 1 GB read per request at demo scale
//! 10). An index on the exact expressions the compiler emits lets SQLite answer the
//! clause from the index entry instead of the row: one covering index per entity over
//! `(entity, sort_key, id_key, json_type(docb, P), docb ->> P, …)` for its configured
//! paths, so a list page in the default order and its count read the index alone when
//! every clause uses configured paths. The value is `->>`, not `json_extract`: SQLite
//! never takes the value of a function that may return a subtype (`json_extract` does,
//! for containers) from an index; `->>` returns the same SQL value without one, and the
//! compiled filter never passes the value on to a JSON function.
//!
//! SQLite matches an indexed expression only when the query spells it identically,
//! constants included; a bound path (`json_extract(c.docb, ?1)`) never matches. So for a
//! configured path the compiler writes the path as a literal. The literal is the
//! configuration's own text (validated here by the `rawfilter` path grammar, whose
//! keys are `[A-Za-z0-9_\-@]+`, so it holds no quote); a client's text only selects it.
//!
//! PostgreSQL cannot take an expression's value from an index without the column it
//! reads (`docb`, the whole document), so there the store keeps the configured paths'
//! values in a column of each row instead: `content.path_values`, an object with one
//! member per configured path of the row's entity, `[value]` or `[]` where the path
//! finds nothing, kept by a trigger from the table `content_value_paths` (rows from
//! [`postgres_value_paths`]). The compiler reads a registered path from that column and
//! only where the row lacks the member (not yet filled, or another configuration) from
//! the document, so the column never changes an answer, only how fast it comes.
//!
//! Must not: run SQL (the store creates and drops the indexes), or change what a filter
//! matches: the indexed form is the same expression.

use std::collections::BTreeSet;
use std::sync::RwLock;

use super::rawfilter::{parse_field_path, JsonPath};
use super::rawfilter_sql::sqlite_path;

/// Prefix of every index this module names; the store drops the ones no longer wanted.
pub const INDEX_PREFIX: &str = "content_rf_";

/// One configured path of one entity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct IndexedPath {
    pub entity: String,
    /// The path as SQLite's JSON functions spell it (`$."GpsInfo"[0]."Altitude"`).
    pub sqlite_path: String,
}

impl IndexedPath {
    /// Parses `Entity:Path`. The entity is a name of letters and digits; the path follows
    /// the `rawfilter` grammar without `[*]` (an element wildcard has no single value).
    pub fn parse(text: &str) -> Result<IndexedPath, String> {
        let (entity, path) = text
            .split_once(':')
            .ok_or_else(|| format!("{text:?}: expected Entity:Path"))?;
        let entity = entity.trim();
        if entity.is_empty() || !entity.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(format!(
                "{text:?}: the entity is a name of letters and digits"
            ));
        }
        let path: JsonPath = parse_field_path(path.trim())
            .map_err(|e| format!("{text:?}: {} at {}", e.message, e.position))?;
        if path.has_wildcard() {
            return Err(format!("{text:?}: a path with [*] cannot be indexed"));
        }
        Ok(IndexedPath {
            entity: entity.to_string(),
            sqlite_path: sqlite_path(&path.segments),
        })
    }
}

/// The SQLite index of one entity: its name (derived from its definition, so a changed
/// configuration makes a new name and the old index is dropped) and `CREATE INDEX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityIndex {
    pub name: String,
    pub create: String,
}

/// One covering index per entity with configured paths, in entity order. The index
/// leads with the columns of `content_order` so it serves the default order too; it is
/// not partial (`entity = ?` is a bound parameter, which a partial index cannot match).
pub fn sqlite_indexes(paths: &[IndexedPath]) -> Vec<EntityIndex> {
    let mut by_entity: std::collections::BTreeMap<&str, BTreeSet<&str>> = Default::default();
    for p in paths {
        by_entity
            .entry(p.entity.as_str())
            .or_default()
            .insert(p.sqlite_path.as_str());
    }
    by_entity
        .into_iter()
        .map(|(entity, paths)| {
            let mut columns = String::from("entity, sort_key, id_key");
            for p in &paths {
                columns.push_str(&format!(", json_type(docb, '{p}'), docb ->> '{p}'"));
            }
            let name = format!(
                "{INDEX_PREFIX}{}_{:08x}",
                entity.to_ascii_lowercase(),
                fnv1a(columns.as_bytes()) as u32
            );
            EntityIndex {
                create: format!("CREATE INDEX IF NOT EXISTS {name} ON content ({columns})"),
                name,
            }
        })
        .collect()
}

/// One row of PostgreSQL's `content_value_paths`: the entity, the path as SQLite spells
/// it (the member of `content.path_values`) and the strict `jsonpath` that reads it,
/// which finds what the compiler's own reading of the document finds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ValuePath {
    pub entity: String,
    pub path: String,
    pub query: String,
}

/// The rows of `content_value_paths` for `paths`, in order, each once.
pub fn postgres_value_paths(paths: &[IndexedPath]) -> Vec<ValuePath> {
    let rows: BTreeSet<ValuePath> = paths
        .iter()
        .map(|p| ValuePath {
            entity: p.entity.clone(),
            path: p.sqlite_path.clone(),
            query: format!("strict {}", p.sqlite_path),
        })
        .collect();
    rows.into_iter().collect()
}

/// A stable hash for index names (the standard library's hasher may change between
/// releases; a name must not).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The configured paths of every store this process set up (any entity: on SQLite the
/// literal is the same expression, so for an entity without the index it only costs a
/// statement of its own; on PostgreSQL a row without the member reads its document).
static CONFIGURED_PATHS: RwLock<BTreeSet<String>> = RwLock::new(BTreeSet::new());

/// Adds `paths` to the registry the compiler reads (the store calls it once it has
/// created their indexes, or on PostgreSQL named them in `content_value_paths`).
pub fn register(paths: &[IndexedPath]) {
    if let Ok(mut set) = CONFIGURED_PATHS.write() {
        set.extend(paths.iter().map(|p| p.sqlite_path.clone()));
    }
}

/// True when `path` (as [`sqlite_path`] spells it) is a registered path.
pub(super) fn is_configured(path: &str) -> bool {
    CONFIGURED_PATHS.read().is_ok_and(|set| set.contains(path))
}

/// True when `path` is spelled as a literal on SQLite. Only a registered path is: it
/// came from the configuration and holds no quote.
pub(super) fn is_literal(path: &str) -> bool {
    is_configured(path) && !path.contains('\'')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::checks::CheckTable;
    use crate::content::rawfilter::parse_rawfilter;
    use crate::content::rawfilter_sql::compile_rawfilter;
    use crate::sql::{Dialect, SqlBuilder, SqlValue};

    fn compile(dialect: Dialect, expr: &str) -> SqlBuilder {
        let mut q = SqlBuilder::new(dialect);
        let filter = parse_rawfilter(expr).unwrap();
        compile_rawfilter(&mut q, &filter, "rawfilter", &mut CheckTable::default());
        q
    }

    #[test]
    fn configured_paths_parse_and_bad_ones_are_refused() {
        assert_eq!(
            IndexedPath::parse("HubActivityPoi:GpsInfo.0.Altitude"),
            Ok(IndexedPath {
                entity: "HubActivityPoi".into(),
                sqlite_path: "$.\"GpsInfo\"[0].\"Altitude\"".into(),
            })
        );
        for (text, phrase) in [
            ("GpsInfo.0.Altitude", "Entity:Path"),
            ("Hub'x:Detail", "letters and digits"),
            (":Detail", "letters and digits"),
            ("Event:Detail.de'.Title", "at"),
            ("Event:Features.[*].Id", "[*]"),
        ] {
            let e = IndexedPath::parse(text).unwrap_err();
            assert!(e.contains(phrase), "{text}: {e}");
        }
    }

    #[test]
    fn one_covering_index_per_entity_named_by_its_definition() {
        let paths: Vec<IndexedPath> = [
            "Poi:B.x",
            "Poi:A.0.y",
            "Event:A.0.y",
            "Poi:B.x", // twice: once in the index
        ]
        .iter()
        .map(|p| IndexedPath::parse(p).unwrap())
        .collect();
        let indexes = sqlite_indexes(&paths);
        assert_eq!(indexes.len(), 2);
        assert!(indexes[0].name.starts_with("content_rf_event_"));
        assert_eq!(
            indexes[1].create,
            format!(
                "CREATE INDEX IF NOT EXISTS {} ON content (entity, sort_key, id_key, \
                 json_type(docb, '$.\"A\"[0].\"y\"'), docb ->> '$.\"A\"[0].\"y\"', \
                 json_type(docb, '$.\"B\".\"x\"'), docb ->> '$.\"B\".\"x\"')",
                indexes[1].name
            )
        );
        // Another path set, another name (the old index is dropped, the new one built).
        let fewer = sqlite_indexes(&paths[..1]);
        assert_ne!(fewer[0].name, indexes[1].name);
        assert!(fewer[0].name.starts_with("content_rf_poi_"));
        assert_eq!(sqlite_indexes(&paths[..1]), fewer);
    }

    #[test]
    fn postgresql_keeps_each_configured_path_once_with_its_strict_jsonpath() {
        let paths: Vec<IndexedPath> = ["Poi:B.x", "Poi:A.0.y", "Event:A.0.y", "Poi:B.x"]
            .iter()
            .map(|p| IndexedPath::parse(p).unwrap())
            .collect();
        let row = |entity: &str, path: &str| ValuePath {
            entity: entity.into(),
            path: path.into(),
            query: format!("strict {path}"),
        };
        assert_eq!(
            postgres_value_paths(&paths),
            [
                row("Event", "$.\"A\"[0].\"y\""),
                row("Poi", "$.\"A\"[0].\"y\""),
                row("Poi", "$.\"B\".\"x\""),
            ]
        );
    }

    #[test]
    fn registered_paths_are_written_as_the_index_spells_them() {
        let expr = "and(gt(ZzIndexed.0.Altitude,500),isnotnull(ZzOther.City))";
        let before = compile(Dialect::Sqlite, expr);
        assert!(
            !before.as_sql().contains("ZzIndexed"),
            "{}",
            before.as_sql()
        );
        register(&[IndexedPath::parse("Poi:ZzIndexed.0.Altitude").unwrap()]);
        let after = compile(Dialect::Sqlite, expr);
        assert_eq!(
            after.as_sql(),
            "(CASE WHEN hub_rf_check(json_type(c.docb, '$.\"ZzIndexed\"[0].\"Altitude\"'), ?1, ?2) \
             THEN (c.docb ->> '$.\"ZzIndexed\"[0].\"Altitude\"') > ?3 END \
             AND COALESCE(json_type(c.docb, ?4), 'null') <> 'null')"
        );
        assert_eq!(after.params()[2], SqlValue::Real(500.0));
        // The other path and every value stay bound.
        assert_eq!(
            after.params()[3],
            SqlValue::Text("$.\"ZzOther\".\"City\"".into())
        );
        // PostgreSQL reads the registered path's member of `c.path_values`, and the
        // document (by the row's key) where the row lacks it; the other path from the
        // document only.
        let pg = compile(Dialect::Postgres, expr);
        assert_eq!(
            pg.as_sql().matches("c.path_values -> ").count(),
            2,
            "{}",
            pg.as_sql()
        );
        assert!(
            pg.as_sql().contains(
                "CASE WHEN c.path_values -> $3::text IS NULL \
             THEN (SELECT jsonb_path_query_first(d.docb, ($4::text)::jsonpath, '{}'::jsonb, true) \
             FROM content d WHERE d.entity = c.entity AND d.id_key = c.id_key) \
             ELSE c.path_values -> $5::text -> 0 END AS v"
            ),
            "{}",
            pg.as_sql()
        );
        let member = SqlValue::Text("$.\"ZzIndexed\"[0].\"Altitude\"".into());
        assert_eq!(pg.params()[2], member);
        assert_eq!(pg.params()[4], member);
        assert!(!pg.as_sql().contains("ZzIndexed"), "{}", pg.as_sql());
        // A sort by it reads the same value from the index.
        let mut sort = SqlBuilder::new(Dialect::Sqlite);
        let keys = crate::content::rawfilter::parse_rawsort("-ZzIndexed.0.Altitude").unwrap();
        crate::content::rawfilter_sql::compile_rawsort(&mut sort, &keys);
        let value = "(c.docb ->> '$.\"ZzIndexed\"[0].\"Altitude\"')";
        assert_eq!(
            sort.as_sql(),
            format!("{value} IS NULL ASC, {value} DESC, ")
        );
        // A path below a `[*]` is not the indexed value: still bound.
        let each = compile(Dialect::Sqlite, "gt(ZzIndexed.[*].Altitude,1)");
        assert!(!each.as_sql().contains("Altitude"), "{}", each.as_sql());
    }
}
