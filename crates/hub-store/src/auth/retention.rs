//! Which signing keys a store keeps: the active one and its predecessors up to a
//! count, so tokens signed before a rotation keep verifying. Both backends list their
//! keys newest first and delete what this module retires.
//!
//! Owns: the retention rule. Must not: touch a connection.

/// The key ids to delete from `newest_first` so that only the `keep` newest remain.
pub fn retired_signing_keys(newest_first: &[String], keep: usize) -> &[String] {
    &newest_first[keep.min(newest_first.len())..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_newest_keys_are_kept() {
        let kids = |list: &[&str]| list.iter().map(|k| k.to_string()).collect::<Vec<_>>();
        // (keys newest first, keep, expected retired)
        let table: &[(&[&str], usize, &[&str])] = &[
            (&[], 2, &[]),
            (&["a"], 2, &[]),
            (&["a", "b"], 2, &[]),
            (&["a", "b", "c"], 2, &["c"]),
            (&["a", "b", "c", "d"], 2, &["c", "d"]),
            (&["a", "b"], 1, &["b"]),
            (&["a", "b"], 0, &["a", "b"]),
        ];
        for (keys, keep, expected) in table {
            assert_eq!(
                retired_signing_keys(&kids(keys), *keep),
                kids(expected),
                "{keys:?} keep {keep}"
            );
        }
    }
}
