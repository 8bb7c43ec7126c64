//! Content documents and their side tables (languages, folded titles, tags, event date
//! ranges, revisions), declared for both backends.
//!
//! PostgreSQL: every text column that is compared or ordered collates as "C" (byte
//! order), whatever the database's default, so both backends page and sort alike. It
//! keeps the document as written in `doc` (key order kept: `jsonb` would reorder keys)
//! and a `jsonb` copy in `docb` for filters, sorts and containment, a PostGIS point
//! generated from the coordinates, and GIN/GiST indexes for tags, JSON containment,
//! trigram search and distance. SQLite gained `content_date`, the position index and
//! `docb` in later migrations (4, 6, 7); PostgreSQL had them from its first.
//!
//! The texts that only one backend runs are in [`sqlite`] and [`postgres`].
//!
//! Must not: change a text a released migration applied (see the parent module).

use super::{Dialect, Index, Part, Table};

mod postgres;
mod sqlite;
pub(crate) use postgres::*;
pub(crate) use sqlite::*;

pub(crate) const CONTENT: Table = Table {
    sqlite: r#"CREATE TABLE content (
    entity      TEXT NOT NULL,
    id_key      TEXT NOT NULL,
    id          TEXT NOT NULL,
    sort_key    TEXT NOT NULL,
    source      TEXT,
    active      INTEGER,
    last_change TEXT,
    latitude    REAL,
    longitude   REAL,
    doc         TEXT NOT NULL,
    -- A rowid table, not WITHOUT ROWID: documents are kilobytes, and key probes
    -- (tag, search and id filters) must stay in the small unique index.
    UNIQUE (entity, id_key)
)"#,
    postgres: r#"CREATE TABLE content (
    entity      text COLLATE "C" NOT NULL,
    id_key      text COLLATE "C" NOT NULL,
    id          text COLLATE "C" NOT NULL,
    sort_key    text COLLATE "C" NOT NULL,
    source      text COLLATE "C",
    active      boolean,
    last_change text COLLATE "C",
    latitude    double precision,
    longitude   double precision,
    -- The document as written (key order kept: `jsonb` would reorder keys), and its
    -- `jsonb` copy for filters, sorts and containment.
    doc         text NOT NULL,
    docb        jsonb NOT NULL,
    geom        geometry(Point, 4326) GENERATED ALWAYS AS (
                    CASE WHEN latitude IS NOT NULL AND longitude IS NOT NULL
                         THEN ST_SetSRID(ST_MakePoint(longitude, latitude), 4326) END) STORED,
    PRIMARY KEY (entity, id_key)
)"#,
};

pub(crate) const CONTENT_LANGUAGE: Table = Table {
    sqlite: r#"CREATE TABLE content_language (
    entity TEXT NOT NULL,
    id_key TEXT NOT NULL,
    lang   TEXT NOT NULL,
    PRIMARY KEY (entity, id_key, lang)
) WITHOUT ROWID"#,
    postgres: r#"CREATE TABLE content_language (
    entity text COLLATE "C" NOT NULL,
    id_key text COLLATE "C" NOT NULL,
    lang   text COLLATE "C" NOT NULL,
    PRIMARY KEY (entity, id_key, lang)
)"#,
};

pub(crate) const CONTENT_TITLE: Table = Table {
    sqlite: r#"CREATE TABLE content_title (
    entity TEXT NOT NULL,
    id_key TEXT NOT NULL,
    lang   TEXT NOT NULL,
    folded TEXT NOT NULL
)"#,
    postgres: r#"CREATE TABLE content_title (
    entity text COLLATE "C" NOT NULL,
    id_key text COLLATE "C" NOT NULL,
    lang   text COLLATE "C" NOT NULL,
    folded text COLLATE "C" NOT NULL
)"#,
};

pub(crate) const CONTENT_TAG: Table = Table {
    sqlite: r#"CREATE TABLE content_tag (
    entity TEXT NOT NULL,
    id_key TEXT NOT NULL,
    kind   TEXT NOT NULL,
    tag    TEXT NOT NULL,
    PRIMARY KEY (entity, kind, tag, id_key)
) WITHOUT ROWID"#,
    postgres: r#"CREATE TABLE content_tag (
    entity text COLLATE "C" NOT NULL,
    id_key text COLLATE "C" NOT NULL,
    kind   text COLLATE "C" NOT NULL,
    tag    text COLLATE "C" NOT NULL,
    PRIMARY KEY (entity, kind, tag, id_key)
)"#,
};

