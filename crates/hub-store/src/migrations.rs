//! Schema migrations: an ordered list, applied once each, recorded in `schema_version`.
//! A migration is never edited after release; a change is a new entry.

pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sqlite: &'static str,
}

pub const MIGRATIONS: &[Migration] = &[Migration {
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
    PRIMARY KEY (entity, id_key)
) WITHOUT ROWID;
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
];
