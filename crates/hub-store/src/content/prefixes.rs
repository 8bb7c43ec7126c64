//! Kept prefixes of orders (`hub_query::content::prefixed`): seeded, `rawsort`, and the
//! default order of filtered lists no walk answers; per list and order, with the
//! revision they were read at.
//!
//! A page that ends within the prefix asks [`OrderPrefixes::next`] what to run: a read
//! of the prefix, whose rows go to [`OrderPrefixes::keep`], or a read of the page's
//! documents by key, whose rows go to [`OrderPrefixes::assemble`]. That puts them in the
//! order's sequence, or drops the prefix when they come from another revision than it
//! (a write since, by any process). A page past the end of a prefix that holds the
//! whole list reads only the revision ([`OrderPrefixes::ended`]). [`MAX_STEPS`] bounds
//! the reads before the page falls back to its ordinary statement.
//!
//! Owns: the prefixes and the decisions between statements. Must not: run statements.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hub_query::content::prefixed::{PrefixedPage, PREFIX};
use hub_query::{Dialect, SqlBuilder};

use super::kept_lists::KeptLists;

/// Statements a page may run: the prefix, its documents or the revision past its end
/// (found out of date at most once), the prefix again, and its documents or revision.
pub(crate) const MAX_STEPS: usize = 4;

/// Lists and orders whose prefix near the start is kept at once: each is at most
/// `hub_query::content::prefixed::PREFIX` ids (about 60 KB), so these take at most ~4 MB.
pub(crate) const MAX_LISTS: usize = 64;

/// Lists and orders whose deeper prefix is kept at once: each is at most
/// `hub_query::content::prefixed::DEEPEST` ids (about 9 MB), read only by clients paging
/// on past the first prefix, so few.
pub(crate) const MAX_DEEP_LISTS: usize = 4;

/// A prefix of an order: its keys, in order, the revision they were read at, how many
/// positions deep they were read (fewer keys: the whole list), every match of the list
/// at that revision, and the span of times a next-begin order holds for.
#[derive(Clone)]
pub(crate) struct Prefix {
    pub(crate) keys: Arc<[String]>,
    pub(crate) revision: i64,
    depth: u64,
    total: u64,
    span: (Option<String>, Option<String>),
}

/// One row of a prefix read (`PrefixedPage::prefix`): a key, then what every row of the
/// read carries alike.
#[derive(Debug, Clone)]
pub(crate) struct PrefixRow {
    pub(crate) key: String,
    pub(crate) revision: Option<i64>,
    /// The span of times the order holds for (`PrefixedPage::holds`).
    pub(crate) span: (Option<String>, Option<String>),
    /// Every match of the list, counted in the same pass.
    pub(crate) total: i64,
}

pub(crate) struct OrderPrefixes {
    kept: Mutex<Kept>,
}

/// Prefixes near the start, and deeper ones, each bounded on its own.
struct Kept {
    near: KeptLists<Prefix>,
    deep: KeptLists<Prefix>,
}

impl Default for OrderPrefixes {
    fn default() -> Self {
        OrderPrefixes {
            kept: Mutex::new(Kept {
                near: KeptLists::new(MAX_LISTS),
                deep: KeptLists::new(MAX_DEEP_LISTS),
            }),
        }
    }
}

/// The statement a page of a computed order runs next.
pub(crate) enum PrefixStep {
    /// The prefix: hand its rows (`id_key, revision`) to [`OrderPrefixes::keep`].
    ReadPrefix(SqlBuilder),
    /// The page's documents from the kept `prefix`: hand their rows (`id_key, doc,
    /// revision`) to [`OrderPrefixes::assemble`] with `prefix` and `revision`. The list
    /// holds `total` matches at that revision.
    ReadDocuments {
        documents: SqlBuilder,
        prefix: Arc<[String]>,
        revision: i64,
        total: u64,
    },
    /// The page lies past the end of the whole list the prefix holds (`total` keys),
    /// read at `kept`: it is empty while the entity's revision is still that one. Hand
    /// the `revision` statement's value to [`OrderPrefixes::ended`].
    PastTheEnd {
        revision: SqlBuilder,
        kept: i64,
        total: u64,
    },
}