pub(crate) const CONTENT_REVISION: Table = Table {
    sqlite: r#"CREATE TABLE content_revision (
    entity   TEXT PRIMARY KEY,
    revision INTEGER NOT NULL
) WITHOUT ROWID"#,
    postgres: r#"CREATE TABLE content_revision (
    entity   text COLLATE "C" PRIMARY KEY,
    revision bigint NOT NULL
)"#,
};

pub(crate) const CONTENT_DATE: Table = Table {
    sqlite: r#"CREATE TABLE content_date (
    entity     TEXT NOT NULL,
    id_key     TEXT NOT NULL,
    date_begin TEXT NOT NULL,
    date_end   TEXT NOT NULL
)"#,
    postgres: r#"CREATE TABLE content_date (
    entity     text COLLATE "C" NOT NULL,
    id_key     text COLLATE "C" NOT NULL,
    date_begin text COLLATE "C" NOT NULL,
    date_end   text COLLATE "C" NOT NULL
)"#,
};

pub(crate) const CONTENT_ORDER: Index = Index {
    name: "content_order",
    table: "content",
    using: None,
    only: None,
    columns: "entity, sort_key, id_key",
};

pub(crate) const CONTENT_SOURCE: Index = Index {
    name: "content_source",
    table: "content",
    using: None,
    only: None,
    columns: "entity, source",
};

pub(crate) const CONTENT_LAST_CHANGE: Index = Index {
    name: "content_last_change",
    table: "content",
    using: None,
    only: None,
    columns: "entity, last_change",
};

pub(crate) const CONTENT_POSITION: Index = Index {
    name: "content_position",
    table: "content",
    using: None,
    only: None,
    columns: "entity, latitude, longitude",
};

pub(crate) const CONTENT_TITLE_DOC: Index = Index {
    name: "content_title_doc",
    table: "content_title",
    using: None,
    only: None,
    columns: "entity, id_key",
};

pub(crate) const CONTENT_TAG_DOC: Index = Index {
    name: "content_tag_doc",
    table: "content_tag",
    using: None,
    only: None,
    columns: "entity, id_key",
};

pub(crate) const CONTENT_DATE_DOC: Index = Index {
    name: "content_date_doc",
    table: "content_date",
    using: None,
    only: None,
    columns: "entity, id_key, date_end, date_begin",
};

pub(crate) const CONTENT_DATE_RANGE: Index = Index {
    name: "content_date_range",
    table: "content_date",
    using: None,
    only: None,
    columns: "entity, date_end, date_begin",
};

pub(crate) const CONTENT_GEOM: Index = Index {
    name: "content_geom",
    table: "content",
    using: Some("gist"),
    only: None,
    columns: "geom",
};

pub(crate) const CONTENT_GEOG: Index = Index {
    name: "content_geog",
    table: "content",
    using: Some("gist"),
    only: None,
    columns: "(geom::geography)",
};

/// The geometry indexes lead with the entity (`btree_gist`), so a polygon or radius
/// filter reads only that entity's positions: with `geom` alone the planner ANDed the
/// GiST matches of every entity with the entity's whole `content_source` range, a part
/// that grows with the collection (2.6 of 5.1 ms for a polygon at scale 10).
pub(crate) const CONTENT_ENTITY_GEOM: Index = Index {
    name: "content_entity_geom",
    table: "content",
    using: Some("gist"),
    only: None,
    columns: "entity, geom",
};

pub(crate) const CONTENT_ENTITY_GEOG: Index = Index {
    name: "content_entity_geog",
    table: "content",
    using: Some("gist"),
    only: None,
    columns: "entity, (geom::geography)",
};

pub(crate) const CONTENT_DOCB: Index = Index {
    name: "content_docb",
    table: "content",
    using: Some("gin"),
    only: None,
    columns: "docb jsonb_path_ops",
};

pub(crate) const CONTENT_TITLE_TRGM: Index = Index {
    name: "content_title_trgm",
    table: "content_title",
    using: Some("gin"),
    only: None,
    columns: "folded gin_trgm_ops",
};

/// The position index with each document's sort key and id key after the position:
/// a geographic filter (radius, polygon, OGC `bbox`) then counts and orders its
/// matches from the index alone. Without them every match was looked up in `content`
/// for its keys, one row of kilobytes each, scattered over a file far larger than the
/// page cache: at scale 10 a polygon of 7,065 matches read them through `pread` and
/// cost 17 ms of Hub CPU, now 4.6 ms. The index grows by the keys' bytes (12 MB at
/// scale 10). PostgreSQL filters positions in its GiST index, whose geometries cannot
/// be returned from the index, so it keeps its btree as it is.
pub(crate) const CONTENT_POSITION_WITH_KEYS: Index = Index {
    name: "content_position",
    table: "content",
    using: None,
    only: Some(Dialect::Sqlite),
    columns: "entity, latitude, longitude, sort_key, id_key",
};

