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
//! Must not: change a text a released migration applied (see the parent module).

use super::{Dialect, Index, Part, Table};

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

/// PostgreSQL migration 6: the entity-led geometry indexes replace the plain ones.
pub(crate) const POSTGRES_ENTITY_GEOMETRY: &[Part] = &[
    Part::Only(
        Dialect::Postgres,
        "CREATE EXTENSION IF NOT EXISTS btree_gist;\n",
    ),
    Part::Index(&CONTENT_ENTITY_GEOM),
    Part::Index(&CONTENT_ENTITY_GEOG),
    Part::Only(
        Dialect::Postgres,
        "DROP INDEX IF EXISTS content_geom;\nDROP INDEX IF EXISTS content_geog;\nANALYZE content;\n",
    ),
];

/// PostgreSQL migration 7: every committed write of a revision notifies the processes
/// that keep revisions in memory (`revision_watch`). One notification per statement;
/// PostgreSQL folds equal ones of a transaction into one.
pub(crate) const POSTGRES_REVISION_NOTIFY: &[Part] = &[Part::Only(
    Dialect::Postgres,
    r#"
CREATE FUNCTION hub_content_revision_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('hub_content_revision', '');
    RETURN NULL;
END $$;
CREATE TRIGGER content_revision_notify AFTER INSERT OR UPDATE OR DELETE ON content_revision
    FOR EACH STATEMENT EXECUTE FUNCTION hub_content_revision_notify();
"#,
)];

/// PostgreSQL migration 10: a document of common size (up to about 15 KB as written)
/// stays in its row, lz4-compressed, and the short columns never leave the row.
///
/// With the defaults a row is cut down to 2 KB: `doc` went to TOAST, so every document
/// sent cost an index probe and one to three chunk fetches, and a list page of 10 cost
/// PostgreSQL about 40 % more CPU. `doc` stored `MAIN` stays in the row, compressed;
/// but PostgreSQL compresses `MAIN` values only after it has moved out every `EXTENDED`
/// one it can, so that setting alone sent the short columns (keys, sort key) to TOAST
/// while the row was still over its target, and every sort or join on them went
/// through TOAST (the polygon page 2.4× slower). Those columns are `MAIN` too, and the
/// target is half a page: `docb` (the largest movable value) leaves the row first,
/// `doc` is then compressed in it, and two rows fit a page. Rows written before keep their layout until written again
/// (`docs/deployment.md` says how to rewrite them at once).
pub(crate) const POSTGRES_DOCUMENTS_IN_ROW: &[Part] = &[Part::Only(
    Dialect::Postgres,
    r#"
ALTER TABLE content SET (toast_tuple_target = 4080),
    ALTER COLUMN doc SET STORAGE MAIN,
    ALTER COLUMN entity SET STORAGE MAIN,
    ALTER COLUMN id_key SET STORAGE MAIN,
    ALTER COLUMN id SET STORAGE MAIN,
    ALTER COLUMN sort_key SET STORAGE MAIN,
    ALTER COLUMN source SET STORAGE MAIN,
    ALTER COLUMN last_change SET STORAGE MAIN;
DO $$ BEGIN
    ALTER TABLE content ALTER COLUMN doc SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'lz4 compression unavailable, doc stays pglz';
END $$;
"#,
)];

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

/// PostGIS for geometry, pg_trgm for substring search on folded titles.
const EXTENSIONS: &str = r#"
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
"#;

/// lz4 reads the jsonb copies about twice as fast as the default pglz when filters
/// scan them; servers built without lz4 keep pglz.
const DOCB_LZ4: &str = r#"
DO $$ BEGIN
    ALTER TABLE content ALTER COLUMN docb SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'lz4 compression unavailable, docb stays pglz';
END $$;
"#;

