//! The schema, declared once: every table of both backends, one file per table group
//! ([`content`], [`timeseries`], [`auth`]), each table's SQLite and PostgreSQL
//! `CREATE TABLE` side by side, each index described once and rendered for either
//! dialect. The migration lists (`crate::migrations` for SQLite,
//! `crate::postgres::migrations`) are ordered lists of [`Change`]s built from these
//! parts; the runners render them with [`render`].
//!
//! Owns: the DDL texts and the rendering of descriptions into SQL. Must not: run
//! anything, know connections or transactions (the runners do), or change a text a
//! released migration already applied: SQLite keeps each `CREATE` text verbatim in
//! `sqlite_master`, and a fresh store must end with exactly the schema an old one has
//! (`tests/schema.rs` holds both against recorded catalogues).

pub(crate) mod auth;
pub(crate) mod content;
pub(crate) mod timeseries;

/// Which backend a text is rendered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// A table's `CREATE TABLE` in both dialects (without the closing `;`). The two texts are
/// logical twins: same columns in the same order, same units (see the group files for
/// what PostgreSQL adds).
pub(crate) struct Table {
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

/// An index, described once. A plain B-tree index both dialects write identically;
/// one with an access method SQLite lacks (`using`: `gist`, `gin`) or marked `only`
/// exists in that one dialect.
pub(crate) struct Index {
    pub name: &'static str,
    pub table: &'static str,
    pub using: Option<&'static str>,
    pub only: Option<Dialect>,
    /// The column list as written between the parentheses.
    pub columns: &'static str,
}

/// One piece of a migration.
pub(crate) enum Part {
    Table(&'static Table),
    Index(&'static Index),
    /// Statements only one dialect has (triggers, backfills, extensions, functions),
    /// complete with their `;`.
    Only(Dialect, &'static str),
}

/// A schema change as the runners apply it: versions only grow, a released one is
/// never edited, a change is a new entry.
pub(crate) struct Change {
    pub version: i64,
    pub name: &'static str,
    pub parts: &'static [Part],
}

/// The `CREATE INDEX` statement (without `;`) for `index`; `None` where the dialect
/// has no such index (an access method SQLite lacks).
pub(crate) fn index_sql(index: &Index, dialect: Dialect) -> Option<String> {
    if index.only.is_some_and(|only| only != dialect) {
        return None;
    }
    match (index.using, dialect) {
        (None, _) => Some(format!(
            "CREATE INDEX {} ON {} ({})",
            index.name, index.table, index.columns
        )),
        (Some(method), Dialect::Postgres) => Some(format!(
            "CREATE INDEX {} ON {} USING {} ({})",
            index.name, index.table, method, index.columns
        )),
        (Some(_), Dialect::Sqlite) => None,
    }
}

/// The SQL batch of `parts` for `dialect`, statements in order. A part the dialect lacks
/// (the other dialect's statements, a PostgreSQL-only index) renders as nothing.
pub(crate) fn render(parts: &[Part], dialect: Dialect) -> String {
    let mut sql = String::new();
    for part in parts {
        let statement = match part {
            Part::Table(table) => Some(
                match dialect {
                    Dialect::Sqlite => table.sqlite,
                    Dialect::Postgres => table.postgres,
                }
                .to_string()
                    + ";",
            ),
            Part::Index(index) => index_sql(index, dialect).map(|s| s + ";"),
            Part::Only(only, text) if *only == dialect => Some(text.trim().to_string()),
            Part::Only(..) => None,
        };
        if let Some(statement) = statement {
            sql.push_str(&statement);
            sql.push('\n');
        }
    }
    sql
}

/// The column names a `CREATE TABLE` text declares, in order (table constraints and
/// comments left out). Lets a test hold the two dialects' texts to being twins.
#[cfg(test)]
fn column_names(create_table: &str) -> Vec<String> {
    let without_comments: Vec<&str> = create_table
        .lines()
        .map(|line| line.split("--").next().unwrap_or(""))
        .collect();
    let text = without_comments.join("\n");
    let body = &text[text.find('(').map_or(0, |i| i + 1)..text.rfind(')').unwrap_or(text.len())];
    // The body is cut at its top-level commas; ones inside parentheses belong to a
    // constraint's column list or an expression.
    let mut definitions = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                definitions.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    definitions.push(&body[start..]);
    const CONSTRAINTS: &[&str] = &["PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "CONSTRAINT"];
    definitions
        .into_iter()
        .filter_map(|d| d.split_whitespace().next())
        .filter(|word| !CONSTRAINTS.contains(word))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Index = Index {
        name: "t_ab",
        table: "t",
        using: None,
        only: None,
        columns: "a, b",
    };
    const PG_ONLY: Index = Index {
        name: "t_b",
        table: "t",
        using: None,
        only: Some(Dialect::Postgres),
        columns: "b",
    };
    const GIST: Index = Index {
        name: "t_geom",
        table: "t",
        using: Some("gist"),
        only: None,
        columns: "geom",
    };
    const T: Table = Table {
        sqlite: "CREATE TABLE t (a TEXT)",
        postgres: "CREATE TABLE t (a text)",
    };

    #[test]
    fn column_names_of_create_table_texts() {
        let cases: &[(&str, &[&str])] = &[
            ("CREATE TABLE t (a TEXT, b INTEGER)", &["a", "b"]),
            (
                "CREATE TABLE t (\n    a TEXT, -- one, (two)\n    b REAL,\n    UNIQUE (a, b)\n) WITHOUT ROWID",
                &["a", "b"],
            ),
            (
                "CREATE TABLE t (\n    g geometry GENERATED ALWAYS AS (f(x, y)) STORED,\n    PRIMARY KEY (g)\n)",
                &["g"],
            ),
            (
                "CREATE TABLE t (\n    minx REAL, miny REAL,\n    c text COLLATE \"C\" NOT NULL DEFAULT ''\n) PARTITION BY RANGE (minx)",
                &["minx", "miny", "c"],
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(column_names(text), *expected, "{text}");
        }
    }

    /// PostgreSQL's extra columns per table: generated geometry (never copied), the
    /// signing keys' rowid stand-in; `docb` came to SQLite's `content` by migration 7.
    const POSTGRES_EXTRAS: &[(&str, &[&str])] = &[
        ("content", &["docb", "geom"]),
        ("ts_station", &["pointprojection"]),
        ("ts_edge", &["linegeom"]),
        ("ts_location", &["geom"]),
        ("auth_signing_key", &["seq"]),
    ];
    const SQLITE_LATER: &[(&str, &[&str])] = &[("content", &["docb"])];

    #[test]
    fn both_dialects_declare_the_same_columns() {
        let tables = content::TABLES
            .iter()
            .chain(timeseries::TABLES)
            .chain(auth::TABLES);
        for table in tables {
            let name = table.sqlite.split_whitespace().nth(2).unwrap();
            let extras = |list: &[(&str, &'static [&'static str])]| {
                list.iter()
                    .find(|(t, _)| *t == name)
                    .map_or(&[][..], |(_, cols)| *cols)
                    .to_vec()
            };
            let mut sqlite = column_names(table.sqlite);
            sqlite.extend(extras(SQLITE_LATER).iter().map(|c| c.to_string()));
            let postgres: Vec<String> = column_names(table.postgres)
                .into_iter()
                .filter(|c| !extras(POSTGRES_EXTRAS).contains(&c.as_str()) || sqlite.contains(c))
                .collect();
            assert_eq!(sqlite, postgres, "{name}: same columns in the same order");
        }
    }

    #[test]
    fn index_statements_per_dialect() {
        let cases: &[(&Index, Dialect, Option<&str>)] = &[
            (
                &PLAIN,
                Dialect::Sqlite,
                Some("CREATE INDEX t_ab ON t (a, b)"),
            ),
            (
                &PLAIN,
                Dialect::Postgres,
                Some("CREATE INDEX t_ab ON t (a, b)"),
            ),
            (&GIST, Dialect::Sqlite, None),
            (&PG_ONLY, Dialect::Sqlite, None),
            (
                &PG_ONLY,
                Dialect::Postgres,
                Some("CREATE INDEX t_b ON t (b)"),
            ),
            (
                &GIST,
                Dialect::Postgres,
                Some("CREATE INDEX t_geom ON t USING gist (geom)"),
            ),
        ];
        for (index, dialect, expected) in cases {
            assert_eq!(
                index_sql(index, *dialect).as_deref(),
                *expected,
                "{} {dialect:?}",
                index.name
            );
        }
    }

    #[test]
    fn batches_per_dialect() {
        let parts = &[
            Part::Table(&T),
            Part::Index(&PLAIN),
            Part::Index(&GIST),
            Part::Only(Dialect::Sqlite, "\nCREATE TRIGGER x;\n"),
            Part::Only(Dialect::Postgres, "CREATE EXTENSION y;"),
        ];
        let cases = [
            (
                Dialect::Sqlite,
                "CREATE TABLE t (a TEXT);\nCREATE INDEX t_ab ON t (a, b);\nCREATE TRIGGER x;\n",
            ),
            (
                Dialect::Postgres,
                "CREATE TABLE t (a text);\nCREATE INDEX t_ab ON t (a, b);\n\
                 CREATE INDEX t_geom ON t USING gist (geom);\nCREATE EXTENSION y;\n",
            ),
        ];
        for (dialect, expected) in cases {
            assert_eq!(render(parts, dialect), expected, "{dialect:?}");
        }
    }
}
