//! Values kept per list between requests (`content::bookmarks`, `content::prefixes`),
//! bounded: a list is named by its scope (an entity, or a client's filters), and when
//! the lists are full the one used longest ago makes room for a new one.
//!
//! Owns: the bound and the order of use. Must not: know what is kept.

use std::collections::HashMap;

pub(crate) struct KeptLists<V> {
    lists: HashMap<String, (V, u64)>,
    /// Counts uses, to find the list used longest ago.
    clock: u64,
    max: usize,
}

impl<V> KeptLists<V> {
    pub(crate) fn new(max: usize) -> Self {
        KeptLists {
            lists: HashMap::new(),
            clock: 0,
            max,
        }
    }

    /// The value of `scope`, marked as used now.
    pub(crate) fn used(&mut self, scope: &str) -> Option<&mut V> {
        self.clock += 1;
        let now = self.clock;
        let (value, used) = self.lists.get_mut(scope)?;
        *used = now;
        Some(value)
    }

    /// The value of `scope`, as it is.
    pub(crate) fn get(&self, scope: &str) -> Option<&V> {
        self.lists.get(scope).map(|(value, _)| value)
    }

    /// Keeps `value` for `scope`, dropping the list used longest ago when full.
    pub(crate) fn insert(&mut self, scope: &str, value: V) {
        if self.lists.len() >= self.max && !self.lists.contains_key(scope) {
            let oldest = self.lists.iter().min_by_key(|(_, (_, used))| *used);
            if let Some(oldest) = oldest.map(|(scope, _)| scope.clone()) {
                self.lists.remove(&oldest);
            }
        }
        self.clock += 1;
        self.lists.insert(scope.to_string(), (value, self.clock));
    }

    pub(crate) fn remove(&mut self, scope: &str) {
        self.lists.remove(scope);
    }

    /// Drops the value of `scope` when `stale` says it is out of date.
    pub(crate) fn remove_if(&mut self, scope: &str, stale: impl FnOnce(&V) -> bool) {
        if self.get(scope).is_some_and(stale) {
            self.lists.remove(scope);
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lists.len()
    }
}