/// SQLite keeps `content_date` by triggers, so every write path (batch load, single put,
/// delete) agrees. Ranges: EventDate[].From + Begin .. To + End (End missing or 00:00 =
/// end of day), or DateBegin..DateEnd when there is no EventDate; as
/// `YYYY-MM-DD HH:MM:SS`. PostgreSQL computes the same ranges in Rust.
const DATE_TRIGGERS: &str = r#"
CREATE TRIGGER content_date_insert AFTER INSERT ON content WHEN NEW.entity = 'Event' BEGIN
    DELETE FROM content_date WHERE entity = NEW.entity AND id_key = NEW.id_key;
    INSERT INTO content_date (entity, id_key, date_begin, date_end)
    SELECT NEW.entity, NEW.id_key, b, e FROM (SELECT b, e FROM (
        SELECT datetime(date(json_extract(d.value, '$.From')) || ' ' || COALESCE(time(json_extract(d.value, '$.Begin')), '00:00:00')) AS b,
               datetime(date(COALESCE(json_extract(d.value, '$.To'), json_extract(d.value, '$.From'))) || ' ' ||
                   CASE WHEN COALESCE(time(json_extract(d.value, '$.End')), '00:00:00') = '00:00:00' THEN '23:59:59' ELSE time(json_extract(d.value, '$.End')) END) AS e
        FROM json_each(NEW.doc, '$.EventDate') d WHERE d.type = 'object'
        UNION ALL
        SELECT datetime(json_extract(NEW.doc, '$.DateBegin')), datetime(json_extract(NEW.doc, '$.DateEnd'))
        WHERE COALESCE(json_array_length(NEW.doc, '$.EventDate'), 0) = 0
    ) WHERE b IS NOT NULL AND e IS NOT NULL);
END;
CREATE TRIGGER content_date_update AFTER UPDATE ON content WHEN OLD.entity = 'Event' OR NEW.entity = 'Event' BEGIN
    DELETE FROM content_date WHERE entity = OLD.entity AND id_key = OLD.id_key;
    INSERT INTO content_date (entity, id_key, date_begin, date_end)
    SELECT NEW.entity, NEW.id_key, b, e FROM (SELECT b, e FROM (
        SELECT datetime(date(json_extract(d.value, '$.From')) || ' ' || COALESCE(time(json_extract(d.value, '$.Begin')), '00:00:00')) AS b,
               datetime(date(COALESCE(json_extract(d.value, '$.To'), json_extract(d.value, '$.From'))) || ' ' ||
                   CASE WHEN COALESCE(time(json_extract(d.value, '$.End')), '00:00:00') = '00:00:00' THEN '23:59:59' ELSE time(json_extract(d.value, '$.End')) END) AS e
        FROM json_each(NEW.doc, '$.EventDate') d WHERE d.type = 'object'
        UNION ALL
        SELECT datetime(json_extract(NEW.doc, '$.DateBegin')), datetime(json_extract(NEW.doc, '$.DateEnd'))
        WHERE COALESCE(json_array_length(NEW.doc, '$.EventDate'), 0) = 0
    ) WHERE b IS NOT NULL AND e IS NOT NULL);
END;
CREATE TRIGGER content_date_delete AFTER DELETE ON content WHEN OLD.entity = 'Event' BEGIN
    DELETE FROM content_date WHERE entity = OLD.entity AND id_key = OLD.id_key;
END;
"#;

/// The update trigger indexes events stored before migration 4.
const DATE_BACKFILL: &str = r#"
-- Backfill: the update trigger indexes events stored before this migration.
UPDATE content SET doc = doc WHERE entity = 'Event';
"#;

/// Migration 5, history: an R*Tree of positions (`content_geo_key` numbers the
/// (entity, id_key) pairs for its integer keys), kept by triggers. Migration 6 drops it
/// again; a fresh store still passes through it so it ends exactly as an old one.
const GEO_RTREE: &str = r#"
CREATE TABLE content_geo_key (
    geo_id INTEGER PRIMARY KEY,
    entity TEXT NOT NULL,
    id_key TEXT NOT NULL,
    UNIQUE (entity, id_key)
);
CREATE VIRTUAL TABLE content_geo USING rtree (geo_id, min_lon, max_lon, min_lat, max_lat);
INSERT INTO content_geo_key (entity, id_key) SELECT entity, id_key FROM content WHERE latitude IS NOT NULL AND longitude IS NOT NULL;
INSERT INTO content_geo (geo_id, min_lon, max_lon, min_lat, max_lat)
    SELECT k.geo_id, c.longitude, c.longitude, c.latitude, c.latitude FROM content c JOIN content_geo_key k ON k.entity = c.entity AND k.id_key = c.id_key;
