//! `tagfilter` / `odhtagfilter`: lower-case tag ids, a bare comma list meaning OR,
//! `and(…)` / `or(…)` groups, several groups combined with AND (`and(a,b)or(c)`).
//! Tag ids may contain spaces (`electric charging stations`) and dots (`idm.hiking`).
//!
//! Compared with the reference: a repeated operator (`or(a)or(b)`) is two groups
//! combined with AND instead of silently dropping the whole filter, and unbalanced
//! parentheses or an unknown operator are errors with a position.

use super::rawfilter::RawFilterError;
use crate::sql::SqlBuilder;

/// Tags combined with AND (`all`) or OR.
#[derive(Debug, Clone, PartialEq)]
pub struct TagGroup {
    pub all: bool,
    pub tags: Vec<String>,
}

/// Groups combined with AND.
#[derive(Debug, Clone, PartialEq)]
pub struct TagFilter {
    pub groups: Vec<TagGroup>,
}

/// Longest tag filter, in characters; checked before parsing.
pub const MAX_TAGFILTER_CHARS: usize = 10_000;
/// Most tag ids in one tag filter (each is a bound value).
pub const MAX_TAGFILTER_TAGS: usize = 500;

/// Parses a tag filter; tag ids are lower-cased and trimmed, empty entries skipped.
pub fn parse_tagfilter(text: &str) -> Result<TagFilter, RawFilterError> {
    let chars: Vec<char> = text.chars().collect();
    let err = |i: usize, message: String| RawFilterError {
        position: i + 1,
        message,
    };
    if chars.len() > MAX_TAGFILTER_CHARS {
        return Err(err(
            MAX_TAGFILTER_CHARS,
            format!("the value is longer than {MAX_TAGFILTER_CHARS} characters"),
        ));
    }
    let tags = text
        .split([',', '(', ')'])
        .filter(|t| !t.trim().is_empty())
        .count();
    if tags > MAX_TAGFILTER_TAGS {
        return Err(err(
            0,
            format!("at most {MAX_TAGFILTER_TAGS} tag ids are accepted"),
        ));
    }
    if !chars.iter().any(|c| matches!(c, '(' | ')')) {
        let tags = split_tags(text);
        if tags.is_empty() {
            return Err(err(0, "expected a tag id".into()));
        }
        return Ok(TagFilter {
            groups: vec![TagGroup { all: false, tags }],
        });
    }
    let mut groups = Vec::new();
    let mut i = 0;
    loop {
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        let start = i;
        while chars.get(i).is_some_and(|c| c.is_ascii_alphabetic()) {
            i += 1;
        }
        let word: String = chars[start..i]
            .iter()
            .collect::<String>()
            .to_ascii_lowercase();
        let all = match word.as_str() {
            "and" => true,
            "or" => false,
            _ => {
                return Err(err(
                    start,
                    "expected and( or or( — a tag list with parentheses needs an operator".into(),
                ))
            }
        };
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if chars.get(i) != Some(&'(') {
            return Err(err(i, format!("expected '(' after {word}")));
        }
        let open = i;
        i += 1;
        let body_start = i;
        while let Some(c) = chars.get(i) {
            match c {
                ')' => break,
                '(' => {
                    return Err(err(
                        i,
                        "expected ')' before a new '(' (groups do not nest)".into(),
                    ))
                }
                _ => i += 1,
            }
        }
        if i >= chars.len() {
            return Err(err(
                chars.len(),
                format!("expected ')' closing the '(' at position {}", open + 1),
            ));
        }
        let body: String = chars[body_start..i].iter().collect();
        let tags = split_tags(&body);
        if tags.is_empty() {
            return Err(err(
                body_start,
                format!("expected a tag id inside {word}(…)"),
            ));
        }
        groups.push(TagGroup { all, tags });
        i += 1; // ')'
    }
    Ok(TagFilter { groups })
}

fn split_tags(text: &str) -> Vec<String> {
    let mut tags: Vec<String> = text
        .split(',')
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty())
        .collect();
    tags.dedup();
    tags
}

impl TagFilter {
    /// `c.id_key IN (…)` per group over `content_tag` rows of `kind`, AND-ed.
    pub fn compile(&self, q: &mut SqlBuilder, entity: &str, kind: &str) {
        q.sql("(");
        for (i, group) in self.groups.iter().enumerate() {
            if i > 0 {
                q.sql(" AND ");
            }
            let mut tags = group.tags.clone();
            tags.sort();
            tags.dedup();
            q.sql("c.id_key IN (");
            if group.all {
                // One primary-key range per tag, intersected: cheaper than grouping
                // every row of the entity's tags and counting.
                for (j, tag) in tags.iter().enumerate() {
                    if j > 0 {
                        q.sql(" INTERSECT ");
                    }
                    q.sql("SELECT t.id_key FROM content_tag t WHERE t.entity = ")
                        .text(entity)
                        .sql(" AND t.kind = ")
                        .text(kind)
                        .sql(" AND t.tag = ")
                        .text(tag.clone());
                }
            } else {
                q.sql("SELECT t.id_key FROM content_tag t WHERE t.entity = ")
                    .text(entity)
                    .sql(" AND t.kind = ")
                    .text(kind)
                    .sql(" AND t.tag IN ")
                    .list(tags.iter().cloned());
            }
            q.sql(")");
        }
        q.sql(")");
    }

