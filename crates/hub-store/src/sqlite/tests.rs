use super::*;

#[test]
fn seed_key_is_the_first_fifteen_hex_digits_of_md5() {
    // `printf abc7 | md5sum` = b10a12a4c02c49e80059781f82c19ea4
    assert_eq!(
        seed_key("abc", "7"),
        i64::from_str_radix("b10a12a4c02c49e", 16).unwrap()
    );
}

/// A cached statement runs as compiled when only its parameters change. Built with
/// `SQLITE_ENABLE_STAT4`, SQLite compiled a statement again at every execution whose
/// bound values could change its plan (an entity, a range: most of Hub's), which was
/// 15 % of a list page's CPU; `.cargo/config.toml` builds it without.
#[test]
fn a_cached_statement_is_not_compiled_again_for_new_parameters() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE TABLE t (entity TEXT, sort_key INTEGER);
         CREATE INDEX t_entity ON t (entity, sort_key);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
         INSERT INTO t SELECT CASE WHEN i % 100 = 0 THEN 'rare' ELSE 'common' END, i FROM n;
         ANALYZE;",
    )
    .unwrap();
    let sql = "SELECT count(*) FROM t WHERE entity = ?1 AND sort_key > ?2";
    let mut counts = Vec::new();
    for (entity, after) in [("rare", 0), ("common", 10), ("rare", 500), ("common", 1500)] {
        let mut stmt = conn.prepare_cached(sql).unwrap();
        counts.push(
            stmt.query_row(params![entity, after], |r| r.get::<_, i64>(0))
                .unwrap(),
        );
        assert_eq!(
            stmt.get_status(rusqlite::StatementStatus::RePrepare),
            0,
            "compiled again for {entity}, {after}"
        );
    }
    assert_eq!(counts, [20, 1970, 15, 495]);
}

/// Built with SQLite's memory management, every reader's page lookups took one lock
/// for the whole process, and readers on both cores waited on each other; memory
/// statistics took another on every allocation. `.cargo/config.toml` builds SQLite
/// without both; a build that loses those flags fails here.
#[test]
fn sqlite_takes_no_process_wide_lock_per_page_or_allocation() {
    let conn = Connection::open_in_memory().unwrap();
    let options = conn
        .prepare("PRAGMA compile_options")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .collect::<rusqlite::Result<Vec<_>>>()
        .unwrap();
    assert!(
        !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
        "{options:?}"
    );
    assert!(
        options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
        "{options:?}"
    );
}
