//! A map that holds at most a budget of bytes, dropping the entries used longest ago
//! to make room: what the PostgreSQL document cache (`content::document_cache`) and
//! the Content API's response cache keep their entries in.
//!
//! Owns: the order of use and the budget's arithmetic. Must not: know what an entry
//! is or costs (its owner says, per insert), or lock (its owner holds it in a mutex).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::Arc;

struct Slot<V> {
    value: V,
    tick: u64,
    cost: usize,
}

/// Entries by key, each with the cost its owner gave it, least recently used first.
pub struct BudgetLru<K, V> {
    entries: HashMap<Arc<K>, Slot<V>>,
    /// Least recently used first.
    order: BTreeMap<u64, Arc<K>>,
    used: usize,
    next_tick: u64,
}

impl<K, V> Default for BudgetLru<K, V> {
    fn default() -> Self {
        BudgetLru {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            used: 0,
            next_tick: 0,
        }
    }
}

impl<K: Hash + Eq, V> BudgetLru<K, V> {
    /// The entry of `key`, now the most recently used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        let slot = self.entries.get_mut(key)?;
        self.next_tick += 1;
        let shared = self.order.remove(&slot.tick)?;
        slot.tick = self.next_tick;
        self.order.insert(slot.tick, shared);
        Some(&slot.value)
    }

    pub fn remove(&mut self, key: &K) {
        if let Some(slot) = self.entries.remove(key) {
            self.order.remove(&slot.tick);
            self.used -= slot.cost;
        }
    }

    /// Keeps `value` for `key` (replacing its entry) at `cost`, dropping the entries
    /// used longest ago until the total is within `budget`. A value costing more than
    /// the whole budget is not kept (the entry it replaces goes all the same).
    pub fn insert(&mut self, key: K, value: V, cost: usize, budget: usize) {
        self.remove(&key);
        if cost > budget {
            return;
        }
        while self.used + cost > budget {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some(evicted) = self.entries.remove(&oldest) {
                self.used -= evicted.cost;
            }
        }
        self.next_tick += 1;
        let key = Arc::new(key);
        self.used += cost;
        self.order.insert(self.next_tick, key.clone());
        self.entries.insert(
            key,
            Slot {
                value,
                tick: self.next_tick,
                cost,
            },
        );
    }

    /// The cost of every entry held.
    pub fn used(&self) -> usize {
        self.used
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn contains(&self, key: &K) -> bool {
        self.entries.contains_key(key)
    }
}
