//! Checks a compiled query leaves to the database, and how a failed one becomes a
//! client error without any text of the query travelling through SQL.
//!
//! Owns: the side table a compilation fills ([`CheckTable`]: check id → query
//! parameter, position of the literal, the literal's type), the closed set of JSON
//! types a database reports ([`FoundType`]), and the pure mapping of a failed check to
//! [`QueryError`]. Must not: run SQL or know a backend; the store reports a failure as a
//! check id plus the JSON type it found, and nothing else.
//!
//! Why: the only fault of a query that depends on the data is a `rawfilter` comparison
//! whose field holds another JSON type than the value compared with it. Everything else
//! (syntax, regular expressions, literal types) is rejected while parsing. The database
//! raises only a small number (the check id); the parameter name and position stay here.

use thiserror::Error;

use super::rawfilter::Literal;

/// A client fault found while a query runs: which parameter, where in it, and why.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{parameter}: {detail} (at position {position})")]
pub struct QueryError {
    /// The query parameter the expression came from (`rawfilter`, `expression`, …).
    pub parameter: String,
    /// 1-based character position in that parameter's text.
    pub position: usize,
    pub detail: String,
}

/// The JSON type of a stored value, as a database reports it (SQLite's `json_type`
/// names and PostgreSQL's `jsonb_typeof` names both map here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundType {
    Boolean,
    Number,
    Text,
    Array,
    Object,
}

impl FoundType {
    /// From SQLite's `json_type` or PostgreSQL's `jsonb_typeof` name; `None` for JSON
    /// null, a missing value or an unknown name.
    pub fn from_database_name(name: &str) -> Option<FoundType> {
        Some(match name {
            "true" | "false" | "boolean" => FoundType::Boolean,
            "integer" | "real" | "number" => FoundType::Number,
            "text" | "string" => FoundType::Text,
            "array" => FoundType::Array,
            "object" => FoundType::Object,
            _ => return None,
        })
    }

    fn plural(self) -> &'static str {
        match self {
            FoundType::Boolean => "booleans",
            FoundType::Number => "numbers",
            FoundType::Text => "text",
            FoundType::Array => "an array",
            FoundType::Object => "an object",
        }
    }
}

/// One check the database runs: the literal at `position` of `parameter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryCheck {
    pub parameter: &'static str,
    pub position: usize,
    /// How the message names the literal's type ("a number", …).
    pub wanted: &'static str,
}

/// How an error message names the type of a comparison's literal.
pub fn wanted_description(value: &Literal) -> &'static str {
    match value {
        Literal::Bool(_) => "a boolean (true or false)",
        Literal::Number(_) => "a number",
        Literal::Text(_) | Literal::Date(_) => "a quoted text or a dt'…' date",
        Literal::EmptyArray => "[]",
    }
}

/// What the database reported: check `id` failed on a value of type `found`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailedCheck {
    pub id: u32,
    pub found: FoundType,
}

/// The checks of one compiled query, in compilation order; ids start at 1.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckTable {
    checks: Vec<QueryCheck>,
    /// Parameters whose text was compiled, in order (for faults no check names).
    parameters: Vec<&'static str>,
}

impl CheckTable {
    /// Registers a check and returns the id the SQL passes to the database.
    pub fn register(&mut self, check: QueryCheck) -> u32 {
        self.checks.push(check);
        self.checks.len() as u32
    }

    /// Records that text of `parameter` was compiled into the query.
    pub fn note_parameter(&mut self, parameter: &'static str) {
        if !self.parameters.contains(&parameter) {
            self.parameters.push(parameter);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.checks.is_empty() && self.parameters.is_empty()
    }

    /// The client error for a failed check; `None` for an id this query never issued
    /// (the store then treats the failure as its own).
    pub fn resolve(&self, failed: FailedCheck) -> Option<QueryError> {
        let check = self.checks.get((failed.id as usize).checked_sub(1)?)?;
        Some(QueryError {
            parameter: check.parameter.to_string(),
            position: check.position,
            detail: format!(
                "the field holds {} but the value compared with it is {}; write the value as the field's type",
                failed.found.plural(),
                check.wanted
            ),
        })
    }

    /// A value of a filter the database could not use although the filter parsed (a
    /// pattern or number PostgreSQL refuses): blamed on the first compiled parameter,
    /// from its start, since no check points closer. `None` when the query compiled
    /// no client expression (then the fault is the server's).
    pub fn unusable_value(&self, database_message: &str) -> Option<QueryError> {
        let parameter = self.parameters.first()?;
        Some(QueryError {
            parameter: parameter.to_string(),
            position: 1,
            detail: format!(
                "a value of the filter cannot be used on this server: {database_message}"
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> CheckTable {
        let mut t = CheckTable::default();
        t.note_parameter("expression");
        t.register(QueryCheck {
            parameter: "expression",
            position: 26,
            wanted: "a number",
        });
        t.register(QueryCheck {
            parameter: "rawfilter",
            position: 11,
            wanted: "a boolean (true or false)",
        });
        t
    }

    #[test]
    fn failed_checks_resolve_to_their_parameter_and_position() {
        let cases = [
            (1, FoundType::Text, Some(("expression", 26, "the field holds text but the value compared with it is a number; write the value as the field's type"))),
            (2, FoundType::Number, Some(("rawfilter", 11, "the field holds numbers but the value compared with it is a boolean (true or false); write the value as the field's type"))),
            (2, FoundType::Object, Some(("rawfilter", 11, "the field holds an object but the value compared with it is a boolean (true or false); write the value as the field's type"))),
            (0, FoundType::Text, None),
            (3, FoundType::Text, None),
        ];
        for (id, found, expected) in cases {
            let got = table().resolve(FailedCheck { id, found });
            let expected = expected.map(|(p, pos, d)| QueryError {
                parameter: p.into(),
                position: pos,
                detail: d.into(),
            });
            assert_eq!(got, expected, "check {id}");
        }
    }

    #[test]
    fn database_type_names_map_to_found_types() {
        let cases = [
            ("true", Some(FoundType::Boolean)),
            ("false", Some(FoundType::Boolean)),
            ("boolean", Some(FoundType::Boolean)),
            ("integer", Some(FoundType::Number)),
            ("real", Some(FoundType::Number)),
            ("number", Some(FoundType::Number)),
            ("text", Some(FoundType::Text)),
            ("string", Some(FoundType::Text)),
            ("array", Some(FoundType::Array)),
            ("object", Some(FoundType::Object)),
            ("null", None),
            ("", None),
        ];
        for (name, expected) in cases {
            assert_eq!(FoundType::from_database_name(name), expected, "{name}");
        }
    }

    #[test]
    fn unusable_values_blame_the_first_compiled_parameter() {
        assert_eq!(
            table().unusable_value("bad"),
            Some(QueryError {
                parameter: "expression".into(),
                position: 1,
                detail: "a value of the filter cannot be used on this server: bad".into(),
            })
        );
        assert_eq!(CheckTable::default().unusable_value("bad"), None);
    }
}
