//! The `select` parameter: a comma list of output names, pointer names and JSON paths
//! (`smetadata.capacity`), expanded against the route's scope as the reference does.

use std::collections::BTreeSet;

use super::schema::{field, fields, pointer, DefList, Field};
use super::TsQueryError;

/// One selected output: a field, optionally with a JSON path into it.
#[derive(Debug, Clone)]
pub struct Target {
    pub field: &'static Field,
    pub json_path: Option<String>,
}

impl Target {
    /// The output key: the name, or `name.path` for a JSON path.
    pub fn key(&self) -> String {
        match &self.json_path {
            Some(p) => format!("{}.{}", self.field.name, p),
            None => self.field.name.clone(),
        }
    }
}

/// Longest `select` accepted, in characters.
pub const MAX_SELECT_CHARS: usize = 4000;
/// Most comma-separated targets in one `select`.
pub const MAX_SELECT_TARGETS: usize = 200;

/// Refuses a `select` over [`MAX_SELECT_CHARS`] or [`MAX_SELECT_TARGETS`] (pure, before any work).
pub fn check_select_size(text: &str) -> Result<(), TsQueryError> {
    let limit = |detail: String| {
        Err(TsQueryError::Limit {
            parameter: "select",
            detail,
        })
    };
    let chars = text.chars().count();
    if chars > MAX_SELECT_CHARS {
        return limit(format!(
            "'select' has {chars} characters; at most {MAX_SELECT_CHARS} are accepted"
        ));
    }
    let targets = text.split(',').count();
    if targets > MAX_SELECT_TARGETS {
        return limit(format!(
            "'select' has {targets} targets; at most {MAX_SELECT_TARGETS} are accepted"
        ));
    }
    Ok(())
}

/// Expands `select` (None or empty = everything) against `scope`; targets are in
/// alphabetical order of their keys, without duplicates.
pub fn expand_select(select: Option<&str>, scope: &[DefList]) -> Result<Vec<Target>, TsQueryError> {
    let in_scope = |f: &Field| scope.contains(&f.list);
    let all = || {
        fields()
            .iter()
            .filter(|f| in_scope(f))
            .map(|f| Target {
                field: f,
                json_path: None,
            })
            .collect::<Vec<_>>()
    };
    let text = select.map(str::trim).unwrap_or("");
    check_select_size(text)?;
    if text.is_empty() {
        return Ok(sorted(all()));
    }
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    if items.contains(&"*") {
        return Ok(sorted(all()));
    }
    let mut out = Vec::new();
    for item in items {
        if item.is_empty()
            || !item
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            return Err(TsQueryError::SelectInvalid(item.to_string()));
        }
        let (name, path) = match item.split_once('.') {
            Some((n, p)) => (n, Some(p.to_string())),
            None => (item, None),
        };
        if let Some(lists) = pointer(name) {
            if path.is_none() {
                out.extend(
                    fields()
                        .iter()
                        .filter(|f| lists.contains(&f.list) && in_scope(f))
                        .map(|f| Target {
                            field: f,
                            json_path: None,
                        }),
                );
                continue;
            }
        }
        match field(name) {
            Some(f) if in_scope(f) => out.push(Target {
                field: f,
                json_path: path,
            }),
            _ => {
                let lists: Vec<&str> = scope.iter().map(|l| l.name()).collect();
                return Err(TsQueryError::SelectKey {
                    name: name.to_string(),
                    lists: lists.join(", "),
                });
            }
        }
    }
    Ok(sorted(out))
}

fn sorted(mut v: Vec<Target>) -> Vec<Target> {
    v.sort_by_key(|t| t.key());
    let mut seen = BTreeSet::new();
    v.retain(|t| seen.insert(t.key()));
    v
}

#[cfg(test)]
mod size_tests {
    use super::*;

    #[test]
    fn select_size_limits() {
        let many = vec!["a"; MAX_SELECT_TARGETS + 1].join(",");
        let long = "a".repeat(MAX_SELECT_CHARS + 1);
        for (input, ok) in [
            ("sname,mvalue", true),
            (&vec!["a"; MAX_SELECT_TARGETS].join(",")[..], true),
            (&many[..], false),
            (&long[..], false),
        ] {
            assert_eq!(
                check_select_size(input).is_ok(),
                ok,
                "{}",
                &input[..10.min(input.len())]
            );
        }
    }
}
