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
}];
