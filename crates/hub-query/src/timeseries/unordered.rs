//! Latest values read in any order: the answer of a `…/latest` query without a limit is
//! at most one row per series, so the store can read it without `ORDER BY` and sort it
//! in memory. The database then skips a sort of wide rows (each carrying its station,
//! parent, type and metadata columns): on PostgreSQL a quarter of the time of a latest
//! answer for 1,000 stations, against a few hundred microseconds to sort the same rows
//! by their keys in the server.

use crate::SqlBuilder;

/// The most rows a store sorts in memory; a latest answer with more is read again with
/// the compiled query's `ORDER BY` and streamed, so memory stays bounded whatever the
/// number of series. The store reads one row more to tell.
pub const MAX_UNORDERED_ROWS: usize = 10_000;

/// The compiled latest query without its `ORDER BY` and `OFFSET`, and how to apply both.
#[derive(Debug, Clone)]
pub struct UnorderedRead {
    /// The compiled query's SQL and parameters up to its ordering: the same rows (and
    /// `DISTINCT`) in no particular order.
    pub sql: SqlBuilder,
    /// Positions (0-based, in the SQL columns) of the ordering keys, most significant
    /// first; each compares as SQL orders it (NULL first, numbers by value, then text by
    /// bytes).
    pub order: Vec<usize>,
    /// Rows skipped after the ordering.
    pub offset: u64,
    /// The most rows to sort in memory ([`MAX_UNORDERED_ROWS`]).
    pub max_rows: usize,
    /// The same rows with their station, parent, type and provenance columns taken from
    /// the store's catalog instead (PostgreSQL); see [`CatalogRead`].
    pub catalog: Option<CatalogRead>,
}

/// A kind of row the store keeps in its catalog: rows many answers repeat (a station
/// with its metadata, a data type with its metadata, a provenance), read by id and kept
/// with their row version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CatalogKind {
    Station,
    Type,
    Provenance,
}

impl CatalogKind {
    /// The columns of a catalog row, as the compiled queries name them for a station
    /// (`s`, `m`), a type (`t`, `tm`) or a provenance (`pr`).
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            CatalogKind::Station => &[
                "s.name",
                "s.stationtype",
                "s.stationcode",
                "s.origin",
                "s.active",
                "s.available",
                "s.x",
                "s.y",
                "s.srid",
                "m.json",
            ],
            CatalogKind::Type => &["t.cname", "t.cunit", "t.rtype", "t.description", "tm.json"],
            CatalogKind::Provenance => &[
                "pr.data_collector",
                "pr.data_collector_version",
                "pr.lineage",
            ],
        }
    }

    /// PostgreSQL: the catalog rows of the ids in `$1` (an `int8[]`): id, row version
    /// (`xmin`), then [`CatalogKind::columns`].
    pub fn sql(self) -> &'static str {
        match self {
            CatalogKind::Station => "SELECT s.id, s.xmin, s.name, s.stationtype, s.stationcode, s.origin, s.active, s.available, s.x, s.y, s.srid, m.json FROM ts_station s LEFT JOIN ts_metadata m ON m.id = s.meta_data_id WHERE s.id = ANY($1)",
            CatalogKind::Type => "SELECT t.id, t.xmin, t.cname, t.cunit, t.rtype, t.description, tm.json FROM ts_type t LEFT JOIN ts_type_metadata tm ON tm.id = t.meta_data_id WHERE t.id = ANY($1)",
            CatalogKind::Provenance => "SELECT pr.id, pr.xmin, pr.data_collector, pr.data_collector_version, pr.lineage FROM ts_provenance pr WHERE pr.id = ANY($1)",
        }
    }
}

/// Where one SQL column of the compiled query comes from in a catalog read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellSource {
    /// This column of the read's row.
    Read(usize),
    /// Column `column` of the catalog row of entity `entity` (an index into
    /// [`CatalogRead::entities`]).
    Catalog { entity: usize, column: usize },
}

