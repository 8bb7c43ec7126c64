-- Extensions: PostGIS for geometry, pg_trgm for substring search on folded titles.
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Every text column that is compared or ordered collates as "C" (byte order), whatever
-- the database's default: both backends must page and sort identically.
CREATE TABLE content (
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
);
-- lz4 reads the jsonb copies about twice as fast as the default pglz when filters
-- scan them; servers built without lz4 keep pglz.
DO $$ BEGIN
    ALTER TABLE content ALTER COLUMN docb SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'lz4 compression unavailable, docb stays pglz';
END $$;
CREATE INDEX content_order ON content (entity, sort_key, id_key);
CREATE INDEX content_source ON content (entity, source);
CREATE INDEX content_last_change ON content (entity, last_change);
CREATE INDEX content_position ON content (entity, latitude, longitude);
CREATE INDEX content_geom ON content USING gist (geom);
CREATE INDEX content_geog ON content USING gist ((geom::geography));
CREATE INDEX content_docb ON content USING gin (docb jsonb_path_ops);

CREATE TABLE content_language (
    entity text COLLATE "C" NOT NULL,
    id_key text COLLATE "C" NOT NULL,
    lang   text COLLATE "C" NOT NULL,
    PRIMARY KEY (entity, id_key, lang)
);

CREATE TABLE content_title (
    entity text COLLATE "C" NOT NULL,
    id_key text COLLATE "C" NOT NULL,
    lang   text COLLATE "C" NOT NULL,
    folded text COLLATE "C" NOT NULL
);
CREATE INDEX content_title_doc ON content_title (entity, id_key);
CREATE INDEX content_title_trgm ON content_title USING gin (folded gin_trgm_ops);

CREATE TABLE content_tag (
    entity text COLLATE "C" NOT NULL,
    id_key text COLLATE "C" NOT NULL,
    kind   text COLLATE "C" NOT NULL,
    tag    text COLLATE "C" NOT NULL,
    PRIMARY KEY (entity, kind, tag, id_key)
);
CREATE INDEX content_tag_doc ON content_tag (entity, id_key);

-- Event date ranges, written by the store with each event (the SQLite backend keeps
-- them by trigger; here the store computes the same ranges in Rust).
CREATE TABLE content_date (
    entity     text COLLATE "C" NOT NULL,
    id_key     text COLLATE "C" NOT NULL,
    date_begin text COLLATE "C" NOT NULL,
    date_end   text COLLATE "C" NOT NULL
);
CREATE INDEX content_date_doc ON content_date (entity, id_key, date_end, date_begin);
CREATE INDEX content_date_range ON content_date (entity, date_end, date_begin);

CREATE TABLE content_revision (
    entity   text COLLATE "C" PRIMARY KEY,
    revision bigint NOT NULL
);