/// Each document's `Shortname` as written, beside its position: what a vector tile's
/// point carries with the id. A tile read and parsed up to 20,000 whole documents for
/// these four values; on SQLite the position index now carries them all (it grows by
/// the ids' and names' bytes), so a tile reads the index alone.
pub(crate) const CONTENT_POSITION_WITH_NAMES: Index = Index {
    name: "content_position",
    table: "content",
    using: None,
    only: Some(Dialect::Sqlite),
    columns: "entity, latitude, longitude, sort_key, id_key, id, shortname",
};

/// PostgreSQL's order index also carries each document's source. A page of a list
/// filtered by source walks the order and tests the source of each entry in the index
/// instead of the row; the generic plan (which does not see how common the source is)
/// otherwise gathered every document of the source and sorted them: the first
/// `source=lts&pagenumber=40` after a write 74 → 7 ms, `source=lts&tagfilter=hiking`
/// 403 → 36 ms at scale 10. SQLite keeps its index (`INDEXED BY content_order` walks
/// read the row anyway).
pub(crate) const CONTENT_ORDER_WITH_SOURCE: Index = Index {
    name: "content_order",
    table: "content",
    using: None,
    only: Some(Dialect::Postgres),
    columns: "entity, sort_key, id_key, source",
};

/// The order with what a map point carries, on SQLite: a tile whose box holds many of
/// the entity's documents walks it instead of reading every match from
/// `content_position` and sorting them (the zoom-6 tile of the scale-10 POIs: 51,000
/// entries read and sorted, 100 ms, against 27,000 passed, 15 ms), and any walk of a
/// box along the order tests the positions in it instead of reading rows. About 34 MB
/// at scale 10. PostgreSQL holds the same columns in `content_order_values`.
pub(crate) const CONTENT_ORDER_POINTS: Index = Index {
    name: "content_order_points",
    table: "content",
    using: None,
    only: Some(Dialect::Sqlite),
    columns: "entity, sort_key, id_key, latitude, longitude, id, shortname",
};

/// SQLite migration 16 and PostgreSQL migration 18: each entity's revision row also
/// counts the documents its writes wrote, so a kept total knows how many of them have
/// been written since it was counted (`count_cache`). A capped count reads a few
/// hundred matches past its limit; while fewer documents than that were written, the
/// total it settled on still holds and no count runs.
pub(crate) const CONTENT_REVISION_WRITTEN: &[Part] = &[
    Part::Only(
        Dialect::Sqlite,
        "ALTER TABLE content_revision ADD COLUMN written INTEGER NOT NULL DEFAULT 0;\n",
    ),
    Part::Only(
        Dialect::Postgres,
        "ALTER TABLE content_revision ADD COLUMN written bigint NOT NULL DEFAULT 0;\n",
    ),
];

/// The documents of an entity in a language, for `langfilter`: the table's key leads
/// with the document, which answers "the languages of this document" but not "the
/// documents in this language".
pub(crate) const CONTENT_LANGUAGE_LANG: Index = Index {
    name: "content_language_lang",
    table: "content_language",
    using: None,
    only: None,
    columns: "entity, lang, id_key",
};

/// SQLite migration 12 and PostgreSQL migration 11 (statistics gathered at once on
/// SQLite, as for migration 11).
pub(crate) const LANGUAGE_DOCUMENTS: &[Part] = &[
    Part::Index(&CONTENT_LANGUAGE_LANG),
    Part::Only(Dialect::Sqlite, "ANALYZE content_language_lang;\n"),
];

/// SQLite migration 13 and PostgreSQL migration 12: the values of the fields listed in
/// `hub_query::content::value_tags` as `content_tag` rows, written for the documents
/// already stored (new writes add them with the other tags). At ODH's size the
/// Accommodation flags and `publishedon` read every document's JSON without them.
pub(crate) const FIELD_VALUE_TAGS: &[Part] = &[
    Part::Only(Dialect::Sqlite, include_str!("field_values_sqlite.sql")),
    Part::Only(Dialect::Postgres, include_str!("field_values_postgres.sql")),
];

/// Every table of the group, for the twin check in the parent module.
#[cfg(test)]
pub(crate) const TABLES: &[&Table] = &[
    &CONTENT,
    &CONTENT_LANGUAGE,
    &CONTENT_TITLE,
    &CONTENT_TAG,
    &CONTENT_REVISION,
    &CONTENT_DATE,
];