/// Latest values read with only the ids and row versions of their station, parent, type
/// and provenance, whose columns the store takes from its catalog.
///
/// An answer for 1,000 stations is 1,000 rows of 36 columns; most are the station's,
/// parent's and type's, the same in every answer until a write changes them. The read
/// keeps the compiled query's joins and conditions (what is visible does not change)
/// and selects, instead of those columns, each entity's `id` and `xmin`. PostgreSQL sets
/// `xmin` anew on every change of a row (an update writes a new row version): a catalog
/// row is used only when its version equals the one read, so a change, made by this
/// process or any other, is seen by the next read. Metadata and provenance rows are
/// never updated (a change is a new row the station or type then points to, which
/// changes the station's or type's version).
#[derive(Debug, Clone)]
pub struct CatalogRead {
    /// The read: the compiled query's columns that come from no catalog, then the id and
    /// version of each of `entities`, in that order.
    pub sql: SqlBuilder,
    /// The entities whose columns come from the catalog.
    pub entities: Vec<CatalogKind>,
    /// Per SQL column of the compiled query, its source.
    pub sources: Vec<CellSource>,
    /// How many columns of the read come before the entities' ids and versions.
    pub read_columns: usize,
}

/// The catalog plan of a compiled latest query whose select list (its text up to
/// `select_end`, without parameters) has the plain expressions `exprs` (`None`: not a
/// plain column); `None` when no column comes from the catalog.
pub(super) fn catalog_read(
    compiled: &SqlBuilder,
    select_end: usize,
    exprs: &[Option<String>],
    parent_joined: bool,
) -> Option<CatalogRead> {
    // (alias whose `id` and `xmin` are read, kind)
    let mut entities: Vec<(&str, CatalogKind)> = Vec::new();
    let mut sources = Vec::with_capacity(exprs.len());
    let mut read: Vec<&str> = Vec::new();
    for expr in exprs {
        let found = expr.as_deref().and_then(|e| {
            let (alias, column) = e.split_once('.')?;
            let (id_alias, kind, base) = match alias {
                "s" => ("s", CatalogKind::Station, "s"),
                "m" => ("s", CatalogKind::Station, "m"),
                "p" if parent_joined => ("p", CatalogKind::Station, "s"),
                "pm" if parent_joined => ("p", CatalogKind::Station, "m"),
                "t" => ("t", CatalogKind::Type, "t"),
                "tm" => ("t", CatalogKind::Type, "tm"),
                "pr" => ("pr", CatalogKind::Provenance, "pr"),
                _ => return None,
            };
            let name = format!("{base}.{column}");
            let at = kind.columns().iter().position(|c| *c == name)?;
            Some((id_alias, kind, at))
        });
        match found {
            Some((id_alias, kind, column)) => {
                let entity = match entities.iter().position(|(a, _)| *a == id_alias) {
                    Some(k) => k,
                    None => {
                        entities.push((id_alias, kind));
                        entities.len() - 1
                    }
                };
                sources.push(CellSource::Catalog { entity, column });
            }
            // A column the answer shows twice (`_timestamp`, `mvalidtime`) is read once.
            None => {
                let expr = expr.as_deref().unwrap_or_default();
                match read.iter().position(|r| !expr.is_empty() && *r == expr) {
                    Some(at) => sources.push(CellSource::Read(at)),
                    None => {
                        sources.push(CellSource::Read(read.len()));
                        read.push(expr);
                    }
                }
            }
        }
    }
    if entities.is_empty() || read.iter().any(|e| e.is_empty()) {
        return None;
    }
    let mut list: Vec<String> = read.iter().map(|e| e.to_string()).collect();
    for (alias, _) in &entities {
        list.push(format!("{alias}.id"));
        list.push(format!("{alias}.xmin"));
    }
    // `SELECT DISTINCT` would compare ids instead of the columns they stand for.
    let text = compiled.as_sql();
    if !text.starts_with("SELECT ") || text.starts_with("SELECT DISTINCT ") {
        return None;
    }
    let mut sql = compiled.clone();
    sql.replace_text("SELECT ".len()..select_end, &list.join(", "))?;
    Some(CatalogRead {
        sql,
        entities: entities.into_iter().map(|(_, k)| k).collect(),
        sources,
        read_columns: read.len(),
    })
}