impl OrderPrefixes {
    pub(crate) fn next(&self, page: &PrefixedPage, dialect: Dialect) -> PrefixStep {
        let Some(Prefix {
            keys,
            revision,
            total,
            ..
        }) = self.kept(page)
        else {
            return PrefixStep::ReadPrefix(page.prefix(dialect));
        };
        let page_keys = page.keys(&keys);
        if page_keys.is_empty() {
            return PrefixStep::PastTheEnd {
                revision: page.read_revision(dialect),
                kept: revision,
                total,
            };
        }
        PrefixStep::ReadDocuments {
            documents: page.documents(page_keys, dialect),
            prefix: keys,
            revision,
            total,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A kept prefix of `page`'s list and order that holds the page: it reaches the
    /// page, and a next-begin order was read for the page's time.
    pub(crate) fn kept(&self, page: &PrefixedPage) -> Option<Prefix> {
        let mut kept = self.lock();
        let Kept { near, deep } = &mut *kept;
        let found = [near, deep].into_iter().find_map(|lists| {
            lists
                .used(page.scope())
                .filter(|p| {
                    page.within(p.keys.len(), p.depth)
                        && page.holds((p.span.0.as_deref(), p.span.1.as_deref()))
                })
                .cloned()
        });
        found
    }

    /// Keeps the prefix a read returned and returns it; none when the list is empty (no
    /// revision to hold it to).
    pub(crate) fn keep(&self, page: &PrefixedPage, rows: Vec<PrefixRow>) -> Option<Prefix> {
        let first = rows.first()?;
        let revision = first.revision?;
        let total = u64::try_from(first.total).unwrap_or(0);
        let span = first.span.clone();
        let keys: Arc<[String]> = rows.into_iter().map(|row| row.key).collect();
        let depth = page.depth();
        let prefix = Prefix {
            keys,
            revision,
            depth,
            total,
            span,
        };
        let mut kept = self.lock();
        let lists = if depth > PREFIX {
            &mut kept.deep
        } else {
            &mut kept.near
        };
        lists.insert(page.scope(), prefix.clone());
        Some(prefix)
    }

    /// Whether the page past the end of a whole list kept at revision `kept` is empty:
    /// the entity's revision is `current`. Otherwise the prefix is dropped.
    pub(crate) fn ended(&self, page: &PrefixedPage, kept: i64, current: i64) -> bool {
        if current == kept {
            return true;
        }
        self.drop_at(page, kept);
        false
    }

    /// Drops the prefixes of `page`'s list read at `revision`.
    fn drop_at(&self, page: &PrefixedPage, revision: i64) {
        let mut kept = self.lock();
        let Kept { near, deep } = &mut *kept;
        for lists in [near, deep] {
            lists.remove_if(page.scope(), |p| p.revision == revision);
        }
    }

    /// The page's documents in the order of its keys in `prefix`, from the rows
    /// (`id_key, doc, revision`) of the documents statement over them, when every key
    /// came back with the prefix's `revision`; otherwise the prefix is dropped and
    /// `None` returned.
    pub(crate) fn assemble(
        &self,
        page: &PrefixedPage,
        prefix: &[String],
        revision: i64,
        rows: Vec<(String, String, Option<i64>)>,
    ) -> Option<Vec<String>> {
        let current = rows.iter().all(|(_, _, r)| *r == Some(revision));
        let docs = rows.into_iter().map(|(key, doc, _)| (key, doc));
        match in_key_order(page.keys(prefix), docs) {
            Some(ordered) if current => Some(ordered),
            _ => {
                self.drop_at(page, revision);
                None
            }
        }
    }
}

/// The documents of `rows` (`id_key, doc`, in any order) in the order of `keys`, when
/// every key has its row.
pub(crate) fn in_key_order(
    keys: &[String],
    rows: impl IntoIterator<Item = (String, String)>,
) -> Option<Vec<String>> {
    let mut docs: HashMap<String, String> = rows.into_iter().collect();
    keys.iter().map(|key| docs.remove(key)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_query::content::{ContentFilter, ContentOrder, ContentQuery, Page};
    use hub_query::SqlValue;

    #[test]
    fn documents_come_in_their_keys_order_or_not_at_all() {
        let keys: Vec<String> = ["b", "a", "c"].iter().map(|k| k.to_string()).collect();
        let row = |k: &str| (k.to_string(), format!("doc {k}"));
        assert_eq!(
            in_key_order(&keys, [row("a"), row("c"), row("b")]),
            Some(vec!["doc b".into(), "doc a".into(), "doc c".into()])
        );
        assert_eq!(in_key_order(&keys, [row("a"), row("b")]), None);
    }

    fn page(number: u32, seed: &str, filters: Vec<ContentFilter>) -> PrefixedPage {
        PrefixedPage::of(&ContentQuery {
            entity: "Event",
            filters,
            order: ContentOrder::Seed(seed.into()),
            page: Page { size: 2, number },
            count_limit: None,
        })
        .expect("a seeded page within the prefix")
    }

    fn rows(keys: &[&str], revision: i64) -> Vec<PrefixRow> {
        keys.iter()
            .map(|k| PrefixRow {
                key: k.to_string(),
                revision: Some(revision),
                span: (None, None),
                total: keys.len() as i64,
            })
            .collect()
    }

    fn docs(keys: &[&str], revision: i64) -> Vec<(String, String, Option<i64>)> {
        keys.iter()
            .map(|k| (k.to_string(), format!("doc {k}"), Some(revision)))
            .collect()
    }

    #[test]
    fn a_kept_prefix_answers_its_pages_in_order_while_the_revision_holds() {
        let prefixes = OrderPrefixes::default();
        let second = page(2, "7", vec![]);
        assert!(prefixes.kept(&second).is_none());
        assert!(matches!(
            prefixes.next(&second, Dialect::Sqlite),
            PrefixStep::ReadPrefix(_)
        ));
        let Prefix { keys, revision, .. } = prefixes
            .keep(&second, rows(&["d", "a", "c", "b"], 5))
            .unwrap();
        assert_eq!(
            (&keys[..], revision),
            (&["d", "a", "c", "b"].map(String::from)[..], 5)
        );
        assert!(matches!(
            prefixes.next(&second, Dialect::Sqlite),
            PrefixStep::ReadDocuments { revision: 5, .. }
        ));
        // Past the end of the whole list: empty while the revision is the prefix's.
        let past = page(3, "7", vec![]);
        let PrefixStep::PastTheEnd {
            revision,
            kept,
            total,
        } = prefixes.next(&past, Dialect::Sqlite)
        else {
            panic!("page 3 of 4 keys in pages of 2")
        };
        assert_eq!((kept, total), (5, 4));
        assert!(revision
            .as_sql()
            .starts_with("SELECT COALESCE((SELECT r.revision"));
        assert!(prefixes.ended(&past, 5, 5));
        assert!(prefixes.kept(&past).is_some());
        // Documents come back in any order; the page is in the prefix's.
        let found = prefixes.assemble(&second, &keys, 5, docs(&["b", "c"], 5));
        assert_eq!(found, Some(vec!["doc c".to_string(), "doc b".to_string()]));
        assert!(prefixes.kept(&page(1, "7", vec![])).is_some());
        assert!(prefixes.kept(&page(1, "8", vec![])).is_none());
        assert!(prefixes
            .kept(&page(1, "7", vec![ContentFilter::Active(true)]))
            .is_none());
    }

    #[test]
    fn a_write_or_a_missing_document_drops_the_prefix() {
        let prefixes = OrderPrefixes::default();
        let first = page(1, "7", vec![]);
        prefixes.keep(&first, rows(&["a", "b", "c"], 5)).unwrap();
        // Revision 6 since: not the page.
        assert_eq!(
            prefixes.assemble(&first, &["a".into(), "b".into()], 5, docs(&["a", "b"], 6)),
            None
        );
        assert!(prefixes.kept(&first).is_none());

        prefixes.keep(&first, rows(&["a", "b", "c"], 6)).unwrap();
        assert_eq!(
            prefixes.assemble(&first, &["a".into(), "b".into()], 6, docs(&["a"], 6)),
            None
        );
        assert!(prefixes.kept(&first).is_none());

        // An empty list keeps nothing.
        assert!(prefixes.keep(&first, Vec::new()).is_none());
    }

    #[test]
    fn the_list_used_longest_ago_makes_room() {
        let prefixes = OrderPrefixes::default();
        for seed in 0..MAX_LISTS {
            prefixes.keep(&page(1, &seed.to_string(), vec![]), rows(&["a"], 1));
        }
        assert!(prefixes.kept(&page(1, "0", vec![])).is_some());
        prefixes.keep(&page(1, "new", vec![]), rows(&["a"], 1));
        assert!(prefixes.kept(&page(1, "0", vec![])).is_some());
        assert!(prefixes.kept(&page(1, "1", vec![])).is_none());
        assert_eq!(prefixes.lock().near.len(), MAX_LISTS);
    }

    fn sized(size: u32, number: u32) -> PrefixedPage {
        PrefixedPage::of(&ContentQuery {
            entity: "Event",
            filters: vec![],
            order: ContentOrder::Seed("7".into()),
            page: Page { size, number },
            count_limit: None,
        })
        .expect("a seeded page within the deepest prefix")
    }

    fn keys(n: usize, revision: i64) -> Vec<PrefixRow> {
        (0..n)
            .map(|i| PrefixRow {
                key: format!("k{i:06}"),
                revision: Some(revision),
                span: (None, None),
                total: n as i64,
            })
            .collect()
    }

    #[test]
    fn a_page_past_a_full_prefix_reads_a_deeper_one_and_a_whole_list_ends_there() {
        let prefixes = OrderPrefixes::default();
        let near = sized(10, 100);
        let past = sized(10, 101);
        // The near prefix came back full (1,000 keys): the list may go on.
        prefixes.keep(&near, keys(1_000, 3)).unwrap();
        assert!(matches!(
            prefixes.next(&near, Dialect::Sqlite),
            PrefixStep::ReadDocuments { .. }
        ));
        let PrefixStep::ReadPrefix(deeper) = prefixes.next(&past, Dialect::Sqlite) else {
            panic!("page 101 read from a prefix of 1,000");
        };
        assert!(deeper.params().contains(&SqlValue::Int(8_000)));
        // 2,400 keys of 8,000 asked for: the whole list, kept apart from the near ones.
        prefixes.keep(&past, keys(2_400, 3)).unwrap();
        assert_eq!(prefixes.lock().deep.len(), 1);
        let PrefixStep::ReadDocuments { prefix, .. } = prefixes.next(&past, Dialect::Sqlite) else {
            panic!("page 101 not read by key");
        };
        assert_eq!(past.keys(&prefix)[0], "k001000");
        // Far past the list's end, within what was asked for: nothing to read by key.
        assert!(matches!(
            prefixes.next(&sized(10, 700), Dialect::Sqlite),
            PrefixStep::PastTheEnd { kept: 3, .. }
        ));
        // A write drops the deep prefix too.
        let stale = past
            .keys(&prefix)
            .iter()
            .map(|k| (k.clone(), "doc".into(), Some(4)));
        assert!(prefixes
            .assemble(&past, &prefix, 3, stale.collect())
            .is_none());
        assert_eq!(prefixes.lock().deep.len(), 0);
        // So does a later revision seen by a page past the end.
        let far = sized(10, 700);
        prefixes.keep(&far, keys(2_400, 4)).unwrap();
        assert!(!prefixes.ended(&far, 4, 5));
        assert_eq!(prefixes.lock().deep.len(), 0);
        assert!(matches!(
            prefixes.next(&past, Dialect::Sqlite),
            PrefixStep::ReadPrefix(_)
        ));
    }

    #[test]
    fn few_deep_prefixes_are_kept() {
        let prefixes = OrderPrefixes::default();
        for seed in 0..(MAX_DEEP_LISTS + 3) {
            let page = PrefixedPage::of(&ContentQuery {
                entity: "Event",
                filters: vec![],
                order: ContentOrder::Seed(seed.to_string()),
                page: Page {
                    size: 10,
                    number: 101,
                },
                count_limit: None,
            })
            .unwrap();
            prefixes.keep(&page, keys(1_200, 1)).unwrap();
        }
        let kept = prefixes.lock();
        assert_eq!((kept.deep.len(), kept.near.len()), (MAX_DEEP_LISTS, 0));
    }

    #[test]
    fn a_next_begin_prefix_answers_only_within_the_span_it_was_read_for() {
        let prefixes = OrderPrefixes::default();
        let at = |now: &str| {
            PrefixedPage::of(&ContentQuery {
                entity: "Event",
                filters: vec![],
                order: ContentOrder::NextBegin {
                    descending: false,
                    now: now.into(),
                },
                page: Page { size: 2, number: 1 },
                count_limit: None,
            })
            .expect("a next-begin page within the prefix")
        };
        // Read at noon: the last range before ended at 11:00, the next ends at 17:00.
        let read = vec![PrefixRow {
            key: "a".into(),
            revision: Some(5),
            span: (
                Some("2026-11-30 11:00:00".into()),
                Some("2026-11-30 17:00:00".into()),
            ),
            total: 1,
        }];
        prefixes.keep(&at("2026-11-30 12:00:00"), read).unwrap();
        // (now, the kept prefix answers)
        let cases = [
            ("2026-11-30 12:00:00", true),
            ("2026-11-30 11:00:01", true),
            ("2026-11-30 17:00:00", true),
            ("2026-11-30 17:00:01", false),
            ("2026-11-30 11:00:00", false),
            ("2026-12-01 00:00:00", false),
        ];
        for (now, answers) in cases {
            assert_eq!(prefixes.kept(&at(now)).is_some(), answers, "{now}");
        }
    }
}