CREATE TRIGGER content_geo_insert AFTER INSERT ON content BEGIN
    DELETE FROM content_geo WHERE geo_id = (SELECT geo_id FROM content_geo_key WHERE entity = NEW.entity AND id_key = NEW.id_key);
    INSERT OR IGNORE INTO content_geo_key (entity, id_key) SELECT NEW.entity, NEW.id_key WHERE NEW.latitude IS NOT NULL AND NEW.longitude IS NOT NULL;
    INSERT INTO content_geo (geo_id, min_lon, max_lon, min_lat, max_lat)
        SELECT geo_id, NEW.longitude, NEW.longitude, NEW.latitude, NEW.latitude FROM content_geo_key
        WHERE entity = NEW.entity AND id_key = NEW.id_key AND NEW.latitude IS NOT NULL AND NEW.longitude IS NOT NULL;
END;
CREATE TRIGGER content_geo_update AFTER UPDATE ON content BEGIN
    DELETE FROM content_geo WHERE geo_id = (SELECT geo_id FROM content_geo_key WHERE entity = OLD.entity AND id_key = OLD.id_key);
    INSERT OR IGNORE INTO content_geo_key (entity, id_key) SELECT NEW.entity, NEW.id_key WHERE NEW.latitude IS NOT NULL AND NEW.longitude IS NOT NULL;
    INSERT INTO content_geo (geo_id, min_lon, max_lon, min_lat, max_lat)
        SELECT geo_id, NEW.longitude, NEW.longitude, NEW.latitude, NEW.latitude FROM content_geo_key
        WHERE entity = NEW.entity AND id_key = NEW.id_key AND NEW.latitude IS NOT NULL AND NEW.longitude IS NOT NULL;
END;
CREATE TRIGGER content_geo_delete AFTER DELETE ON content BEGIN
    DELETE FROM content_geo WHERE geo_id = (SELECT geo_id FROM content_geo_key WHERE entity = OLD.entity AND id_key = OLD.id_key);
END;
"#;

/// Measured on the 20,000-document demo: every R*Tree candidate still has to be looked
/// up in `content` (for the entity and the other filters), which cost 20-75 ms for a
/// wide radius; a range on (entity, latitude) with longitude and the exact test read
/// from the covering index `content_position` costs 0.2-4 ms. The R*Tree and its
/// triggers go.
const GEO_RTREE_DROP: &str = r#"
DROP TRIGGER IF EXISTS content_geo_insert;
DROP TRIGGER IF EXISTS content_geo_update;
DROP TRIGGER IF EXISTS content_geo_delete;
DROP TABLE IF EXISTS content_geo;
DROP TABLE IF EXISTS content_geo_key;
"#;

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

/// `rawfilter` reads `docb`: SQLite's JSON functions walk JSONB without parsing the
/// text document first. The write paths fill it with `jsonb(doc)`; the triggers only
/// cover a writer that does not (they never fire when `docb` is written).
const DOCB: &str = r#"
ALTER TABLE content ADD COLUMN docb BLOB;
UPDATE content SET docb = jsonb(doc);
CREATE TRIGGER content_docb_insert AFTER INSERT ON content WHEN NEW.docb IS NULL BEGIN
    UPDATE content SET docb = jsonb(NEW.doc) WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER content_docb_update AFTER UPDATE OF doc ON content WHEN NEW.docb IS OLD.docb BEGIN
    UPDATE content SET docb = jsonb(NEW.doc) WHERE rowid = NEW.rowid;
END;
"#;

/// SQLite migration 1.
pub(crate) const SQLITE_DOCUMENTS: &[Part] = &[
    Part::Table(&CONTENT),
    Part::Index(&CONTENT_ORDER),
    Part::Index(&CONTENT_SOURCE),
    Part::Index(&CONTENT_LAST_CHANGE),
    Part::Table(&CONTENT_LANGUAGE),
    Part::Table(&CONTENT_TITLE),
    Part::Index(&CONTENT_TITLE_DOC),
    Part::Table(&CONTENT_TAG),
    Part::Index(&CONTENT_TAG_DOC),
    Part::Table(&CONTENT_REVISION),
];

/// SQLite migration 4.
pub(crate) const SQLITE_EVENT_DATES: &[Part] = &[
    Part::Table(&CONTENT_DATE),
    Part::Index(&CONTENT_DATE_DOC),
    Part::Index(&CONTENT_DATE_RANGE),
    Part::Only(Dialect::Sqlite, DATE_TRIGGERS),
    Part::Only(Dialect::Sqlite, DATE_BACKFILL),
];

