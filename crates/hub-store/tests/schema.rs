//! The schema the migration runners build, held against what the code before the
//! declared-once schema (`src/schema/`) built:
//! - a fresh store ends with exactly the recorded catalogue (`fixtures/schema/*.txt`,
//!   recorded from that code: SQLite at version 7, PostgreSQL at version 4);
//! - a store migrated by that code (its migration texts are kept verbatim in
//!   `fixtures/schema/{sqlite_v7,postgres_v4}/`) opens without re-applying anything and
//!   ends with the same catalogue as a fresh one.
//!
//! A deliberate schema change (a new migration) re-records the catalogues with
//! `HUB_RECORD_SCHEMA=1`. The PostgreSQL tests need `HUB_TEST_DATABASE`; skipped without.

use std::path::{Path, PathBuf};

use hub_store::postgres::ThrowawayDatabase;
use hub_store::Store;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/schema")
        .join(name)
}

/// Compares `dump` with the recorded catalogue, or records it under `HUB_RECORD_SCHEMA`.
fn assert_recorded(dump: &str, name: &str) {
    let path = fixture(name);
    if std::env::var_os("HUB_RECORD_SCHEMA").is_some() {
        std::fs::write(&path, dump).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path).unwrap();
    if recorded != dump {
        for (i, (a, b)) in recorded.lines().zip(dump.lines()).enumerate() {
            if a != b {
                panic!(
                    "{name} differs at line {}:\nrecorded: {a}\nnow:      {b}",
                    i + 1
                );
            }
        }
        panic!(
            "{name} differs in length: recorded {} lines, now {}",
            recorded.lines().count(),
            dump.lines().count()
        );
    }
}

/// The migrations the code before `src/schema/` knew, with their recorded texts.
const SQLITE_V7: &[(i64, &str)] = &[
    (1, "content documents with indexed columns"),
    (
        2,
        "time series: stations, types, series, latest values, history, edges, events",
    ),
    (
        3,
        "token service: users, clients, roles, refresh tokens, signing keys",
    ),
    (
        4,
        "content: event date ranges for begindate/enddate and sort",
    ),
    (
        5,
        "content: R*Tree of document positions for geographic prefilters",
    ),
    (
        6,
        "content: covering index of positions replaces the R*Tree",
    ),
    (
        7,
        "content: binary JSON (JSONB) copy of each document for rawfilter",
    ),
];

const POSTGRES_V4: &[(i64, &str)] = &[
    (1, "content documents with indexed columns"),
    (
        2,
        "time series: stations, types, series, latest values, history, edges, events",
    ),
    (
        3,
        "token service: users, clients, roles, refresh tokens, signing keys",
    ),
    (4, "content functions: rawfilter checks, folding, dates"),
];

const OLD_APPLIED_AT: &str = "2026-01-01T00:00:00Z";

// ---------------------------------------------------------------- SQLite

const SQLITE_FILE: &str = "hub.sqlite3";

/// Every object SQLite records (type, name, table, SQL text as stored).
fn sqlite_dump(dir: &Path) -> String {
    let conn = rusqlite::Connection::open(dir.join(SQLITE_FILE)).unwrap();
    let mut stmt = conn
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} | {} | {} | {}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?
                    .unwrap_or_else(|| "NULL".into())
            ))
        })
        .unwrap();
    let mut out = String::new();
    for row in rows {
        out.push_str(&row.unwrap());
        out.push_str("\n--\n");
    }
    out
}

fn sqlite_versions(dir: &Path) -> Vec<(i64, String, String)> {
    let conn = rusqlite::Connection::open(dir.join(SQLITE_FILE)).unwrap();
    let mut stmt = conn
        .prepare("SELECT version, name, applied_at FROM schema_version ORDER BY version")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    rows.map(|r| r.unwrap()).collect()
}

