//! The content group's migration texts that only SQLite runs: its first tables' triggers,
//! and what later migrations added or dropped there.

use super::*;

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

/// SQLite migration 15 (statistics gathered at once, as for migration 11).
pub(crate) const SQLITE_ORDER_POINTS: &[Part] = &[
    Part::Index(&CONTENT_ORDER_POINTS),
    Part::Only(Dialect::Sqlite, "ANALYZE content_order_points;\n"),
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