/// SQLite migration 5.
pub(crate) const SQLITE_GEO_RTREE: &[Part] = &[Part::Only(Dialect::Sqlite, GEO_RTREE)];

/// SQLite migration 6.
pub(crate) const SQLITE_POSITION_INDEX: &[Part] = &[
    Part::Only(Dialect::Sqlite, GEO_RTREE_DROP),
    Part::Index(&CONTENT_POSITION),
];

/// SQLite migration 11. The new index's statistics are gathered at once: without them
/// SQLite's planner would guess its selectivity until the next `ANALYZE`.
pub(crate) const SQLITE_POSITION_WITH_KEYS: &[Part] = &[
    Part::Only(Dialect::Sqlite, "DROP INDEX content_position;\n"),
    Part::Index(&CONTENT_POSITION_WITH_KEYS),
    Part::Only(Dialect::Sqlite, "ANALYZE content_position;\n"),
];

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

/// SQLite migration 14: the column, filled from the stored documents (new writes set it
/// with the other columns, from the same `Shortname` text), and the wider index.
pub(crate) const SQLITE_POINT_NAMES: &[Part] = &[
    Part::Only(
        Dialect::Sqlite,
        "ALTER TABLE content ADD COLUMN shortname TEXT;
UPDATE content SET shortname = json_extract(docb, '$.Shortname') WHERE json_type(docb, '$.Shortname') = 'text';
DROP INDEX content_position;
",
    ),
    Part::Index(&CONTENT_POSITION_WITH_NAMES),
    Part::Only(Dialect::Sqlite, "ANALYZE content_position;\n"),
];

/// PostgreSQL migration 13: the column, filled as on SQLite. The GiST index finds a
/// tile's rows (a covering position index changed the plans of filtered pages for the
/// worse: `docs/decisions.md`, "Tiles read their points from the rows").
pub(crate) const POSTGRES_POINT_NAMES: &[Part] = &[Part::Only(
    Dialect::Postgres,
    "ALTER TABLE content ADD COLUMN shortname text;
UPDATE content SET shortname = docb ->> 'Shortname' WHERE jsonb_typeof(docb -> 'Shortname') = 'string';
",
)];

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

/// PostgreSQL migration 14. The primary key is rebuilt too: migration 13 rewrote every
/// row, which left it at 24 MB at scale 10 (14 MB rebuilt), larger than the new order
/// index, and the planner, which prices an index-only scan by the index's size, then
/// counted probed searches along the order instead of the key, whose id order follows
/// the title index's (`Find?q=h` 190 → 306 ms).
pub(crate) const POSTGRES_ORDER_WITH_SOURCE: &[Part] = &[
    Part::Only(Dialect::Postgres, "DROP INDEX content_order;\n"),
    Part::Index(&CONTENT_ORDER_WITH_SOURCE),
    Part::Only(Dialect::Postgres, "REINDEX INDEX content_pkey;\n"),
];

/// PostgreSQL migration 16: the index of the order that answers statements over
/// configured paths and name sorts (migration 15) also holds each row's id and
/// position, what a map point carries beside its name. A tile whose box holds many of
/// the entity's documents is then walked along the order without reading a row: a
/// zoom-6 tile of the scale-10 POIs read and sorted 51,000 rows (187 ms) where the
/// walk passes 27,000 index entries (12 ms, `EXPLAIN ANALYZE`). The index grows by
/// about a sixth (46 to 52 MB at scale 10); it is built before the server listens.
pub(crate) const POSTGRES_ORDER_VALUES: &[Part] = &[Part::Only(
    Dialect::Postgres,
    "DROP INDEX content_path_values;
CREATE INDEX content_order_values ON content (entity, sort_key, id_key) INCLUDE (shortname, path_values, id, latitude, longitude);
",
)];

/// PostgreSQL migration 17: a radius is answered from `content_position`. The circle's
/// ranges and the geodesic of the point made from the row's latitude and longitude
/// (`hub_query::content::geo`) need only the position; the index now also carries each
/// row's key, so a nearest-first page takes its candidates' keys and distances from
/// the index without reading their rows (50 km around Bolzano, page 20, at scale 10:
/// 30 → 21.5 ms). The GiST index of positions as `geography`, which found a radius's
/// candidates and left every one's row to be read for `geom`, goes: nothing reads it,
/// and each write of a document updated it (31 MB at scale 10). The position index
/// grows from 15 to 18 MB; it is built before the server listens (about 2 s at scale
/// 10, with the table locked for writes meanwhile).
pub(crate) const POSTGRES_RADIUS_FROM_POSITIONS: &[Part] = &[Part::Only(
    Dialect::Postgres,
    "DROP INDEX IF EXISTS content_entity_geog;
DROP INDEX content_position;
CREATE INDEX content_position ON content (entity, latitude, longitude) INCLUDE (id_key);
",
)];

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