/// Accommodations as an older store holds them, with their indexed field values in
/// every shape `in` reads (`hub_query::content::value_tags`): the newest migration
/// writes their tags, which must be the tags a write adds today.
const FLAG_DOCS: &[(&str, &str)] = &[
    (
        "a1",
        r#"{"Id":"A1","Shortname":"Hof","PublishedOn":["idm-marketplace","Google",3,["nested"]],"AccoCategoryId":"3sup","AccoTypeId":null,"BoardIds":{"x":"hb"},"Features":[{"Name":"Sauna"},{"Name":["Pool","Pool"]},"Garage",{"Id":"x"},[{"Name":"deep"}]]}"#,
    ),
    (
        "a2",
        r#"{"Id":"A2","PublishedOn":"idm-marketplace","AccoTypeId":"HotelPension","BoardIds":["hb","fb"],"Features":{"a":{"Name":"Lift"},"b":"Garage"}}"#,
    ),
    // Names only (no flag field): an escaped one, and one that is not text.
    ("a3", r#"{"Id":"A3","Shortname":"Gasthof \"L\u00f6we\""}"#),
    ("a4", r#"{"Id":"A4","Shortname":42}"#),
];

/// The `shortname` column of [`FLAG_DOCS`]: the `Shortname` text, unescaped, or none.
const FLAG_NAMES: &[(&str, Option<&str>)] = &[
    ("a1", Some("Hof")),
    ("a2", None),
    ("a3", Some("Gasthof \"Löwe\"")),
    ("a4", None),
];

const NAMES: &str =
    "SELECT id_key, shortname FROM content WHERE entity = 'Accommodation' ORDER BY 1";

fn expected_names() -> Vec<(String, Option<String>)> {
    FLAG_NAMES
        .iter()
        .map(|(k, n)| (k.to_string(), n.map(str::to_string)))
        .collect()
}

fn sqlite_names(dir: &Path) -> Vec<(String, Option<String>)> {
    let conn = rusqlite::Connection::open(dir.join(SQLITE_FILE)).unwrap();
    let mut stmt = conn.prepare(NAMES).unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.map(Result::unwrap).collect()
}

async fn pg_names(url: &str) -> Vec<(String, Option<String>)> {
    let client = connect(url).await;
    let rows = client.query(NAMES, &[]).await.unwrap();
    rows.iter().map(|r| (r.get(0), r.get(1))).collect()
}

/// The value tags of [`FLAG_DOCS`], sorted.
const FLAG_TAGS: &[(&str, &str, &str)] = &[
    ("a1", "value:AccoCategoryId", "3sup"),
    ("a1", "value:Features.[*].Name", "Pool"),
    ("a1", "value:Features.[*].Name", "Sauna"),
    ("a1", "value:PublishedOn", "Google"),
    ("a1", "value:PublishedOn", "idm-marketplace"),
    ("a2", "value:AccoTypeId", "HotelPension"),
    ("a2", "value:BoardIds", "fb"),
    ("a2", "value:BoardIds", "hb"),
    ("a2", "value:Features.[*].Name", "Lift"),
    ("a2", "value:PublishedOn", "idm-marketplace"),
];

/// The value tags rows as `(id_key, kind, tag)`, sorted.
const VALUE_TAGS: &str =
    "SELECT id_key, kind, tag FROM content_tag WHERE kind LIKE 'value:%' ORDER BY 1, 2, 3";

fn flag_docs() -> Vec<(&'static str, serde_json::Value)> {
    FLAG_DOCS
        .iter()
        .map(|(_, doc)| ("Accommodation", serde_json::from_str(doc).unwrap()))
        .collect()
}

fn expected_flag_tags() -> Vec<(String, String, String)> {
    FLAG_TAGS
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

fn sqlite_value_tags(dir: &Path) -> Vec<(String, String, String)> {
    let conn = rusqlite::Connection::open(dir.join(SQLITE_FILE)).unwrap();
    let mut stmt = conn.prepare(VALUE_TAGS).unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn a_fresh_sqlite_store_has_the_recorded_schema() {
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open_sqlite(dir.path()).unwrap());
    assert_recorded(&sqlite_dump(dir.path()), "sqlite.txt");
}

#[test]
fn a_sqlite_store_at_version_7_opens_and_applies_only_the_newer_migrations() {
    let old = tempfile::tempdir().unwrap();
    {
        // As the old runner did: one transaction per migration, recorded with it.
        let mut conn = rusqlite::Connection::open(old.path().join(SQLITE_FILE)).unwrap();
        conn.execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)").unwrap();
        for (version, name) in SQLITE_V7 {
            let sql =
                std::fs::read_to_string(fixture(&format!("sqlite_v7/{version}.sql"))).unwrap();
            let tx = conn.transaction().unwrap();
            tx.execute_batch(&sql).unwrap();
            tx.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (?1, ?2, ?3)",
                rusqlite::params![version, name, OLD_APPLIED_AT],
            )
            .unwrap();
            tx.commit().unwrap();
        }
        // A document stored by the old code, so the check below sees its triggers work.
        conn.execute(
            "INSERT INTO content (entity, id_key, id, sort_key, doc) VALUES ('Event', 'e1', 'E1', 'e1', ?1)",
            [r#"{"Id":"E1","DateBegin":"2026-03-01T10:00:00","DateEnd":"2026-03-02T12:00:00"}"#],
        )
        .unwrap();
        for (id_key, doc) in FLAG_DOCS {
            conn.execute(
                "INSERT INTO content (entity, id_key, id, sort_key, doc) VALUES ('Accommodation', ?1, ?1, ?1, ?2)",
                [id_key, doc],
            )
            .unwrap();
        }
    }
    let before = sqlite_versions(old.path());

    drop(Store::open_sqlite(old.path()).unwrap());

    let after = sqlite_versions(old.path());
    assert_eq!(
        after[..before.len()],
        before[..],
        "recorded migrations untouched"
    );
    // Versions 1–7 are not applied again; only what came after them (8: event dates
    // written from Rust; 9: the titles' trigram index; 10: the provenances' revision;
    // 11: the position index with the keys; 12: documents by language; 13: the flag
    // fields' values as tags; 14: the Shortname beside the position; 15: the order
    // with each document's point; 16: the documents written per revision) is, once.
    let newer: Vec<i64> = after[before.len()..].iter().map(|r| r.0).collect();
    assert_eq!(
        newer,
        vec![8, 9, 10, 11, 12, 13, 14, 15, 16],
        "only the migrations newer than version 7 are applied"
    );
    let fresh = tempfile::tempdir().unwrap();
    let store = Store::open_sqlite(fresh.path()).unwrap();
    assert_eq!(sqlite_dump(old.path()), sqlite_dump(fresh.path()));
    store
        .content()
        .put_batch_blocking(&flag_docs(), &mut |_| {})
        .unwrap();
    drop(store);
    assert_eq!(
        sqlite_value_tags(old.path()),
        expected_flag_tags(),
        "the migration writes the stored documents' field values as tags"
    );
    assert_eq!(
        sqlite_value_tags(fresh.path()),
        expected_flag_tags(),
        "a write adds the same tags"
    );
    assert_eq!(
        sqlite_names(old.path()),
        expected_names(),
        "the migration writes the stored documents' names"
    );
    assert_eq!(
        sqlite_names(fresh.path()),
        expected_names(),
        "a write sets the same names"
    );

    let conn = rusqlite::Connection::open(old.path().join(SQLITE_FILE)).unwrap();
    let (dates, docb): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM content_date), (SELECT COUNT(*) FROM content WHERE docb IS NOT NULL)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (dates, docb),
        (1, 1 + FLAG_DOCS.len() as i64),
        "rows the old schema's triggers wrote are kept"
    );
}

