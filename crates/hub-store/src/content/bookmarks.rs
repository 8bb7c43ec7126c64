//! Bookmarks of deep pages (`hub_query::content::bookmarks`), kept per list (an entity's
//! whole list, or one filtered list) with the revision they were read at.
//!
//! A deep page first asks [`PageBookmarks::next`] what to run: a seek from a kept mark,
//! or a read of the marks it lacks (from the last kept one, so a client paging on reads
//! each part of the order once). The backend runs that statement and hands its rows back
//! ([`PageBookmarks::read`], [`PageBookmarks::seeked`]); every row carries the entity's
//! revision from the same statement, so marks are used only while the documents they
//! were read from are unchanged, whichever process wrote since. [`MAX_STEPS`] is how
//! many steps a page may take before it falls back to its ordinary statement.
//!
//! A page past the list's end finds no mark or no row. Its ordinary statement would read
//! every match to learn that, so the entries after the last kept mark are counted
//! instead (fewer than a stride, with the revision from the same statement). The list's
//! length is kept with its marks: further pages past it read only the revision.
//!
//! Filters are typed by clients, so the lists kept are bounded: at most [`MAX_LISTS`],
//! the one used longest ago dropped for a new one. A list holds one pair of keys per
//! [`hub_query::content::bookmarks::STRIDE`] matches paged through.
//!
//! Owns: the marks and the decisions between steps. Must not: run statements.

use std::sync::Mutex;

use hub_query::content::bookmarks::{read_revision, BookmarkedPage, OrderKey, STRIDE};
use hub_query::{Dialect, SqlBuilder};

use super::kept_lists::KeptLists;

/// Steps a page may take: a read of missing marks, a seek that finds them out of date,
/// a read from the start, the seek, and a count of the tail when one of them ends.
pub(crate) const MAX_STEPS: usize = 5;

/// Lists whose marks are kept at once. At the scale-10 demo's 70,000 POIs a list paged
/// to its end holds 700 marks (about 60 KB).
pub(crate) const MAX_LISTS: usize = 128;

/// Kept marks of every list paged deep enough.
pub(crate) struct PageBookmarks {
    kept: Mutex<KeptLists<Marks>>,
}

impl Default for PageBookmarks {
    fn default() -> Self {
        PageBookmarks {
            kept: Mutex::new(KeptLists::new(MAX_LISTS)),
        }
    }
}

struct Marks {
    /// The entity's revision the keys were read at.
    revision: i64,
    /// Mark `j` is `keys[j - 1]`.
    keys: Vec<OrderKey>,
    /// The list's length at `revision`, once its tail was counted.
    len: Option<u64>,
}

/// The statement a deep page runs next.
pub(crate) enum Step {
    /// The page from a kept mark; its rows must come with `revision`.
    Seek { page: SqlBuilder, revision: i64 },
    /// The marks after the first `known` ones, which were read at `revision`.
    Read {
        marks: SqlBuilder,
        known: usize,
        revision: Option<i64>,
    },
    /// The entries after the first `known` marks (read at `revision`), counted: whether
    /// the list ends before the page. Its row goes to [`PageBookmarks::counted`].
    CountTail {
        tail: SqlBuilder,
        known: usize,
        revision: Option<i64>,
    },
    /// The page lies past the list's length kept at revision `kept`: it is empty while
    /// the entity's revision is still that one. Hand the `revision` statement's value
    /// to [`PageBookmarks::ended`].
    PastTheEnd { revision: SqlBuilder, kept: i64 },
}

impl PageBookmarks {
    fn lock(&self) -> std::sync::MutexGuard<'_, KeptLists<Marks>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next step for `page`; `ended` when the last one found the list ending before
    /// the page (a read with fewer marks than asked for, a seek with no rows).
    pub(crate) fn next(&self, page: &BookmarkedPage, ended: bool, dialect: Dialect) -> Step {
        let mut kept = self.lock();
        let mark = page.mark() as usize;
        match kept.used(page.scope()) {
            Some(kept) if kept.len.is_some_and(|len| page.offset >= len) => Step::PastTheEnd {
                revision: read_revision(page.entity, dialect),
                kept: kept.revision,
            },
            Some(kept) if ended => Step::CountTail {
                tail: page.tail(kept.keys.last(), dialect),
                known: kept.keys.len(),
                revision: Some(kept.revision),
            },
            None if ended => Step::CountTail {
                tail: page.tail(None, dialect),
                known: 0,
                revision: None,
            },
            Some(kept) if mark >= 1 && kept.keys.len() >= mark => Step::Seek {
                page: page.seek(&kept.keys[mark - 1], dialect),
                revision: kept.revision,
            },
            Some(kept) => Step::Read {
                marks: page.marks(kept.keys.len() as u64, kept.keys.last(), dialect),
                known: kept.keys.len(),
                revision: Some(kept.revision),
            },
            None => Step::Read {
                marks: page.marks(0, None, dialect),
                known: 0,
                revision: None,
            },
        }
    }