/// SQLite migration 15 (statistics gathered at once, as for migration 11).
pub(crate) const SQLITE_ORDER_POINTS: &[Part] = &[
    Part::Index(&CONTENT_ORDER_POINTS),
    Part::Only(Dialect::Sqlite, "ANALYZE content_order_points;\n"),
];

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

/// SQLite migration 7.
pub(crate) const SQLITE_DOCB: &[Part] = &[Part::Only(Dialect::Sqlite, DOCB)];

/// Migration 8: event date ranges are computed once, in Rust
/// (`content::event_dates`), and written by both backends with the other side tables;
/// SQLite's triggers that computed the same in SQL go.
pub(crate) const SQLITE_EVENT_DATES_FROM_RUST: &[Part] = &[Part::Only(
    Dialect::Sqlite,
    "DROP TRIGGER IF EXISTS content_date_insert;\nDROP TRIGGER IF EXISTS content_date_update;\nDROP TRIGGER IF EXISTS content_date_delete;\n",
)];

/// Migration 9: `searchfilter` at scale. An FTS5 trigram index over the folded titles
/// (external content: the text stays in `content_title` only), kept by triggers so
/// every write path agrees; the search narrows its `LIKE` to the rowids the index
/// names (see `hub_query::content`). PostgreSQL has had the same in `pg_trgm` since
/// its first migration.
const TITLE_TRIGRAMS: &str = r#"
CREATE VIRTUAL TABLE content_title_fts USING fts5(folded, content = 'content_title', content_rowid = 'rowid', tokenize = 'trigram');
INSERT INTO content_title_fts (content_title_fts) VALUES ('rebuild');
CREATE TRIGGER content_title_fts_insert AFTER INSERT ON content_title BEGIN
    INSERT INTO content_title_fts (rowid, folded) VALUES (NEW.rowid, NEW.folded);
END;
CREATE TRIGGER content_title_fts_delete AFTER DELETE ON content_title BEGIN
    INSERT INTO content_title_fts (content_title_fts, rowid, folded) VALUES ('delete', OLD.rowid, OLD.folded);
END;
CREATE TRIGGER content_title_fts_update AFTER UPDATE ON content_title BEGIN
    INSERT INTO content_title_fts (content_title_fts, rowid, folded) VALUES ('delete', OLD.rowid, OLD.folded);
    INSERT INTO content_title_fts (rowid, folded) VALUES (NEW.rowid, NEW.folded);
END;
"#;

/// SQLite migration 9.
pub(crate) const SQLITE_TITLE_TRIGRAMS: &[Part] = &[Part::Only(Dialect::Sqlite, TITLE_TRIGRAMS)];

/// PostgreSQL migration 1: all of the above at once.
pub(crate) const POSTGRES_DOCUMENTS: &[Part] = &[
    Part::Only(Dialect::Postgres, EXTENSIONS),
    Part::Table(&CONTENT),
    Part::Only(Dialect::Postgres, DOCB_LZ4),
    Part::Index(&CONTENT_ORDER),
    Part::Index(&CONTENT_SOURCE),
    Part::Index(&CONTENT_LAST_CHANGE),
    Part::Index(&CONTENT_POSITION),
    Part::Index(&CONTENT_GEOM),
    Part::Index(&CONTENT_GEOG),
    Part::Index(&CONTENT_DOCB),
    Part::Table(&CONTENT_LANGUAGE),
    Part::Table(&CONTENT_TITLE),
    Part::Index(&CONTENT_TITLE_DOC),
    Part::Index(&CONTENT_TITLE_TRGM),
    Part::Table(&CONTENT_TAG),
    Part::Index(&CONTENT_TAG_DOC),
    Part::Table(&CONTENT_DATE),
    Part::Index(&CONTENT_DATE_DOC),
    Part::Index(&CONTENT_DATE_RANGE),
    Part::Table(&CONTENT_REVISION),
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