// ---------------------------------------------------------------- PostgreSQL

fn admin_url() -> Option<String> {
    let admin = std::env::var("HUB_TEST_DATABASE").ok()?;
    let admin = admin.trim().to_string();
    if admin.is_empty() {
        eprintln!("skipped: HUB_TEST_DATABASE is not set (needs a PostgreSQL server)");
        return None;
    }
    Some(admin)
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
}

/// Hub's own objects in `public` (an extension's, such as PostGIS's, left out):
/// relations, columns with their exact types, collations, defaults, generated and identity
/// expressions, compression and storage, indexes, constraints, functions and extensions.
const PG_CATALOGUE: &[(&str, &str)] = &[
    (
        "relation",
        "SELECT c.relname::text || ' kind=' || c.relkind::text
                || COALESCE(' partition by ' || pg_get_partkeydef(c.oid), '')
                || COALESCE(' ' || pg_get_expr(c.relpartbound, c.oid), '')
                || COALESCE(' with ' || array_to_string(c.reloptions, ','), '')
         FROM pg_class c
         WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
           AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
         ORDER BY 1",
    ),
    (
        "column",
        "SELECT c.relname::text || '.' || a.attname || ' #' || a.attnum
                || ' ' || format_type(a.atttypid, a.atttypmod)
                || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                || COALESCE(' collate ' || co.collname, '')
                || COALESCE(' default ' || pg_get_expr(ad.adbin, ad.adrelid), '')
                || CASE a.attgenerated WHEN 's' THEN ' generated stored' ELSE '' END
                || CASE a.attidentity WHEN 'd' THEN ' identity by default' WHEN 'a' THEN ' identity always' ELSE '' END
                || CASE WHEN a.attcompression <> '' THEN ' compression ' || a.attcompression::text ELSE '' END
                || CASE WHEN a.attstorage <> t.typstorage THEN ' storage ' || a.attstorage::text ELSE '' END
                || ' | ' || COALESCE(ic.is_nullable, '') || ' ' || COALESCE(ic.is_generated, '')
         FROM pg_attribute a
         JOIN pg_class c ON c.oid = a.attrelid
         JOIN pg_type t ON t.oid = a.atttypid
         LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
         LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <> 0
         LEFT JOIN information_schema.columns ic
                ON ic.table_schema = 'public' AND ic.table_name = c.relname AND ic.column_name = a.attname
         WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
           AND a.attnum > 0 AND NOT a.attisdropped
           AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
         ORDER BY c.relname, a.attnum",
    ),
    (
        "index",
        "SELECT i.indexdef FROM pg_indexes i
         WHERE i.schemaname = 'public' AND i.tablename <> 'spatial_ref_sys'
         ORDER BY i.tablename, i.indexname",
    ),
    (
        "constraint",
        "SELECT c.relname::text || '.' || k.conname || ' ' || k.contype::text || ' ' || pg_get_constraintdef(k.oid)
         FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
         WHERE c.relnamespace = 'public'::regnamespace
           AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
         ORDER BY 1",
    ),
    (
        "function",
        "SELECT p.proname::text || '(' || pg_get_function_identity_arguments(p.oid) || ') md5=' || md5(pg_get_functiondef(p.oid))
         FROM pg_proc p
         WHERE p.pronamespace = 'public'::regnamespace
           AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
         ORDER BY 1",
    ),
    (
        "trigger",
        "SELECT t.tgrelid::regclass::text || '.' || t.tgname FROM pg_trigger t WHERE NOT t.tgisinternal ORDER BY 1",
    ),
    ("extension", "SELECT extname::text FROM pg_extension ORDER BY 1"),
];