    /// Keeps the marks a [`Step::Read`] returned (`rows`: key and revision); true when
    /// another step may answer the page: the marks now reach it, or they were read at
    /// another revision than the kept ones, which are dropped so that the next step
    /// reads from the start. False when the list ends before the page's mark.
    pub(crate) fn read(
        &self,
        page: &BookmarkedPage,
        known: usize,
        revision: Option<i64>,
        rows: Vec<(OrderKey, Option<i64>)>,
    ) -> bool {
        let Some(read_at) = rows.first().and_then(|(_, r)| *r) else {
            // No marks (the list ends before the first) or no revision to hold them to.
            return false;
        };
        let mut kept = self.lock();
        let keys = rows.into_iter().map(|(key, _)| key);
        match kept.used(page.scope()) {
            Some(marks) if revision == Some(read_at) && marks.revision == read_at => {
                // Another request may have read the same marks meanwhile.
                if marks.keys.len() == known {
                    marks.keys.extend(keys);
                }
            }
            _ if known == 0 => kept.insert(
                page.scope(),
                Marks {
                    revision: read_at,
                    keys: keys.collect(),
                    len: None,
                },
            ),
            _ => {
                kept.remove(page.scope());
                return true;
            }
        }
        kept.get(page.scope())
            .is_some_and(|marks| marks.keys.len() as u64 >= page.mark())
    }

    /// Whether the page lies past the list's end, from a [`Step::CountTail`]'s row: the
    /// entries after the first `known` marks (`count`, at most a stride) and the
    /// revision they were read at. It does when they are fewer than a stride, read at
    /// the marks' `revision`, and the page starts at or after the length they give,
    /// which is kept with the marks. A tail read at another revision drops the marks.
    pub(crate) fn counted(
        &self,
        page: &BookmarkedPage,
        known: usize,
        revision: Option<i64>,
        (count, read_at): (u64, i64),
    ) -> bool {
        if count >= STRIDE || revision.is_some_and(|r| r != read_at) {
            if let Some(revision) = revision {
                self.drop_at(page, revision);
            }
            return false;
        }
        let mut kept = self.lock();
        let len = known as u64 * STRIDE + count;
        match kept.used(page.scope()) {
            Some(marks) if marks.revision == read_at && marks.keys.len() == known => {
                marks.len = Some(len);
            }
            None if known == 0 => kept.insert(
                page.scope(),
                Marks {
                    revision: read_at,
                    keys: Vec::new(),
                    len: Some(len),
                },
            ),
            _ => {}
        }
        page.offset >= len
    }

    /// Whether the page past the list's length kept at revision `kept` is empty: the
    /// entity's revision is `current`. Otherwise the marks are dropped.
    pub(crate) fn ended(&self, page: &BookmarkedPage, kept: i64, current: i64) -> bool {
        if current == kept {
            return true;
        }
        self.drop_at(page, kept);
        false
    }

    /// Drops the marks of `page`'s list read at `revision`.
    fn drop_at(&self, page: &BookmarkedPage, revision: i64) {
        self.lock()
            .remove_if(page.scope(), |marks| marks.revision == revision);
    }

    /// Whether a [`Step::Seek`] answered the page: its rows came with the revision the
    /// marks were read at. Otherwise the marks are out of date and are dropped.
    pub(crate) fn seeked(&self, page: &BookmarkedPage, revision: i64, found: Option<i64>) -> bool {
        if found == Some(revision) {
            return true;
        }
        self.drop_at(page, revision);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};

    fn page(offset: u64) -> BookmarkedPage {
        filtered(offset, vec![])
    }

    /// The page at `offset` (a multiple of 10) of a list with `filters`.
    fn filtered(offset: u64, filters: Vec<ContentFilter>) -> BookmarkedPage {
        let query = ContentQuery {
            entity: "Accommodation",
            filters,
            order: ContentOrder::Default,
            page: Page {
                size: 10,
                number: (offset / 10 + 1) as u32,
            },
            count_limit: None,
        };
        BookmarkedPage::of(&query).expect("a deep page")
    }

    fn key(n: u64) -> OrderKey {
        OrderKey {
            sort_key: format!("{n:06}"),
            id_key: format!("id{n}"),
        }
    }

