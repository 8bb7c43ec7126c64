//! Test support: a store filled once per test pass and copied for every test that asks.
//!
//! Loading the demo takes a debug build 15–20 s, and about a dozen test binaries each
//! loaded it at least once per pass. A [`Snapshot`] keeps the first load of a pass in the
//! pass's directory and gives every later store a copy: on SQLite a file written with
//! `VACUUM INTO` (a consistent copy of one read transaction), on PostgreSQL a database
//! that later test databases are created from (`CREATE DATABASE … TEMPLATE`). The
//! directory must belong to one build's test run (`scripts/test.sh` makes one per pass
//! and removes it): a snapshot is only as current as the code that filled it.
//!
//! The template database is named `hub_test_<pid>_<key>` after the process that started
//! the test binaries (`cargo test`), so [`crate::postgres::sweep_test_databases`] keeps
//! it while that run lasts and drops it in the next run. Owns nothing else: which data a
//! snapshot holds is the caller's.

use std::path::{Path, PathBuf};

use crate::postgres::{create_database, PgSettings, ThrowawayDatabase};
use crate::sqlite::DATABASE_FILE;
use crate::{Backend, Result, Store, StoreError};

/// A snapshot named by a number (`key`) in a pass's directory, on the backend the tests
/// run on (`HUB_TEST_DATABASE`, as [`Store::open_for_tests`]).
pub struct Snapshot {
    dir: PathBuf,
    key: u64,
    admin_url: Option<String>,
}

impl Snapshot {
    pub fn new(dir: &Path, key: u64) -> Snapshot {
        Snapshot {
            dir: dir.to_path_buf(),
            key,
            admin_url: std::env::var("HUB_TEST_DATABASE")
                .ok()
                .map(|url| url.trim().to_string())
                .filter(|url| !url.is_empty()),
        }
    }

    /// Written last, once the snapshot is complete.
    fn marker(&self) -> PathBuf {
        self.dir.join(format!("{}.done", self.key))
    }

    fn sqlite_file(&self) -> PathBuf {
        self.dir.join(format!("{}.sqlite3", self.key))
    }

    fn template_name(&self) -> String {
        format!(
            "hub_test_{}_{}",
            std::os::unix::process::parent_id(),
            self.key
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
                let filling = self.dir.join(format!("{}.filling", self.key));
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
        let _ = std::fs::remove_dir_all(self.dir.join(format!("{}.filling", self.key)));
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
