//! Content write revisions kept in memory for as long as the database has not changed,
//! told by the header of SQLite's WAL index (the `-shm` file beside the database).
//!
//! Every response-cache hit needs the entity's write revision, and a write committed
//! by any process before the request arrived must be seen. Reading `content_revision`
//! costs a read transaction per hit (file and shared-memory locks, each an `fcntl`).
//! The WAL index's header changes at every commit, by any connection of any process:
//! the committing writer rewrites it before its `COMMIT` returns (its change counter,
//! last frame, frame checksum; a restarted log changes its salts). So the revisions
//! read after the header showed some value are current for as long as the header still
//! shows that value — one `pread` of 96 bytes per hit, no lock, no transaction.
//!
//! The header is written as two copies, the second first; a reader that finds them
//! different caught a writer mid-way (SQLite's own readers do the same check). Then,
//! and whenever the index cannot be read, the revisions are read from the table.
//!
//! Owns the `-shm` file handle and the kept revisions. Must not: write anything, or
//! decide what the cache keeps (hub-content).

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

use crate::content::Revisions;

/// Bytes of one copy of the WAL-index header (`WalIndexHdr` in SQLite's `wal.c`,
/// described in its "WAL-mode file format" document).
const HEADER_LEN: usize = 48;

/// Offset of the header's `isInit` byte: 1 once the index is built.
const IS_INIT_OFFSET: usize = 12;

/// One consistent copy of the WAL-index header: equal values mean no commit between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WalStamp([u8; HEADER_LEN]);

/// The stamp in the first bytes of a WAL index, when both header copies agree and the
/// index is built (otherwise a writer is mid-way, or the index is being rebuilt).
pub(crate) fn stamp_of(index_head: &[u8; 2 * HEADER_LEN]) -> Option<WalStamp> {
    let (first, second) = index_head.split_at(HEADER_LEN);
    if first != second || first[IS_INIT_OFFSET] != 1 {
        return None;
    }
    let mut stamp = [0; HEADER_LEN];
    stamp.copy_from_slice(first);
    Some(WalStamp(stamp))
}

/// The revisions read while the WAL index showed a given stamp.
pub(crate) struct RevisionMemory {
    /// The `-shm` file, when the database has one (WAL mode, readable).
    index: Option<File>,
    kept: RwLock<Option<(WalStamp, Revisions)>>,
    /// Reads of the table (for `/metrics`): hits the memory could not answer.
    reads: AtomicU64,
}

impl RevisionMemory {
    /// Watches the WAL index of `database`. Open it after a connection has put the
    /// database in WAL mode; without an index every call reads the table.
    pub(crate) fn open(database: &Path) -> Self {
        let mut index_path = database.as_os_str().to_owned();
        index_path.push("-shm");
        let index = File::open(&index_path)
            .inspect_err(|e| {
                tracing::warn!(path = %Path::new(&index_path).display(), error = %e,
                    "no WAL index to watch: every response-cache hit reads the revisions")
            })
            .ok();
        RevisionMemory {
            index,
            kept: RwLock::new(None),
            reads: AtomicU64::new(0),
        }
    }

    /// The current revisions: the kept ones while the database is unchanged, otherwise
    /// those `read` returns (kept for the stamp seen before the read began, so a commit
    /// racing the read makes the next call read again).
    pub(crate) fn revisions(
        &self,
        read: impl FnOnce() -> crate::Result<Revisions>,
    ) -> crate::Result<Revisions> {
        let stamp = self.stamp();
        if let Some(stamp) = stamp {
            if let Ok(kept) = self.kept.read() {
                if let Some((kept_stamp, revisions)) = kept.as_ref() {
                    if *kept_stamp == stamp {
                        return Ok(revisions.clone());
                    }
                }
            }
        }
        self.reads.fetch_add(1, Ordering::Relaxed);
        let revisions = read()?;
        if let (Some(stamp), Ok(mut kept)) = (stamp, self.kept.write()) {
            *kept = Some((stamp, revisions.clone()));
        }
        Ok(revisions)
    }

    /// How many times the revisions were read from the table.
    pub(crate) fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    fn stamp(&self) -> Option<WalStamp> {
        use std::os::unix::fs::FileExt;
        let mut head = [0; 2 * HEADER_LEN];
        self.index.as_ref()?.read_exact_at(&mut head, 0).ok()?;
        stamp_of(&head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header copy with a change counter and a built flag.
    fn header(change: u8, built: u8) -> [u8; HEADER_LEN] {
        let mut h = [0; HEADER_LEN];
        h[8] = change;
        h[IS_INIT_OFFSET] = built;
        h
    }

    fn head(first: [u8; HEADER_LEN], second: [u8; HEADER_LEN]) -> [u8; 2 * HEADER_LEN] {
        let mut bytes = [0; 2 * HEADER_LEN];
        bytes[..HEADER_LEN].copy_from_slice(&first);
        bytes[HEADER_LEN..].copy_from_slice(&second);
        bytes
    }

    #[test]
    fn a_stamp_needs_two_equal_copies_of_a_built_header() {
        let table = [
            (
                head(header(7, 1), header(7, 1)),
                Some(WalStamp(header(7, 1))),
            ),
            // A writer between its two copies.
            (head(header(7, 1), header(8, 1)), None),
            // An index being rebuilt.
            (head(header(7, 0), header(7, 0)), None),
            (head([0; HEADER_LEN], [0; HEADER_LEN]), None),
        ];
        for (bytes, expected) in table {
            assert_eq!(stamp_of(&bytes), expected);
        }
    }

    fn revisions(n: i64) -> Revisions {
        std::sync::Arc::new([("ODHActivityPoi".to_string(), n)].into_iter().collect())
    }

    /// A real database in WAL mode: the memory answers until another connection commits.
    #[test]
    fn kept_revisions_answer_until_any_connection_commits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite3");
        let writer = rusqlite::Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x);")
            .unwrap();
        let memory = RevisionMemory::open(&path);
        let read = |n| move || Ok(revisions(n));
        assert_eq!(memory.revisions(read(1)).unwrap(), revisions(1));
        // Unchanged database: the kept revisions answer, the table is not read.
        assert_eq!(memory.revisions(read(2)).unwrap(), revisions(1));
        assert_eq!(memory.reads(), 1);
        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute("INSERT INTO t VALUES (1)", []).unwrap();
        assert_eq!(memory.revisions(read(3)).unwrap(), revisions(3));
        assert_eq!(memory.revisions(read(4)).unwrap(), revisions(3));
        assert_eq!(memory.reads(), 2);
    }

    #[test]
    fn without_an_index_every_call_reads() {
        let dir = tempfile::tempdir().unwrap();
        let memory = RevisionMemory::open(&dir.path().join("absent.sqlite3"));
        for n in 1..=3 {
            assert_eq!(memory.revisions(|| Ok(revisions(n))).unwrap(), revisions(n));
        }
        assert_eq!(memory.reads(), 3);
    }
}