    /// Marks `from..=to` as a read returns them, at `revision`.
    fn rows(from: u64, to: u64, revision: i64) -> Vec<(OrderKey, Option<i64>)> {
        (from..=to).map(|j| (key(j), Some(revision))).collect()
    }

    #[test]
    fn marks_are_read_once_then_extended_then_seeked_from() {
        let bookmarks = PageBookmarks::default();
        let deep = page(29 * STRIDE + 90);
        let Step::Read {
            known, revision, ..
        } = bookmarks.next(&deep, false, Dialect::Sqlite)
        else {
            panic!("nothing kept yet: read the marks")
        };
        assert_eq!((known, revision), (0, None));
        assert!(bookmarks.read(&deep, 0, None, rows(1, 29, 7)));
        let Step::Seek {
            page: seek,
            revision,
        } = bookmarks.next(&deep, false, Dialect::Sqlite)
        else {
            panic!("the marks reach the page")
        };
        assert_eq!(revision, 7);
        assert!(seek
            .params()
            .contains(&hub_query::SqlValue::Text(key(29).sort_key)));
        assert!(bookmarks.seeked(&deep, 7, Some(7)));

        // A deeper page reads only the marks after the kept ones.
        let deeper = page(40 * STRIDE);
        let Step::Read {
            known, revision, ..
        } = bookmarks.next(&deeper, false, Dialect::Sqlite)
        else {
            panic!("read the missing marks")
        };
        assert_eq!((known, revision), (29, Some(7)));
        assert!(bookmarks.read(&deeper, 29, Some(7), rows(30, 40, 7)));
        assert!(matches!(
            bookmarks.next(&deeper, false, Dialect::Sqlite),
            Step::Seek { revision: 7, .. }
        ));
    }

    #[test]
    fn a_new_revision_drops_the_marks_and_reads_again_from_the_start() {
        let bookmarks = PageBookmarks::default();
        let deep = page(5 * STRIDE);
        assert!(bookmarks.read(&deep, 0, None, rows(1, 5, 7)));
        // The seek's rows come from revision 8: not the page.
        assert!(!bookmarks.seeked(&deep, 7, Some(8)));
        assert!(matches!(
            bookmarks.next(&deep, false, Dialect::Sqlite),
            Step::Read { known: 0, .. }
        ));

        // An extension read at another revision than the kept marks drops them too.
        assert!(bookmarks.read(&deep, 0, None, rows(1, 5, 8)));
        let deeper = page(9 * STRIDE);
        assert!(bookmarks.read(&deeper, 5, Some(8), rows(6, 9, 9)));
        assert!(matches!(
            bookmarks.next(&deeper, false, Dialect::Sqlite),
            Step::Read { known: 0, .. }
        ));
    }

    #[test]
    fn a_page_past_the_marks_the_entity_has_is_not_seeked() {
        let bookmarks = PageBookmarks::default();
        let past = page(50 * STRIDE);
        // The entity ends after mark 12.
        assert!(!bookmarks.read(&past, 0, None, rows(1, 12, 3)));
        assert!(!bookmarks.read(&past, 12, Some(3), Vec::new()));
        // What was read is kept for the pages it reaches.
        assert!(matches!(
            bookmarks.next(&page(12 * STRIDE), false, Dialect::Sqlite),
            Step::Seek { revision: 3, .. }
        ));
    }

    #[test]
    fn a_page_past_the_end_is_answered_by_a_count_of_the_tail_at_the_marks_revision() {
        let bookmarks = PageBookmarks::default();
        let far = page(50 * STRIDE);
        // The list ends after mark 12: the read says so, the tail's 40 entries give its
        // length (1,240), and the page lies past it.
        assert!(!bookmarks.read(&far, 0, None, rows(1, 12, 3)));
        let Step::CountTail {
            tail,
            known,
            revision,
        } = bookmarks.next(&far, true, Dialect::Sqlite)
        else {
            panic!("the list ended: count its tail")
        };
        assert_eq!((known, revision), (12, Some(3)));
        assert!(tail
            .params()
            .contains(&hub_query::SqlValue::Text(key(12).sort_key)));
        assert!(bookmarks.counted(&far, 12, Some(3), (40, 3)));

        // The length is kept: pages past it read only the revision, pages before it seek.
        let last_stride = page(12 * STRIDE + 40);
        let Step::PastTheEnd { revision, kept: 3 } =
            bookmarks.next(&last_stride, false, Dialect::Sqlite)
        else {
            panic!("past the kept length: read the revision")
        };
        assert!(revision
            .as_sql()
            .starts_with("SELECT COALESCE((SELECT r.revision"));
        assert!(bookmarks.ended(&last_stride, 3, 3));
        assert!(matches!(
            bookmarks.next(&page(12 * STRIDE + 30), false, Dialect::Sqlite),
            Step::Seek { revision: 3, .. }
        ));

        // A later revision: the marks and length go, and are read again.
        assert!(!bookmarks.ended(&far, 3, 4));
        assert!(matches!(
            bookmarks.next(&far, false, Dialect::Sqlite),
            Step::Read { known: 0, .. }
        ));

        // So does a tail read at a later revision than the marks.
        assert!(!bookmarks.read(&far, 0, None, rows(1, 12, 4)));
        assert!(!bookmarks.counted(&far, 12, Some(4), (40, 5)));
        assert!(matches!(
            bookmarks.next(&far, false, Dialect::Sqlite),
            Step::Read { known: 0, .. }
        ));
    }

