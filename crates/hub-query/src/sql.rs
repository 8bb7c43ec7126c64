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

/// The document column, `doc` of the row alias `c` of `content`.
pub const DOCUMENT_COLUMN: &str = "c.doc";

/// Accumulates SQL text and its parameters; placeholders are numbered per dialect
/// (`?1` for SQLite, `$1` for PostgreSQL).
#[derive(Debug, Clone)]
pub struct SqlBuilder {
    pub dialect: Dialect,
    sql: String,
    params: Vec<SqlValue>,
    /// Where [`SqlBuilder::document`] wrote the document column, if it did.
    document_at: Option<usize>,
}

impl SqlBuilder {
    pub fn new(dialect: Dialect) -> Self {
        SqlBuilder {
            dialect,
            sql: String::with_capacity(256),
            params: Vec::new(),
            document_at: None,
        }
    }

    /// Appends [`DOCUMENT_COLUMN`], the document of the row alias `c` of `content`, as a
    /// column of the statement's result, and remembers where: a backend that keeps
    /// documents it has read may select their key instead
    /// ([`SqlBuilder::with_document_replaced`]). At most one per statement.
    pub fn document(&mut self) -> &mut Self {
        self.document_at = Some(self.sql.len());
        self.sql.push_str(DOCUMENT_COLUMN);
        self
    }

    /// The statement's text with the column [`SqlBuilder::document`] wrote replaced by
    /// `columns` (trusted SQL over the same alias `c`); `None` when it wrote none. The
    /// parameters are unchanged.
    pub fn with_document_replaced(&self, columns: &str) -> Option<String> {
        let at = self.document_at?;
        let mut sql = String::with_capacity(self.sql.len() + columns.len());
        sql.push_str(&self.sql[..at]);
        sql.push_str(columns);
        sql.push_str(&self.sql[at + DOCUMENT_COLUMN.len()..]);
        Some(sql)
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
        if let Some(at) = self.document_at {
            if range.start < at + DOCUMENT_COLUMN.len() && at < range.end {
                self.document_at = None;
            } else if range.end <= at {
                self.document_at = Some(at - range.len() + text.len());
            }
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

    #[test]
    fn the_document_column_can_be_replaced_where_it_was_written() {
        let mut q = SqlBuilder::new(Dialect::Postgres);
        q.sql("SELECT ")
            .document()
            .sql(", c.docb FROM content c WHERE c.id_key = ")
            .text("a");
        assert_eq!(
            q.with_document_replaced("c.id_key").as_deref(),
            Some("SELECT c.id_key, c.docb FROM content c WHERE c.id_key = $1")
        );
        assert_eq!(
            q.as_sql(),
            "SELECT c.doc, c.docb FROM content c WHERE c.id_key = $1"
        );
        // A statement that wrote no document column by name has nothing to replace.
        let mut plain = SqlBuilder::new(Dialect::Postgres);
        plain.sql("SELECT c.doc FROM content c");
        assert_eq!(plain.with_document_replaced("c.id_key"), None);
    }

    #[test]
    fn replacing_text_keeps_the_document_column_found() {
        let mut q = SqlBuilder::new(Dialect::Sqlite);
        q.sql("SELECT x, ").document().sql(" FROM content c");
        // Before the column: its place moves with the text.
        q.replace_text(7..8, "longer_x").unwrap();
        assert_eq!(q.as_sql(), "SELECT longer_x, c.doc FROM content c");
        assert_eq!(
            q.with_document_replaced("k").as_deref(),
            Some("SELECT longer_x, k FROM content c")
        );
        // After it: unchanged.
        q.replace_text(28..37, "t").unwrap();
        assert_eq!(
            q.with_document_replaced("k").as_deref(),
            Some("SELECT longer_x, k FROM t")
        );
        // Over it: forgotten rather than pointing into other text.
        q.replace_text(17..22, "c.other").unwrap();
        assert_eq!(q.with_document_replaced("k"), None);
    }
}
