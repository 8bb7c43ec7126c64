//! Table tests of the filter language: every construct, and each error with its position.

use super::*;
use crate::content::checks::{CheckTable, FailedCheck, FoundType, QueryError};
use crate::content::rawfilter_sql::{compile_rawfilter, compile_rawsort};
use crate::{Dialect, SqlBuilder, SqlValue};

fn path(text: &str) -> JsonPath {
    parse_rawsort(text)
        .map(|mut k| k.remove(0).path)
        .unwrap_or_else(|_| {
            // Wildcard paths are not sortable; parse them through isnull.
            match parse_rawfilter(&format!("isnull({text})")).unwrap() {
                RawFilter::IsNull { mut path, .. } => {
                    path.position = 1;
                    path
                }
                _ => unreachable!(),
            }
        })
}

fn key(k: &str) -> PathSegment {
    PathSegment::Key(k.into())
}

#[test]
fn parses_every_construct() {
    use Literal::*;
    let cmp = |op, p: &str, value, position| RawFilter::Compare {
        op,
        path: JsonPath {
            position: 4,
            ..path(p)
        },
        value,
        position,
    };
    let cases: Vec<(&str, RawFilter)> = vec![
        (
            "eq(Active,true)",
            cmp(CompareOp::Eq, "Active", Bool(true), 11),
        ),
        (
            "ne(Active, false)",
            cmp(CompareOp::Ne, "Active", Bool(false), 12),
        ),
        (
            "gt(Altitude,1000)",
            cmp(CompareOp::Gt, "Altitude", Number(1000.0), 13),
        ),
        (
            "ge(Altitude,-2.5)",
            cmp(CompareOp::Ge, "Altitude", Number(-2.5), 13),
        ),
        (
            "lt(Altitude,1e3)",
            cmp(CompareOp::Lt, "Altitude", Number(1000.0), 13),
        ),
        (
            "le(Shortname,'Alm')",
            cmp(CompareOp::Le, "Shortname", Text("Alm".into()), 14),
        ),
        (
            "eq(Shortname,\"it's\")",
            cmp(CompareOp::Eq, "Shortname", Text("it's".into()), 14),
        ),
        (
            "ge(LastChange,dt'2024-01-02')",
            cmp(
                CompareOp::Ge,
                "LastChange",
                Date("2024-01-02 00:00:00".into()),
                15,
            ),
        ),
        (
            "lt(LastChange,dt\"2024-01-02T10:30:00+02:00\")",
            cmp(
                CompareOp::Lt,
                "LastChange",
                Date("2024-01-02 08:30:00".into()),
                15,
            ),
        ),
        (
            "eq(TagIds,[])",
            cmp(CompareOp::Eq, "TagIds", EmptyArray, 11),
        ),
        (
            "ne(TagIds,[*])",
            cmp(CompareOp::Ne, "TagIds", EmptyArray, 11),
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(parse_rawfilter(input).unwrap(), expected, "{input}");
    }

    match parse_rawfilter("and(eq(Active,true), or(like(Detail.de.Title,'hütte'), isnull(Note)),isnotnull(GpsInfo.0.Altitude))").unwrap() {
        RawFilter::And(parts) => {
            assert_eq!(parts.len(), 3);
            assert!(matches!(&parts[1], RawFilter::Or(o) if o.len() == 2));
            match &parts[2] {
                RawFilter::IsNull { path, negated: true } => {
                    assert_eq!(path.segments, vec![key("GpsInfo"), PathSegment::Index(0), key("Altitude")]);
                    assert_eq!(path.position, 80);
                }
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
    match parse_rawfilter("in(Features.[*].Id,'a', 'b',3)").unwrap() {
        RawFilter::In {
            path,
            values,
            negated: false,
        } => {
            assert_eq!(
                path.segments,
                vec![key("Features"), PathSegment::AnyElement, key("Id")]
            );
            assert_eq!(
                values,
                vec![Text("a".into()), Text("b".into()), Number(3.0)]
            );
        }
        other => panic!("{other:?}"),
    }
    match parse_rawfilter("NIN(Features[*].Id,'a')").unwrap() {
        RawFilter::In {
            path,
            negated: true,
            ..
        } => assert_eq!(
            path.segments,
            vec![key("Features"), PathSegment::AnyElement, key("Id")]
        ),
        other => panic!("{other:?}"),
    }
    match parse_rawfilter("likein(Tags[].Id,'^hik', 'bike$')").unwrap() {
        RawFilter::LikeIn { path, patterns } => {
            assert_eq!(
                path.segments,
                vec![key("Tags"), PathSegment::AnyElement, key("Id")]
            );
            assert_eq!(patterns, ["^hik", "bike$"]);
        }
        other => panic!("{other:?}"),
    }
    match parse_rawfilter("eq(GpsInfo[0].a-b_c@d,1)").unwrap() {
        RawFilter::Compare { path, .. } => assert_eq!(
            path.segments,
            vec![key("GpsInfo"), PathSegment::Index(0), key("a-b_c@d")]
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        parse_rawfilter("or(eq(a,1))").unwrap(),
        RawFilter::Or(vec![parse_rawfilter("eq(a,1)").unwrap().shifted(3)])
    );
}

impl RawFilter {
    /// The same filter as if written `by` characters further right.
    fn shifted(self, by: usize) -> RawFilter {
        match self {
            RawFilter::Compare {
                op,
                mut path,
                value,
                position,
            } => {
                path.position += by;
                RawFilter::Compare {
                    op,
                    path,
                    value,
                    position: position + by,
                }
            }
            other => other,
        }
    }
}

#[test]
fn rejects_malformed_expressions_with_positions() {
    let cases = [
        ("", 1, "found nothing"),
        ("xx(Active,true)", 1, "expected one of and, or"),
        ("eq Active", 4, "expected '(' after eq"),
        ("eq(Active true)", 11, "expected ','"),
        ("eq(Active,true", 15, "expected ')', found the end"),
        ("eq(Active,true))", 16, "the end of the expression"),
        ("eq(,true)", 4, "expected a field name"),
        ("eq(Detail..Title,1)", 11, "expected a field name"),
        ("eq([*].Id,1)", 4, "starts with a name"),
        ("eq(A[x],1)", 6, "[*], [] or [n]"),
        ("eq(A,maybe)", 6, "text values are quoted"),
        ("eq(A,'open)", 6, "unterminated quoted value"),
        ("eq(A,1.2.3)", 6, "'1.2.3' is not a number"),
        ("eq(A,dt'yesterday')", 9, "'yesterday' is not a date"),
        ("eq(A,)", 6, "expected a value"),
        ("gt(A,[])", 6, "only eq and ne"),
        ("like(A,1)", 8, "like takes a text value"),
        ("likein(A,'ok','(')", 15, "not a valid regular expression"),
        ("likein(A,true)", 10, "likein takes text values"),
        ("and(eq(a,1) eq(b,2))", 13, "expected ',' or ')'"),
        ("and()", 5, "expected one of"),
        ("in(A)", 5, "expected ','"),
        ("isnull(A,1)", 9, "expected ')'"),
        ("eq(A,1) x", 9, "the end of the expression"),
    ];
    for (input, position, phrase) in cases {
        let e = parse_rawfilter(input).unwrap_err();
        assert_eq!(e.position, position, "{input}: {e}");
        assert!(e.message.contains(phrase), "{input}: {e}");
    }
    let deep = format!("{}eq(a,1){}", "and(".repeat(40), ")".repeat(40));
    assert!(parse_rawfilter(&deep)
        .unwrap_err()
        .message
        .contains("nest at most"));
    let long = format!("eq(a,'{}')", "x".repeat(MAX_EXPRESSION_CHARS));
    assert_eq!(
        parse_rawfilter(&long).unwrap_err().position,
        MAX_EXPRESSION_CHARS + 1
    );
}

#[test]
fn odh_spellings_of_a_path_read_the_stored_field() {
    // (as written, stored segments)
    for (text, stored) in [
        (
            "ODHTags.[*].Id",
            vec![key("HubTags"), PathSegment::AnyElement, key("Id")],
        ),
        ("SmgTags", vec![key("SrcTags")]),
        ("HubTags", vec![key("HubTags")]),
        (
            "Detail.de.ODHTags",
            vec![key("Detail"), key("de"), key("HubTags")],
        ),
    ] {
        let parsed = path(text);
        assert_eq!(parsed.segments, stored, "{text}");
        assert_eq!(parsed.text, text, "the text stays as written");
    }
    let sort = parse_rawsort("-SmgActive").unwrap();
    assert_eq!(sort[0].path.segments, vec![key("SrcActive")]);
}

#[test]
fn parses_sort_lists() {
    let keys = parse_rawsort("-Altitude, Detail.de.Title,GpsInfo.0.Altitude").unwrap();
    assert_eq!(keys.len(), 3);
    assert!(keys[0].descending && !keys[1].descending);
    assert_eq!(
        keys[2].path.segments,
        vec![key("GpsInfo"), PathSegment::Index(0), key("Altitude")]
    );
    for (input, position, phrase) in [
        ("", 1, "found nothing"),
        ("a,", 3, "expected a field name"),
        ("a b", 3, "',' or the end"),
        ("Tags.[*].Id", 1, "cannot contain [*]"),
        ("-", 2, "field name"),
    ] {
        let e = parse_rawsort(input).unwrap_err();
        assert_eq!(
            (e.position, e.message.contains(phrase)),
            (position, true),
            "{input}: {e}"
        );
    }
}

fn sqlite(expr: &str) -> SqlBuilder {
    sqlite_with_checks(expr).0
}

fn sqlite_with_checks(expr: &str) -> (SqlBuilder, CheckTable) {
    let mut q = SqlBuilder::new(Dialect::Sqlite);
    let mut checks = CheckTable::default();
    compile_rawfilter(
        &mut q,
        &parse_rawfilter(expr).unwrap(),
        "rawfilter",
        &mut checks,
    );
    (q, checks)
}

#[test]
fn sqlite_binds_paths_and_values() {
    let (q, checks) = sqlite_with_checks("eq(Detail.de.Title,\"x'; drop table content\")");
    assert!(!q.as_sql().contains("drop"), "{}", q.as_sql());
    assert!(!q.as_sql().contains("Detail"), "{}", q.as_sql());
    assert_eq!(
        q.params()[0],
        SqlValue::Text("$.\"Detail\".\"de\".\"Title\"".into())
    );
    assert_eq!(
        q.as_sql(),
        "CASE WHEN hub_rf_check(json_type(c.docb, ?1), ?2, ?3) THEN json_extract(c.docb, ?4) = ?5 END"
    );
    // Only the check id reaches the database; parameter and position stay in the table.
    assert_eq!(q.params()[2], SqlValue::Int(1));
    assert!(!q.params().contains(&SqlValue::Text("rawfilter".into())));
    assert_eq!(
        checks.resolve(FailedCheck {
            id: 1,
            found: FoundType::Number
        }),
        Some(QueryError {
            parameter: "rawfilter".into(),
            position: 20,
            detail: "the field holds numbers but the value compared with it is a quoted text or a dt'…' date; write the value as the field's type".into(),
        })
    );

    let q = sqlite("in(Features.[*].Id,'a')");
    assert!(
        q.as_sql()
            .starts_with("COALESCE(EXISTS (SELECT 1 FROM json_each(c.docb, ?1) j1 WHERE "),
        "{}",
        q.as_sql()
    );
    let q = sqlite("or(eq(a,1),eq(b,true))");
    assert!(q.as_sql().starts_with("(CASE WHEN") && q.as_sql().contains(" OR CASE WHEN"));
}

#[test]
fn postgres_reads_docb_with_bound_paths_and_typed_guards() {
    let mut q = SqlBuilder::new(Dialect::Postgres);
    let mut checks = CheckTable::default();
    compile_rawfilter(
        &mut q,
        &parse_rawfilter("and(eq(Active,true),in(HasLanguage,'de'),like(Shortname,'50%'),eq(GpsInfo.0.Altitude,1))").unwrap(),
        "expression",
        &mut checks,
    );
    let sql = q.as_sql();
    assert!(
        !sql.contains("c.doc ") && !sql.contains("50%") && !sql.contains("'de'"),
        "{sql}"
    );
    assert!(
        sql.starts_with(
            "((SELECT CASE jsonb_typeof(j1.v) WHEN 'boolean' THEN (j1.v)::boolean = $1 \
             WHEN 'null' THEN NULL ELSE hub_rf_fail($2, jsonb_typeof(j1.v)) END \
             FROM (SELECT (c.docb #> ($3::text)::text[]) AS v OFFSET 0) AS j1) \
             AND (c.docb @> $4::jsonb OR c.docb @> $5::jsonb) AND (SELECT CASE WHEN "
        ),
        "{sql}"
    );
    assert_eq!(q.params()[0], SqlValue::Bool(true));
    assert_eq!(q.params()[1], SqlValue::Int(1));
    assert!(!q.params().contains(&SqlValue::Text("expression".into())));
    let failed = |id| {
        checks
            .resolve(FailedCheck {
                id,
                found: FoundType::Text,
            })
            .map(|e| (e.parameter, e.position))
    };
    assert_eq!(failed(1), Some(("expression".to_string(), 15)));
    assert_eq!(failed(2), Some(("expression".to_string(), 86)));
    assert_eq!(failed(3), None);
    assert_eq!(q.params()[2], SqlValue::Text("{\"Active\"}".into()));
    assert_eq!(
        q.params()[3],
        SqlValue::Text("{\"HasLanguage\":\"de\"}".into())
    );
    assert_eq!(
        q.params()[4],
        SqlValue::Text("{\"HasLanguage\":[\"de\"]}".into())
    );
    assert!(sql.contains("strpos(hub_fold("), "{sql}");
    assert!(q.params().contains(&SqlValue::Text("50%".into())));
    // An index segment reads through a strict jsonpath (no key "0" of an object).
    assert!(sql.contains("jsonb_path_query_first(c.docb, ("), "{sql}");
    assert!(q.params().contains(&SqlValue::Text(
        "strict $.\"GpsInfo\"[0].\"Altitude\"".into()
    )));

    let mut q = SqlBuilder::new(Dialect::Postgres);
    compile_rawfilter(
        &mut q,
        &parse_rawfilter("in(Features.[*].Id,'a')").unwrap(),
        "rawfilter",
        &mut CheckTable::default(),
    );
    assert!(
        q.as_sql().starts_with(
            "COALESCE((SELECT EXISTS (SELECT 1 FROM hub_rf_each(j1.v) AS j2(v) WHERE "
        ),
        "{}",
        q.as_sql()
    );
}

#[test]
fn regex_patterns_are_translated_for_postgres() {
    assert_eq!(
        crate::content::rawfilter_pg::pg_regex_for_tests(r"\bal.x\z"),
        r"\yal[^\n]x\Z"
    );
    assert_eq!(
        crate::content::rawfilter_pg::pg_regex_for_tests(r"(?P<n>a)[.\b]"),
        r"(a)[.\b]"
    );
    assert_eq!(
        crate::content::rawfilter_pg::pg_regex_for_tests(r"[]a.]\."),
        r"[]a.]\."
    );
}

#[test]
fn sort_keys_put_missing_values_last() {
    let keys = parse_rawsort("-Altitude").unwrap();
    let mut q = SqlBuilder::new(Dialect::Sqlite);
    compile_rawsort(&mut q, &keys);
    assert_eq!(
        q.as_sql(),
        "json_extract(c.docb, ?1) IS NULL ASC, json_extract(c.docb, ?2) DESC, "
    );
    // A name reads its column, and the document only where the column is NULL.
    let mut q = SqlBuilder::new(Dialect::Sqlite);
    compile_rawsort(&mut q, &parse_rawsort("Shortname").unwrap());
    let name = "COALESCE(c.shortname, (SELECT json_extract(d.docb, ?1) FROM content d WHERE d.rowid = c.rowid))";
    assert!(
        q.as_sql().starts_with(&format!("{name} IS NULL ASC, ")),
        "{}",
        q.as_sql()
    );
    let mut p = SqlBuilder::new(Dialect::Postgres);
    compile_rawsort(&mut p, &keys);
    let sql = p.as_sql();
    assert!(
        sql.starts_with("(SELECT ROW(COALESCE(t, 'null') <> 'null', CASE t "),
        "{sql}"
    );
    assert!(sql.ends_with("FROM (SELECT v, jsonb_typeof(v) AS t FROM (SELECT (c.docb #> ($3::text)::text[]) AS v OFFSET 0) AS a) AS b) DESC, "), "{sql}");
    assert_eq!(p.params()[2], SqlValue::Text("{\"Altitude\"}".into()));
}

/// Size limits of the other list parsers: input → refused (true) or accepted (false).
#[test]
fn list_parser_size_limits() {
    use crate::content::rawfilter::MAX_SORT_KEYS;
    use crate::content::tagfilter::{parse_tagfilter, MAX_TAGFILTER_TAGS};
    use crate::fields::{parse_fields, MAX_FIELDS};
    let n = |item: &str, count: usize| vec![item; count].join(",");
    for (input, refused) in [
        (n("Id", MAX_SORT_KEYS), false),
        (n("Id", MAX_SORT_KEYS + 1), true),
    ] {
        assert_eq!(
            parse_rawsort(&input).is_err(),
            refused,
            "rawsort ×{}",
            input.len()
        );
    }
    for (input, refused) in [
        (n("a", MAX_TAGFILTER_TAGS), false),
        (n("a", MAX_TAGFILTER_TAGS + 1), true),
        (format!("and({})", n("a", MAX_TAGFILTER_TAGS + 1)), true),
        ("x".repeat(10_001), true),
    ] {
        assert_eq!(
            parse_tagfilter(&input).is_err(),
            refused,
            "tagfilter ×{}",
            input.len()
        );
    }
    for (input, refused) in [
        (n("Id", MAX_FIELDS), false),
        (n("Id", MAX_FIELDS + 1), true),
        ("a".repeat(10_001), true),
    ] {
        assert_eq!(
            parse_fields(&input).is_err(),
            refused,
            "fields ×{}",
            input.len()
        );
    }
}
