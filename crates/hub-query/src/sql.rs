//! Dialect-aware SQL text with bound parameters.

/// The SQL dialects Hub compiles to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// A value bound to a placeholder.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    Null,
    Bool(bool),
    Int(i64),
    Real(f64),
    Text(String),
}

/// Accumulates SQL text and its parameters; placeholders are numbered per dialect
/// (`?1` for SQLite, `$1` for PostgreSQL).
#[derive(Debug, Clone)]
pub struct SqlBuilder {
    pub dialect: Dialect,
    sql: String,
    params: Vec<SqlValue>,
}

impl SqlBuilder {
    pub fn new(dialect: Dialect) -> Self {
        SqlBuilder {
            dialect,
            sql: String::with_capacity(256),
            params: Vec::new(),
        }
    }

    /// Appends trusted SQL text (never client input).
    pub fn sql(&mut self, text: &str) -> &mut Self {
        self.sql.push_str(text);
        self
    }

    /// Appends a placeholder bound to `value`.
    pub fn param(&mut self, value: SqlValue) -> &mut Self {
        self.params.push(value);
        let n = self.params.len();
        match self.dialect {
            Dialect::Sqlite => self.sql.push_str(&format!("?{n}")),
            Dialect::Postgres => self.sql.push_str(&format!("${n}")),
        }
        self
    }

    pub fn text(&mut self, value: impl Into<String>) -> &mut Self {
        self.param(SqlValue::Text(value.into()))
    }

    /// Appends `(p1, p2, …)` bound to `values`.
    pub fn list<I, S>(&mut self, values: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.sql("(");
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                self.sql(", ");
            }
            self.text(v);
        }
        self.sql(")")
    }

    /// Appends a boolean literal the dialect understands.
    pub fn bool_param(&mut self, value: bool) -> &mut Self {
        match self.dialect {
            Dialect::Sqlite => self.param(SqlValue::Int(value as i64)),
            Dialect::Postgres => self.param(SqlValue::Bool(value)),
        }
    }

    pub fn as_sql(&self) -> &str {
        &self.sql
    }

    pub fn params(&self) -> &[SqlValue] {
        &self.params
    }

    /// Replaces the trusted text in `range` (a part without placeholders, so the
    /// parameters keep their numbers); `None` when the range holds a placeholder or is
    /// not within the text.
    pub fn replace_text(&mut self, range: std::ops::Range<usize>, text: &str) -> Option<()> {
        let part = self.sql.get(range.clone())?;
        let marker = match self.dialect {
            Dialect::Sqlite => '?',
            Dialect::Postgres => '$',
        };
        if part.contains(marker) {
            return None;
        }
        self.sql.replace_range(range, text);
        Some(())
    }

    pub fn into_parts(self) -> (String, Vec<SqlValue>) {
        (self.sql, self.params)
    }
}

/// Escapes `%`, `_` and the escape character itself for a `LIKE … ESCAPE '\'` pattern,
/// so a search term matches literally.
pub fn escape_like(term: &str) -> String {
    let mut out = String::with_capacity(term.len() + 2);
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_follow_the_dialect() {
        let mut s = SqlBuilder::new(Dialect::Sqlite);
        s.sql("a = ").text("x").sql(" AND b IN ").list(["1", "2"]);
        assert_eq!(s.as_sql(), "a = ?1 AND b IN (?2, ?3)");
        let mut p = SqlBuilder::new(Dialect::Postgres);
        p.sql("a = ").text("x").sql(" AND b IN ").list(["1", "2"]);
        assert_eq!(p.as_sql(), "a = $1 AND b IN ($2, $3)");
        assert_eq!(p.params().len(), 3);
    }

    #[test]
    fn like_escaping_makes_wildcards_literal() {
        assert_eq!(escape_like("50%_off\\"), "50\\%\\_off\\\\");
    }
}