async fn pg_dump(url: &str) -> String {
    let client = connect(url).await;
    let mut out = String::new();
    for (kind, query) in PG_CATALOGUE {
        for row in client.query(*query, &[]).await.unwrap() {
            out.push_str(kind);
            out.push_str(": ");
            out.push_str(&row.get::<_, String>(0));
            out.push('\n');
        }
    }
    out
}

async fn pg_versions(url: &str) -> Vec<(i64, String, String)> {
    let client = connect(url).await;
    client
        .query(
            "SELECT version, name, applied_at FROM schema_version ORDER BY version",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

/// Opens (and so migrates) the store at `url`, then lets it go.
async fn open_postgres(url: &str) {
    drop(Store::open_postgres(url, None).unwrap());
}

#[tokio::test]
async fn a_fresh_postgres_store_has_the_recorded_schema() {
    let Some(admin) = admin_url() else { return };
    let name = format!("hub_test_schema_fresh_{}", std::process::id());
    let database = ThrowawayDatabase::create(&admin, &name).unwrap();
    let url = database.url();
    open_postgres(url).await;
    assert_recorded(&pg_dump(url).await, "postgres.txt");
}

#[tokio::test]
async fn a_postgres_store_at_version_4_opens_and_applies_only_the_newer_migrations() {
    let Some(admin) = admin_url() else { return };
    let pid = std::process::id();
    let old_db = ThrowawayDatabase::create(&admin, &format!("hub_test_schema_old_{pid}")).unwrap();
    let old_url = old_db.url();
    {
        // As the old runner did: everything in one transaction.
        let mut client = connect(old_url).await;
        let tx = client.transaction().await.unwrap();
        tx.batch_execute("CREATE TABLE IF NOT EXISTS schema_version (version bigint PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)").await.unwrap();
        for (version, name) in POSTGRES_V4 {
            let sql =
                std::fs::read_to_string(fixture(&format!("postgres_v4/{version}.sql"))).unwrap();
            tx.batch_execute(&sql).await.unwrap();
            tx.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES ($1, $2, $3)",
                &[version, name, &OLD_APPLIED_AT],
            )
            .await
            .unwrap();
        }
        for (id_key, doc) in FLAG_DOCS {
            tx.execute(
                "INSERT INTO content (entity, id_key, id, sort_key, doc, docb) VALUES ('Accommodation', $1, $1, $1, $2::text, $2::text::jsonb)",
                &[id_key, doc],
            )
            .await
            .unwrap();
        }
        tx.commit().await.unwrap();
    }
    let before = pg_versions(old_url).await;

    open_postgres(old_url).await;

    let after = pg_versions(old_url).await;
    assert_eq!(
        after[..before.len()],
        before[..],
        "recorded migrations untouched"
    );
    // Versions 1–4 are not applied again; only what came after them (5: rawfilter
    // checks report a check id; 6: entity-led geometry indexes; 7: revision writes
    // notify; 8: latest values' pages keep room for rewrites; 9: the provenances'
    // revision; 10: documents kept in their rows; 11: documents by language; 12: the
    // flag fields' values as tags; 13: the Shortname beside the position; 14: the
    // source in the order index; 15: the configured paths' values beside each
    // document; 16: the ids and positions in the order's index; 17: the keys in
    // the position index, no index of positions as geography; 18: the documents
    // written per revision; 19: the catalog's revision; 20: edges in it) is, once.
    let newer: Vec<i64> = after[before.len()..].iter().map(|r| r.0).collect();
    assert_eq!(
        newer,
        vec![5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
        "only the migrations newer than version 4 are applied"
    );
    let fresh_db =
        ThrowawayDatabase::create(&admin, &format!("hub_test_schema_new_{pid}")).unwrap();
    let fresh_url = fresh_db.url();
    open_postgres(fresh_url).await;
    assert_eq!(pg_dump(old_url).await, pg_dump(fresh_url).await);

    let url = fresh_url.to_string();
    tokio::task::spawn_blocking(move || {
        let store = Store::open_postgres(&url, None).unwrap();
        store
            .content()
            .put_batch_blocking(&flag_docs(), &mut |_| {})
            .unwrap();
    })
    .await
    .unwrap();
    assert_eq!(
        pg_value_tags(old_url).await,
        expected_flag_tags(),
        "the migration writes the stored documents' field values as tags"
    );
    assert_eq!(
        pg_value_tags(fresh_url).await,
        expected_flag_tags(),
        "a write adds the same tags"
    );
    assert_eq!(
        pg_names(old_url).await,
        expected_names(),
        "the migration writes the stored documents' names"
    );
    assert_eq!(
        pg_names(fresh_url).await,
        expected_names(),
        "a write sets the same names"
    );
}

async fn pg_value_tags(url: &str) -> Vec<(String, String, String)> {
    let client = connect(url).await;
    let rows = client.query(VALUE_TAGS, &[]).await.unwrap();
    rows.iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

/// Changes of `ts_provenance` a reader must notice: every
/// one moves `ts_provenance_revision` on (the readers of history answers keep the
/// provenances while it stands still).
const PROVENANCE_CHANGES: &[&str] = &[
    "INSERT INTO ts_provenance (uuid, lineage, data_collector, data_collector_version) VALUES ('u1', 'l', 'c', '1')",
    "INSERT INTO ts_provenance (uuid, lineage, data_collector, data_collector_version) VALUES ('u2', 'l', 'c', '2'), ('u3', 'l', 'c', '3')",
    "UPDATE ts_provenance SET data_collector = 'renamed' WHERE uuid = 'u2'",
    "DELETE FROM ts_provenance WHERE uuid = 'u3'",
];

const PROVENANCE_REVISION: &str = "SELECT revision FROM ts_provenance_revision WHERE id = 1";

/// A registration of a provenance the store has (what a data collector sends at every
/// start): no row changes, so the revision stands.
const KNOWN_PROVENANCE: &str = "INSERT INTO ts_provenance (uuid, lineage, data_collector, data_collector_version) VALUES ('u9', 'l', 'c', '1') ON CONFLICT DO NOTHING";

#[test]
fn every_change_of_a_provenance_moves_the_sqlite_revision_on() {
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open_sqlite(dir.path()).unwrap());
    let conn = rusqlite::Connection::open(dir.path().join(SQLITE_FILE)).unwrap();
    let revision = || -> i64 {
        conn.query_row(PROVENANCE_REVISION, [], |r| r.get(0))
            .unwrap()
    };
    let mut last = revision();
    for change in PROVENANCE_CHANGES {
        conn.execute(change, []).unwrap();
        let now = revision();
        assert!(now > last, "{change}: revision {last} -> {now}");
        last = now;
    }
    conn.query_row("SELECT count(*) FROM ts_provenance", [], |r| {
        r.get::<_, i64>(0)
    })
    .unwrap();
    assert_eq!(revision(), last, "a read leaves the revision");
    // ('l', 'c', '1') is there since the first change.
    assert_eq!(conn.execute(KNOWN_PROVENANCE, []).unwrap(), 0);
    assert_eq!(revision(), last, "a known provenance registered again");
}

#[tokio::test]
async fn every_change_of_a_provenance_moves_the_postgres_revision_on() {
    let Some(admin) = admin_url() else { return };
    let name = format!("hub_test_schema_provenance_{}", std::process::id());
    let database = ThrowawayDatabase::create(&admin, &name).unwrap();
    open_postgres(database.url()).await;
    let client = connect(database.url()).await;
    let revision = || async {
        client
            .query_one(PROVENANCE_REVISION, &[])
            .await
            .unwrap()
            .get::<_, i64>(0)
    };
    let mut last = revision().await;
    for change in PROVENANCE_CHANGES
        .iter()
        .copied()
        .chain(["TRUNCATE ts_provenance CASCADE"])
    {
        client.batch_execute(change).await.unwrap();
        let now = revision().await;
        assert!(now > last, "{change}: revision {last} -> {now}");
        last = now;
    }
    client
        .query_one("SELECT count(*) FROM ts_provenance", &[])
        .await
        .unwrap();
    assert_eq!(revision().await, last, "a read leaves the revision");
    // The truncate emptied the table: ('l', 'c', '1') again, then registered once more.
    client.batch_execute(PROVENANCE_CHANGES[0]).await.unwrap();
    last = revision().await;
    assert_eq!(client.execute(KNOWN_PROVENANCE, &[]).await.unwrap(), 0);
    assert_eq!(
        revision().await,
        last,
        "a known provenance registered again"
    );
}
