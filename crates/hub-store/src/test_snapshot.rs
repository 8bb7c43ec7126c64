//! Test support: a store filled once per test pass and copied for every test that asks.
//!
//! Loading the demo takes a debug build 15–20 s, and about a dozen test binaries each
//! loaded it at least once per pass. A [`Snapshot`] keeps the first load of a pass in the
//! pass's directory and gives every later store a copy: on SQLite a file written with
//! `VACUUM INTO` (a consistent copy of one read transaction), on PostgreSQL a database
//! that later test databases are created from (`CREATE DATABASE … TEMPLATE`). The
//! directory must belong to one build's test run (`scripts/test.sh` makes one per pass
//! and removes it, and names it in [`PASS_DIR_VARIABLE`]): a snapshot is only as current
//! as the code that filled it.
//!
//! An empty store is a snapshot too on PostgreSQL ([`migrated_copy`]): creating a
//! database and running every migration takes a debug build about 0.5 s, a copy of a
//! migrated one about 0.14 s (saving about 8 s of the `hub-store`, `hub-auth` and
//! `hub-timeseries` suites' 45 s on PostgreSQL).
//!
//! The template database is named `hub_test_<pid>_<label>` after the process that started
//! the test binaries (`cargo test`), so [`crate::postgres::sweep_test_databases`] keeps
//! it while that run lasts and drops it in the next run. Owns nothing else: which data a
//! snapshot holds is the caller's.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::postgres::{create_database, PgSettings, ThrowawayDatabase};
use crate::sqlite::DATABASE_FILE;
use crate::{Backend, Result, Store, StoreError};

/// The environment variable naming the test pass's directory of snapshots.
pub const PASS_DIR_VARIABLE: &str = "HUB_TEST_SNAPSHOTS";

/// The test pass's directory of snapshots, when the tests run in one.
pub fn pass_dir() -> Option<PathBuf> {
    std::env::var_os(PASS_DIR_VARIABLE)
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
}

/// A snapshot named by `label` in a pass's directory, on the backend the tests run on
/// (`HUB_TEST_DATABASE`, as [`Store::open_for_tests`]).
pub struct Snapshot {
    dir: PathBuf,
    label: String,
    admin_url: Option<String>,
}

impl Snapshot {
    /// `label`: lowercase ASCII letters and digits, unique within the pass (it names a
    /// file and a database).
    pub fn new(dir: &Path, label: &str) -> Snapshot {
        assert!(
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
            "a snapshot's label is lowercase letters and digits: {label:?}"
        );
        Snapshot {
            dir: dir.to_path_buf(),
            label: label.to_string(),
            admin_url: std::env::var("HUB_TEST_DATABASE")
                .ok()
                .map(|url| url.trim().to_string())
                .filter(|url| !url.is_empty()),
        }
    }

    /// Written last, once the snapshot is complete.
    fn marker(&self) -> PathBuf {
        self.dir.join(format!("{}.done", self.label))
    }

    fn sqlite_file(&self) -> PathBuf {
        self.dir.join(format!("{}.sqlite3", self.label))
    }

    fn template_name(&self) -> String {
        format!(
            "hub_test_{}_{}",
            std::os::unix::process::parent_id(),
            self.label
        )
    }

    /// Whether an earlier fill of this pass saved the snapshot.
    pub fn exists(&self) -> bool {
        self.marker().is_file()
    }

    /// An empty store to fill; [`Snapshot::save`] keeps it.
    pub fn open_for_filling(&self) -> Result<Store> {
        std::fs::create_dir_all(&self.dir).map_err(|source| self.dir_error(source))?;
        match &self.admin_url {
            Some(admin) => {
                let url = create_database(admin, &self.template_name(), true)?;
                Store::open_postgres_with(&url, &PgSettings::for_tests())
            }
            None => {
                let filling = self.dir.join(format!("{}.filling", self.label));
                let _ = std::fs::remove_dir_all(&filling);
                Store::open_sqlite(&filling)
            }
        }
    }

    /// Keeps `store`, filled, as the snapshot. Every other handle of it must be gone.
    pub fn save(&self, store: Store) -> Result<()> {
        if let Backend::Sqlite(sqlite) = &*store.backend {
            let copy = self.sqlite_file();
            let partial = copy.with_extension("partial");
            let _ = std::fs::remove_file(&partial);
            let target = partial.to_string_lossy().into_owned();
            sqlite.write_blocking(|conn| {
                conn.execute("VACUUM INTO ?1", [&target])?;
                Ok(())
            })?;
            std::fs::rename(&partial, &copy).map_err(|source| self.dir_error(source))?;
        }
        // PostgreSQL: the database stays; its connections close with the store.
        drop(store);
        let _ = std::fs::remove_dir_all(self.dir.join(format!("{}.filling", self.label)));
        std::fs::write(self.marker(), b"").map_err(|source| self.dir_error(source))
    }

    /// A store of its own holding a copy of the snapshot: SQLite in `dir`, or a fresh
    /// PostgreSQL database dropped with the store, as [`Store::open_for_tests`] makes.
    pub fn open_copy(&self, dir: &Path) -> Result<Store> {
        match &self.admin_url {
            Some(admin) => {
                let database = ThrowawayDatabase::create_from(
                    admin,
                    &crate::next_test_database_name(admin),
                    &self.template_name(),
                )?;
                Store::open_throwaway(database)
            }
            None => {
                std::fs::copy(self.sqlite_file(), dir.join(DATABASE_FILE))
                    .map_err(|source| self.dir_error(source))?;
                Store::open_sqlite(dir)
            }
        }
    }

    fn dir_error(&self, source: std::io::Error) -> StoreError {
        StoreError::DataDir {
            path: self.dir.display().to_string(),
            source,
        }
    }
}

/// A store of its own with every migration and no data: on PostgreSQL a copy of a
/// migrated database that the first call of the pass (in `pass`) makes; on SQLite a new
/// store in `dir`, which takes about 10 ms anyway.
pub fn migrated_copy(pass: &Path, dir: &Path) -> Result<Store> {
    let snapshot = Snapshot::new(pass, "migrated");
    if snapshot.admin_url.is_none() {
        return Store::open_sqlite(dir);
    }
    // One migration per process at a time: a binary's tests that ask together wait for one.
    static FILLING: Mutex<()> = Mutex::new(());
    {
        let _one = FILLING
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !snapshot.exists() {
            let store = snapshot.open_for_filling()?;
            snapshot.save(store)?;
        }
    }
    snapshot.open_copy(dir)
}
