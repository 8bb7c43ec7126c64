//! Schema migrations: an ordered list, applied once each, recorded in `schema_version`.
//! A migration is never edited after release; a change is a new entry.

pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sqlite: &'static str,
}

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "content documents with indexed columns",
        sqlite: r#"
CREATE TABLE content (
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
);
CREATE INDEX content_order ON content (entity, sort_key, id_key);
CREATE INDEX content_source ON content (entity, source);
CREATE INDEX content_last_change ON content (entity, last_change);
CREATE TABLE content_language (
    entity TEXT NOT NULL,
    id_key TEXT NOT NULL,
    lang   TEXT NOT NULL,
    PRIMARY KEY (entity, id_key, lang)
) WITHOUT ROWID;
CREATE TABLE content_title (
    entity TEXT NOT NULL,
    id_key TEXT NOT NULL,
    lang   TEXT NOT NULL,
    folded TEXT NOT NULL
);
CREATE INDEX content_title_doc ON content_title (entity, id_key);
CREATE TABLE content_tag (
    entity TEXT NOT NULL,
    id_key TEXT NOT NULL,
    kind   TEXT NOT NULL,
    tag    TEXT NOT NULL,
    PRIMARY KEY (entity, kind, tag, id_key)
) WITHOUT ROWID;
CREATE INDEX content_tag_doc ON content_tag (entity, id_key);
CREATE TABLE content_revision (
    entity   TEXT PRIMARY KEY,
    revision INTEGER NOT NULL
) WITHOUT ROWID;
"#,
    },
    Migration {
        version: 2,
        name: "time series: stations, types, series, latest values, history, edges, events",
        sqlite: r#"
CREATE TABLE ts_station (
    id            INTEGER PRIMARY KEY,
    stationcode   TEXT NOT NULL,
    stationtype   TEXT NOT NULL,
    name          TEXT NOT NULL,
    origin        TEXT,
    active        INTEGER NOT NULL DEFAULT 1,
    available     INTEGER NOT NULL DEFAULT 1,
    x             REAL,
    y             REAL,
    srid          INTEGER,
    meta_data_id  INTEGER,
    parent_id     INTEGER REFERENCES ts_station (id),
    UNIQUE (stationtype, stationcode)
);
CREATE INDEX ts_station_parent ON ts_station (parent_id);
CREATE INDEX ts_station_origin ON ts_station (origin);
CREATE TABLE ts_metadata (
    id          INTEGER PRIMARY KEY,
    station_id  INTEGER REFERENCES ts_station (id),
    created_on  INTEGER NOT NULL,
    json        TEXT
);
CREATE INDEX ts_metadata_station ON ts_metadata (station_id, created_on);
CREATE TABLE ts_type (
    id            INTEGER PRIMARY KEY,
    cname         TEXT NOT NULL UNIQUE,
    cunit         TEXT,
    description   TEXT,
    rtype         TEXT,
    meta_data_id  INTEGER,
    created_on    INTEGER NOT NULL
);
CREATE TABLE ts_type_metadata (
    id          INTEGER PRIMARY KEY,
    type_id     INTEGER NOT NULL REFERENCES ts_type (id),
    created_on  INTEGER NOT NULL,
    json        TEXT
);
CREATE TABLE ts_provenance (
    id                      INTEGER PRIMARY KEY,
    uuid                    TEXT NOT NULL UNIQUE,
    lineage                 TEXT NOT NULL,
    data_collector          TEXT NOT NULL,
    data_collector_version  TEXT NOT NULL DEFAULT '',
    UNIQUE (lineage, data_collector, data_collector_version)
);
CREATE TABLE ts_series (
    id           INTEGER PRIMARY KEY,
    station_id   INTEGER NOT NULL REFERENCES ts_station (id),
    type_id      INTEGER NOT NULL REFERENCES ts_type (id),
    period       INTEGER NOT NULL,
    value_table  INTEGER NOT NULL,
    UNIQUE (station_id, type_id, period, value_table)
);
CREATE INDEX ts_series_type ON ts_series (type_id);
CREATE TABLE ts_latest (
    series_id       INTEGER PRIMARY KEY REFERENCES ts_series (id),
    timestamp       INTEGER NOT NULL,
    created_on      INTEGER NOT NULL,
    double_value    REAL,
    string_value    TEXT,
    json_value      TEXT,
    provenance_id   INTEGER
);
CREATE TABLE ts_history (
    series_id       INTEGER NOT NULL,
    timestamp       INTEGER NOT NULL,
    created_on      INTEGER NOT NULL,
    double_value    REAL,
    string_value    TEXT,
    json_value      TEXT,
    provenance_id   INTEGER,
    PRIMARY KEY (series_id, timestamp)
) WITHOUT ROWID;
CREATE TABLE ts_edge (
    id            INTEGER PRIMARY KEY,
    edge_data_id  INTEGER NOT NULL UNIQUE REFERENCES ts_station (id),
    origin_id     INTEGER REFERENCES ts_station (id),
    destination_id INTEGER REFERENCES ts_station (id),
    directed      INTEGER NOT NULL DEFAULT 1,
    linegeometry  TEXT,
    minx REAL, miny REAL, maxx REAL, maxy REAL
);
CREATE TABLE ts_location (
    id           INTEGER PRIMARY KEY,
    description  TEXT,
    geometry     TEXT,
    minx REAL, miny REAL, maxx REAL, maxy REAL
);
CREATE TABLE ts_event (
    id                 INTEGER PRIMARY KEY,
    uuid               TEXT NOT NULL UNIQUE,
    origin             TEXT NOT NULL,
    category           TEXT NOT NULL,
    event_series_uuid  TEXT NOT NULL,
    name               TEXT NOT NULL,
    description        TEXT,
    created_on         INTEGER NOT NULL,
    event_start        INTEGER,
    event_end          INTEGER,
    location_id        INTEGER REFERENCES ts_location (id),
    meta_data_id       INTEGER,
    provenance_id      INTEGER REFERENCES ts_provenance (id)
);
CREATE INDEX ts_event_series ON ts_event (origin, event_series_uuid);
"#,
    },
    Migration {
        version: 3,
        name: "token service: users, clients, roles, refresh tokens, signing keys",
        sqlite: r#"
CREATE TABLE auth_user (
    id            TEXT NOT NULL UNIQUE,
    username      TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);
CREATE TABLE auth_user_role (
    username TEXT NOT NULL,
    role     TEXT NOT NULL,
    PRIMARY KEY (username, role)
) WITHOUT ROWID;
CREATE TABLE auth_client (
    client_id   TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL
);
CREATE TABLE auth_client_role (
    client_id TEXT NOT NULL,
    role      TEXT NOT NULL,
    PRIMARY KEY (client_id, role)
) WITHOUT ROWID;
CREATE TABLE auth_refresh_token (
    token_hash         TEXT PRIMARY KEY,
    family             TEXT NOT NULL,
    username           TEXT NOT NULL,
    client_id          TEXT NOT NULL,
    scope              TEXT NOT NULL,
    issued_at          INTEGER NOT NULL,
    expires_at         INTEGER NOT NULL,
    session_expires_at INTEGER NOT NULL,
    used_at            INTEGER,
    revoked            INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX auth_refresh_family ON auth_refresh_token (family);
CREATE INDEX auth_refresh_session ON auth_refresh_token (session_expires_at);
CREATE TABLE auth_signing_key (
    kid         TEXT PRIMARY KEY,
    private_der BLOB NOT NULL,
    created_at  INTEGER NOT NULL
);
"#,
    },
    Migration {
        version: 4,
        name: "content: event date ranges for begindate/enddate and sort",
        // Kept by triggers, so every write path (batch load, single put, delete) agrees.
        // Ranges: EventDate[].From + Begin .. To + End (End missing or 00:00 = end of day),
        // or DateBegin..DateEnd when there is no EventDate; as `YYYY-MM-DD HH:MM:SS`.
        sqlite: r#"
CREATE TABLE content_date (
    entity     TEXT NOT NULL,
    id_key     TEXT NOT NULL,
    date_begin TEXT NOT NULL,
    date_end   TEXT NOT NULL
);
CREATE INDEX content_date_doc ON content_date (entity, id_key, date_end, date_begin);
CREATE INDEX content_date_range ON content_date (entity, date_end, date_begin);
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
-- Backfill: the update trigger indexes events stored before this migration.
UPDATE content SET doc = doc WHERE entity = 'Event';
"#,
    },
    Migration {
        version: 5,
        name: "content: R*Tree of document positions for geographic prefilters",
        // The R*Tree needs integer keys and `content` has none, so `content_geo_key` numbers
        // the (entity, id_key) pairs. Kept by triggers like `content_date`; a stale entry can
        // only add a candidate, never a result: the exact test reads `content.latitude/longitude`.
        sqlite: r#"
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
"#,
    },
    Migration {
        version: 6,
        name: "content: covering index of positions replaces the R*Tree",
        // Measured on the 20,000-document demo: every R*Tree candidate still has to be looked
        // up in `content` (for the entity and the other filters), which cost 20-75 ms for a
        // wide radius; a range on (entity, latitude) with longitude and the exact test read
        // from this covering index costs 0.2-4 ms. The R*Tree and its triggers go.
        sqlite: r#"
DROP TRIGGER IF EXISTS content_geo_insert;
DROP TRIGGER IF EXISTS content_geo_update;
DROP TRIGGER IF EXISTS content_geo_delete;
DROP TABLE IF EXISTS content_geo;
DROP TABLE IF EXISTS content_geo_key;
CREATE INDEX content_position ON content (entity, latitude, longitude);
"#,
    },
    Migration {
        version: 7,
        name: "content: binary JSON (JSONB) copy of each document for rawfilter",
        // `rawfilter` reads `docb`: SQLite's JSON functions walk JSONB without parsing the
        // text document first. The write paths fill it with `jsonb(doc)`; the triggers only
        // cover a writer that does not (they never fire when `docb` is written).
        sqlite: r#"
ALTER TABLE content ADD COLUMN docb BLOB;
UPDATE content SET docb = jsonb(doc);
CREATE TRIGGER content_docb_insert AFTER INSERT ON content WHEN NEW.docb IS NULL BEGIN
    UPDATE content SET docb = jsonb(NEW.doc) WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER content_docb_update AFTER UPDATE OF doc ON content WHEN NEW.docb IS OLD.docb BEGIN
    UPDATE content SET docb = jsonb(NEW.doc) WHERE rowid = NEW.rowid;
END;
"#,
    },
];
