//! The content group's migration texts that only PostgreSQL runs: its first migration,
//! its extensions, and what later migrations changed there.

use super::*;

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

/// PostgreSQL migration 13: the column, filled as on SQLite. The GiST index finds a
/// tile's rows (a covering position index changed the plans of filtered pages for the
/// worse: `docs/decisions.md`, "Tiles read their points from the rows").
pub(crate) const POSTGRES_POINT_NAMES: &[Part] = &[Part::Only(
    Dialect::Postgres,
    "ALTER TABLE content ADD COLUMN shortname text;
UPDATE content SET shortname = docb ->> 'Shortname' WHERE jsonb_typeof(docb -> 'Shortname') = 'string';
",
)];

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