    /// The same documents as [`TagFilter::compile`], tested per document: one primary-key
    /// probe of `content_tag` per tag of an `and` group, one per `or` group.
    pub fn compile_probe(&self, q: &mut SqlBuilder, entity: &str, kind: &str) {
        q.sql("(");
        let mut first = true;
        for group in &self.groups {
            let mut tags = group.tags.clone();
            tags.sort();
            tags.dedup();
            let probes: Vec<Vec<String>> = if group.all {
                tags.into_iter().map(|t| vec![t]).collect()
            } else {
                vec![tags]
            };
            for probe in probes {
                if !first {
                    q.sql(" AND ");
                }
                first = false;
                q.sql("EXISTS (SELECT 1 FROM content_tag t WHERE t.entity = ")
                    .text(entity)
                    .sql(" AND t.kind = ")
                    .text(kind)
                    .sql(" AND t.tag IN ")
                    .list(probe)
                    .sql(" AND t.id_key = c.id_key");
                super::walk::close_probe(q);
            }
        }
        if first {
            // No group (the parser never gives one): the same as `compile`'s `()`.
            q.sql("1 = 1");
        }
        q.sql(")");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(all: bool, tags: &[&str]) -> TagGroup {
        TagGroup {
            all,
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn parses_every_form() {
        let cases: &[(&str, Vec<TagGroup>)] = &[
            ("hiking", vec![group(false, &["hiking"])]),
            ("Hiking,Bike,", vec![group(false, &["hiking", "bike"])]),
            (
                "electric charging stations",
                vec![group(false, &["electric charging stations"])],
            ),
            ("idm.paragliding", vec![group(false, &["idm.paragliding"])]),
            ("or(hiking,bike)", vec![group(false, &["hiking", "bike"])]),
            (
                "and(hiking, summer)",
                vec![group(true, &["hiking", "summer"])],
            ),
            ("and(snowpark)", vec![group(true, &["snowpark"])]),
            (
                "and(a,b)or(c)",
                vec![group(true, &["a", "b"]), group(false, &["c"])],
            ),
            (
                "or(a) or(b)",
                vec![group(false, &["a"]), group(false, &["b"])],
            ),
            ("AND(a b,c)", vec![group(true, &["a b", "c"])]),
        ];
        for (input, groups) in cases {
            assert_eq!(parse_tagfilter(input).unwrap().groups, *groups, "{input}");
        }
    }

    #[test]
    fn rejects_malformed_filters_with_positions() {
        let cases = [
            ("and(a,b", 8, "expected ')'"),
            ("a)", 1, "needs an operator"),
            ("xor(a)", 1, "expected and( or or("),
            ("and(a)b", 7, "expected and( or or("),
            ("and(a(b))", 6, "do not nest"),
            ("and()", 5, "expected a tag id"),
            ("and(a))", 7, "expected and( or or("),
            ("and (a)x(", 8, "expected and("),
            (" , ", 1, "expected a tag id"),
            ("and a)", 5, "expected '('"),
        ];
        for (input, position, phrase) in cases {
            let e = parse_tagfilter(input).expect_err(input);
            assert_eq!(e.position, position, "{input}: {e}");
            assert!(e.message.contains(phrase), "{input}: {e}");
        }
    }

    #[test]
    fn compiles_groups_to_bound_subqueries() {
        let f = parse_tagfilter("and(b,a)or(c)").unwrap();
        let mut q = SqlBuilder::new(crate::Dialect::Sqlite);
        f.compile(&mut q, "HubActivityPoi", "tag");
        assert_eq!(
            q.as_sql(),
            "(c.id_key IN (SELECT t.id_key FROM content_tag t WHERE t.entity = ?1 AND t.kind = ?2 AND t.tag = ?3 \
             INTERSECT SELECT t.id_key FROM content_tag t WHERE t.entity = ?4 AND t.kind = ?5 AND t.tag = ?6) \
             AND c.id_key IN (SELECT t.id_key FROM content_tag t WHERE t.entity = ?7 AND t.kind = ?8 AND t.tag IN (?9)))"
        );
        assert_eq!(q.params()[2], crate::SqlValue::Text("a".into()));
        assert_eq!(q.params()[5], crate::SqlValue::Text("b".into()));
    }
}