    #[test]
    fn a_tail_of_a_stride_or_more_or_before_the_page_leaves_the_page_to_other_steps() {
        let bookmarks = PageBookmarks::default();
        let deep = page(12 * STRIDE + 50);
        assert!(bookmarks.read(&deep, 0, None, rows(1, 12, 3)));
        // The seek found no row, but the list goes on past the page's start at this
        // revision (another revision's seek): not past the end, the marks stay.
        assert!(!bookmarks.counted(&deep, 12, Some(3), (60, 3)));
        assert!(matches!(
            bookmarks.next(&deep, false, Dialect::Sqlite),
            Step::Seek { revision: 3, .. }
        ));
        // A whole stride after the last mark: the marks are out of date.
        assert!(!bookmarks.counted(&deep, 12, Some(3), (STRIDE, 3)));
        assert!(matches!(
            bookmarks.next(&deep, false, Dialect::Sqlite),
            Step::Read { known: 0, .. }
        ));
    }

    #[test]
    fn a_list_shorter_than_a_stride_keeps_its_length_without_marks() {
        let bookmarks = PageBookmarks::default();
        let deep = page(3 * STRIDE);
        // No mark: the list holds fewer than a stride.
        assert!(!bookmarks.read(&deep, 0, None, Vec::new()));
        let Step::CountTail {
            tail,
            known: 0,
            revision: None,
        } = bookmarks.next(&deep, true, Dialect::Sqlite)
        else {
            panic!("count the whole list")
        };
        assert!(!tail.as_sql().contains("> ("), "{}", tail.as_sql());
        assert!(bookmarks.counted(&deep, 0, None, (7, 5)));
        assert!(matches!(
            bookmarks.next(&deep, false, Dialect::Sqlite),
            Step::PastTheEnd { kept: 5, .. }
        ));
    }

    #[test]
    fn each_list_keeps_its_own_marks_and_the_one_used_longest_ago_goes_first() {
        let bookmarks = PageBookmarks::default();
        let whole = page(5 * STRIDE);
        let active = filtered(5 * STRIDE, vec![ContentFilter::Active(true)]);
        assert!(bookmarks.read(&whole, 0, None, rows(1, 5, 7)));
        // The filtered list has none yet; reading its marks leaves the whole list's.
        assert!(matches!(
            bookmarks.next(&active, false, Dialect::Sqlite),
            Step::Read { known: 0, .. }
        ));
        assert!(bookmarks.read(&active, 0, None, rows(101, 105, 7)));
        let Step::Seek { page: seek, .. } = bookmarks.next(&active, false, Dialect::Sqlite) else {
            panic!("the filtered list's marks reach the page")
        };
        assert!(seek
            .params()
            .contains(&hub_query::SqlValue::Text(key(105).sort_key)));
        assert!(matches!(
            bookmarks.next(&whole, false, Dialect::Sqlite),
            Step::Seek { .. }
        ));

        // Fill the lists, use the filtered list again, then add one more: the whole
        // list, used longest ago, is the one dropped.
        for n in 0..MAX_LISTS - 2 {
            let since = filtered(5 * STRIDE, vec![ContentFilter::ChangedSince(n.to_string())]);
            assert!(bookmarks.read(&since, 0, None, rows(1, 5, 7)));
        }
        assert!(matches!(
            bookmarks.next(&active, false, Dialect::Sqlite),
            Step::Seek { .. }
        ));
        let one_more = filtered(5 * STRIDE, vec![ContentFilter::ChangedSince("x".into())]);
        assert!(bookmarks.read(&one_more, 0, None, rows(1, 5, 7)));
        assert!(matches!(
            bookmarks.next(&whole, false, Dialect::Sqlite),
            Step::Read { known: 0, .. }
        ));
        assert!(matches!(
            bookmarks.next(&active, false, Dialect::Sqlite),
            Step::Seek { .. }
        ));
        assert_eq!(bookmarks.lock().len(), MAX_LISTS);
    }
}
