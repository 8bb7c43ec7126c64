//! Table tests: the reference's unit tests and the extra cases of the reference study
//! (§3.6–§3.7), with the same accept/reject decisions, ASTs and error positions.

use super::parser::{parse_where, Typed};
use super::query::{compile_query, Route, TsQuery};
use super::*;
use crate::Dialect;

fn ast(input: &str) -> String {
    match parse_where(input) {
        Ok(w) => w.format(),
        Err(e) => format!("ERR {e}"),
    }
}

fn clause(body: &str) -> String {
    format!("AND{{CLAUSE{{{body}}}}}")
}

#[test]
fn special_chars() {
    let cases = [
        ("a.eq.", clause("{ALIAS=a}{OP=eq}{STRING=}")),
        ("a.eq.null", clause("{ALIAS=a}{OP=eq}{NULL}")),
        ("a.eq.1\\.and\\(33\\)", clause("{ALIAS=a}{OP=eq}{STRING=1.and(33)}")),
        ("a.eq.1\\.2", clause("{ALIAS=a}{OP=eq}{NUMBER=1.2}")),
        (
            "a.bbi.(1,2.3,7.0000)",
            clause("{ALIAS=a}{OP=bbi}LIST{{NUMBER=1}{NUMBER=2.3}{NUMBER=7.0000}}"),
        ),
        ("a.ire.\\.*\\,3", clause("{ALIAS=a}{OP=ire}{STRING=.*,3}")),
        (
            "scode.ire.\\(TRENTO|rovereto\\)\\.*,mvalue.neq.0",
            "AND{CLAUSE{{ALIAS=scode}{OP=ire}{STRING=(TRENTO|rovereto).*}}CLAUSE{{ALIAS=mvalue}{OP=neq}{NUMBER=0}}}".into(),
        ),
        ("a_b.eq.ABC", clause("{ALIAS=a_b}{OP=eq}{STRING=ABC}")),
    ];
    for (input, want) in cases {
        assert_eq!(ast(input), want, "input {input}");
    }
}

#[test]
fn dates_in_various_formats_and_zones() {
    for (v, want) in [
        ("2024-01-15", "2024-01-15T00:00:00+00:00"),
        ("2024-01-15T10:30", "2024-01-15T10:30:00+00:00"),
        ("2024-01-15T10:30:00", "2024-01-15T10:30:00+00:00"),
        ("2024-01-15T10:30:00.123", "2024-01-15T10:30:00.123+00:00"),
        ("2024-01-15T10:30:00Z", "2024-01-15T10:30:00+00:00"),
        ("2024-01-15T10:30:00.123Z", "2024-01-15T10:30:00.123+00:00"),
        ("2024-01-15T10:30:00+0200", "2024-01-15T10:30:00+02:00"),
        ("2024-01-15T10:30:00+02:00", "2024-01-15T10:30:00+02:00"),
        ("2024-01-15T10:30:00-0500", "2024-01-15T10:30:00-05:00"),
        ("2024-01-15T10", "2024-01-15T10:00:00+00:00"),
        (
            "2024-01-15T10:30:00.123+0100",
            "2024-01-15T10:30:00.123+01:00",
        ),
    ] {
        let input = format!("a.gt.{v}");
        assert_eq!(
            ast(&input),
            clause(&format!("{{ALIAS=a}}{{OP=gt}}{{DATE={v}}}")),
            "input {input}"
        );
        let w = parse_where(&input).unwrap();
        let super::parser::Node::Clause(c) = &w.items[0] else {
            panic!()
        };
        let super::parser::Operand::Single(val) = &c.value else {
            panic!()
        };
        let Typed::Date(d) = &val.typed else { panic!() };
        assert_eq!(d.to_rfc3339(), want);
    }
}

#[test]
fn quoted_dates_and_invalid_dates_stay_strings() {
    assert_eq!(
        ast("a.eq.\"2024-01-15\""),
        clause("{ALIAS=a}{OP=eq}{STRING=2024-01-15}")
    );
    assert_eq!(
        ast("a.eq.\"2024-01-15T10:30:00+02:00\""),
        clause("{ALIAS=a}{OP=eq}{STRING=2024-01-15T10:30:00+02:00}")
    );
    assert_eq!(
        ast("a.eq.2024-01-32"),
        clause("{ALIAS=a}{OP=eq}{STRING=2024-01-32}")
    );
    assert_eq!(
        ast("a.eq.2024-13-01"),
        clause("{ALIAS=a}{OP=eq}{STRING=2024-13-01}")
    );
    assert_eq!(ast("a.eq.2024"), clause("{ALIAS=a}{OP=eq}{NUMBER=2024}"));
    assert_eq!(
        ast("a.eq.not-a-date"),
        clause("{ALIAS=a}{OP=eq}{STRING=not-a-date}")
    );
    assert_eq!(
        ast("a.eq.2024-01-15 10:30"),
        clause("{ALIAS=a}{OP=eq}{STRING=2024-01-15 10:30}")
    );
}

#[test]
fn lists() {
    let e = |p: i64, c: &str, m: &str| {
        format!("ERR PARSING ERROR: Syntax error at position {p} with character {c}: {m}")
    };
    let cases = [
        ("a.in.()", clause("{ALIAS=a}{OP=in}LIST{{STRING=}}")),
        ("a.in.(null)", clause("{ALIAS=a}{OP=in}LIST{{NULL}}")),
        (
            "a.bbi.(1,2,3,4,5)",
            clause("{ALIAS=a}{OP=bbi}LIST{{NUMBER=1}{NUMBER=2}{NUMBER=3}{NUMBER=4}{NUMBER=5}}"),
        ),
        (
            "scode.ire.(TRENTO|rovereto)",
            clause("{ALIAS=scode}{OP=ire}LIST{{STRING=TRENTO|rovereto}}"),
        ),
        (
            "scode.ire.info@example\\.com",
            clause("{ALIAS=scode}{OP=ire}{STRING=info@example.com}"),
        ),
        (
            "scode.ire.(TRENTO|rovereto).*,mvalue.neq.0",
            e(27, ".", "One of the following characters ,)<EOL> expected"),
        ),
        ("a.eq.1.and(a.eq.0)", e(4, ".", "OPERATOR expected")),
        (
            "or(scode.ire.TRENTO|rovere'to.*,mvalue.eq.0)",
            e(
                26,
                "'",
                "Characters ('\" must be escaped within a filter VALUE",
            ),
        ),
    ];
    for (input, want) in cases {
        assert_eq!(ast(input), want, "input {input}");
    }
}

#[test]
fn json_selectors() {
    let cases = [
        ("a.b.c.in.()", clause("{ALIAS=a}{JSONSEL=b.c}{OP=in}LIST{{STRING=}}")),
        (
            "smetadata.outlets.0.maxPower.gt.3.7",
            clause("{ALIAS=smetadata}{JSONSEL=outlets.0.maxPower}{OP=gt}{NUMBER=3.7}"),
        ),
        (
            "smetadata.building_code.eq.A4",
            clause("{ALIAS=smetadata}{JSONSEL=building_code}{OP=eq}{STRING=A4}"),
        ),
        (
            "smetadata.outlets.0.maxPower.gt.-3.7",
            clause("{ALIAS=smetadata}{JSONSEL=outlets.0.maxPower}{OP=gt}{NUMBER=-3.7}"),
        ),
        (
            "smetadata.outlets.0.maxPower.gt.-.7",
            clause("{ALIAS=smetadata}{JSONSEL=outlets.0.maxPower}{OP=gt}{NUMBER=-.7}"),
        ),
        (
            "smetadata.outlets.0.maxPower.gt.-2.",
            clause("{ALIAS=smetadata}{JSONSEL=outlets.0.maxPower}{OP=gt}{NUMBER=-2.}"),
        ),
        (
            "smetadata.outlets.0.maxPower.gt.+2",
            clause("{ALIAS=smetadata}{JSONSEL=outlets.0.maxPower}{OP=gt}{NUMBER=+2}"),
        ),
        (
            "smetadata.outlets.0.type.ire.\"what.*ever\"",
            clause("{ALIAS=smetadata}{JSONSEL=outlets.0.type}{OP=ire}{STRING=what.*ever}"),
        ),
        (
            "smetadata.outlets.0.type.ire.what.*ever",
            clause("{ALIAS=smetadata}{JSONSEL=outlets.0.type.ire}{OP=what}{STRING=*ever}"),
        ),
        (
            "smetadata.outlets.0.type.ire.what\\.*ever",
            clause("{ALIAS=smetadata}{JSONSEL=outlets.0.type}{OP=ire}{STRING=what.*ever}"),
        ),
        (
            "tmetadata.signal-codes.id.in.(0,25,73)",
            clause("{ALIAS=tmetadata}{JSONSEL=signal-codes.id}{OP=in}LIST{{NUMBER=0}{NUMBER=25}{NUMBER=73}}"),
        ),
    ];
    for (input, want) in cases {
        assert_eq!(ast(input), want, "input {input}");
    }
}

#[test]
fn typing_quirks_of_the_reference() {
    let one = |v: &str| ast(&format!("a.eq.{v}"));
    for (v, t) in [
        ("5", "{NUMBER=5}"),
        ("-5", "{NUMBER=-5}"),
        ("5.5", "{NUMBER=5.5}"),
        ("1e3", "{NUMBER=1e3}"),
        ("0x10", "{STRING=0x10}"),
        ("1L", "{STRING=1L}"),
        ("NaN", "{NUMBER=NaN}"),
        ("Infinity", "{NUMBER=Infinity}"),
        ("1f", "{NUMBER=1f}"),
        ("1d", "{NUMBER=1d}"),
        ("true", "{BOOLEAN=true}"),
        ("TRUE", "{BOOLEAN=TRUE}"),
        ("True", "{BOOLEAN=True}"),
        ("NULL", "{STRING=NULL}"),
        ("\"null\"", "{STRING=null}"),
        ("\"true\"", "{STRING=true}"),
        ("\"5\"", "{STRING=5}"),
        ("\"\"", "{STRING}"),
        ("abc def", "{STRING=abc def}"),
        ("a\\,b", "{STRING=a,b}"),
        ("a\\'b", "{STRING=a'b}"),
        ("a\\\"b", "{STRING=a\"b}"),
        ("a\\)b", "{STRING=a)b}"),
        ("\"a.b\"", "{STRING=a.b}"),
    ] {
        assert_eq!(
            one(v),
            clause(&format!("{{ALIAS=a}}{{OP=eq}}{t}")),
            "value {v}"
        );
    }
    assert_eq!(
        ast("sname.eq. a"),
        clause("{ALIAS=sname}{OP=eq}{STRING= a}")
    );
    assert_eq!(
        ast("a.eq.a.b"),
        clause("{ALIAS=a}{JSONSEL=eq}{OP=a}{STRING=b}")
    );
    assert_eq!(
        ast("a.in.(a,b,c)"),
        clause("{ALIAS=a}{OP=in}LIST{{STRING=a}{STRING=b}{STRING=c}}")
    );
    assert_eq!(
        ast("a.in.(1,a)"),
        clause("{ALIAS=a}{OP=in}LIST{{NUMBER=1}{STRING=a}}")
    );
    assert_eq!(
        ast("a.in.(\"1\",2)"),
        clause("{ALIAS=a}{OP=in}LIST{{STRING=1}{NUMBER=2}}")
    );
    assert_eq!(
        ast("a.in.(a\\,b,c)"),
        clause("{ALIAS=a}{OP=in}LIST{{STRING=a,b}{STRING=c}}")
    );
    assert_eq!(
        ast("a.in.( a , b )"),
        clause("{ALIAS=a}{OP=in}LIST{{STRING= a }{STRING= b }}")
    );
}

#[test]
fn structure_and_errors() {
    let e = |p: i64, c: &str, m: &str| {
        format!("ERR PARSING ERROR: Syntax error at position {p} with character {c}: {m}")
    };
    let c1 = "CLAUSE{{ALIAS=a}{OP=eq}{NUMBER=1}}";
    let c2 = "CLAUSE{{ALIAS=b}{OP=eq}{NUMBER=2}}";
    let c3 = "CLAUSE{{ALIAS=c}{OP=eq}{NUMBER=3}}";
    let cases = [
        ("or(a.eq.1,b.eq.2)", format!("AND{{OR{{{c1}{c2}}}}}")),
        ("and(a.eq.1,b.eq.2)", format!("AND{{AND{{{c1}{c2}}}}}")),
        (
            "or(a.eq.1,and(b.eq.2,c.eq.3))",
            format!("AND{{OR{{{c1}AND{{{c2}{c3}}}}}}}"),
        ),
        (
            "a.eq.1,or(b.eq.2,c.eq.3)",
            format!("AND{{{c1}OR{{{c2}{c3}}}}}"),
        ),
        ("or(a.eq.1)", format!("AND{{OR{{{c1}}}}}")),
        (
            "and(a.eq.1,b.eq.2),c.eq.3",
            format!("AND{{AND{{{c1}{c2}}}{c3}}}"),
        ),
        ("or()", e(2, "(", "ALIAS expected")),
        ("OR(a.eq.1,b.eq.2)", e(2, "(", ". expected")),
        ("or(a.eq.1,b.eq.2", e(16, "<EOL>", ") expected")),
        ("a.eq.1)", e(6, ")", "<EOL> expected")),
        ("a.eq.1,", e(6, ",", "ALIAS expected")),
        ("a.eq.1,,b.eq.2", e(6, ",", "ALIAS expected")),
        (",a.eq.1", e(-1, "<EOL>", "ALIAS expected")),
        (".eq.1", e(-1, "<EOL>", "ALIAS expected")),
        ("a1.eq.1", e(1, "1", ". expected")),
        ("a-b.eq.1", e(1, "-", ". expected")),
        ("A_B.eq.1", clause("{ALIAS=A_B}{OP=eq}{NUMBER=1}")),
        ("a", e(1, "<EOL>", ". expected")),
        ("a.", e(1, ".", "OPERATOR expected")),
        ("a..eq.1", clause("{ALIAS=a}{JSONSEL=}{OP=eq}{NUMBER=1}")),
        ("a.EQ.1", clause("{ALIAS=a}{OP=EQ}{NUMBER=1}")),
        (
            "a.b.c.eq.1",
            clause("{ALIAS=a}{JSONSEL=b.c}{OP=eq}{NUMBER=1}"),
        ),
        (
            "a.b.1.eq.x",
            clause("{ALIAS=a}{JSONSEL=b.1}{OP=eq}{STRING=x}"),
        ),
        (
            "a.b.eq.1.5",
            clause("{ALIAS=a}{JSONSEL=b}{OP=eq}{NUMBER=1.5}"),
        ),
        (
            "a.b.c.eq.1.5",
            clause("{ALIAS=a}{JSONSEL=b.c}{OP=eq}{NUMBER=1.5}"),
        ),
        ("a.b.eq.1.5.6", e(6, ".", "OPERATOR expected")),
        (
            "a.b.in.(1,2)",
            clause("{ALIAS=a}{JSONSEL=b}{OP=in}LIST{{NUMBER=1}{NUMBER=2}}"),
        ),
        (
            "a.b.bbi.(1,2,3,4)",
            clause("{ALIAS=a}{JSONSEL=b}{OP=bbi}LIST{{NUMBER=1}{NUMBER=2}{NUMBER=3}{NUMBER=4}}"),
        ),
        (
            "sname.ire.^a.*$",
            clause("{ALIAS=sname}{OP=ire}{STRING=^a.*$}"),
        ),
        (
            "sname.re.[a-z]+",
            clause("{ALIAS=sname}{OP=re}{STRING=[a-z]+}"),
        ),
        ("sname.re.a{2}", clause("{ALIAS=sname}{OP=re}{STRING=a{2}}")),
        ("sname.re.a|b", clause("{ALIAS=sname}{OP=re}{STRING=a|b}")),
        ("sname.re.%20", clause("{ALIAS=sname}{OP=re}{STRING=%20}")),
        (
            "a.eq.a'b",
            e(
                6,
                "'",
                "Characters ('\" must be escaped within a filter VALUE",
            ),
        ),
        (
            "a.eq.a\"b",
            e(
                6,
                "\"",
                "Characters ('\" must be escaped within a filter VALUE",
            ),
        ),
        (
            "a.eq.a(b",
            e(
                6,
                "(",
                "Characters ('\" must be escaped within a filter VALUE",
            ),
        ),
        ("a.eq.a)b", e(6, ")", "<EOL> expected")),
        ("a.eq.\"a,b\"", e(7, ",", "\" expected")),
        (
            "a.eq.\"a(b)\"",
            e(
                7,
                "(",
                "Characters ('\" must be escaped within a filter VALUE",
            ),
        ),
        ("a.eq", e(4, "<EOL>", ". expected")),
    ];
    for (input, want) in cases {
        assert_eq!(ast(input), want, "input {input}");
    }
}

#[test]
fn error_carries_the_marked_input() {
    let Err(TsQueryError::Syntax(e)) = parse_where("a.eq.1)") else {
        panic!("a syntax error expected");
    };
    assert_eq!(e.input_marked, "a.eq.1--->)<---");
    assert_eq!(e.input_origin, "a.eq.1)");
    assert_eq!(e.position, 6);
}

fn compile_err(route: Route, w: &str) -> String {
    let q = query(route, w);
    compile_query(&q, Dialect::Sqlite)
        .map(|_| "ok".to_string())
        .unwrap_or_else(|e| e.to_string())
}

fn query(route: Route, w: &str) -> TsQuery {
    TsQuery {
        route,
        tree: false,
        types: None,
        data_types: None,
        filter: Some(parse_where(w).unwrap()),
        select: None,
        distinct: true,
        limit: 200,
        offset: 0,
        access: None,
    }
}

#[test]
fn semantic_errors_as_the_reference() {
    let pre = "SELECT EXPANSION ERROR: Syntax Error in WHERE clause: ";
    let h = Route::History { from: 0, to: 1 };
    let cases = [
        (
            h.clone(),
            "mtransactiontime.gte.2024-01-15",
            format!(
                "{pre}'gte' is not a valid operator for a value of type DATE. Valid operators for this type: eq, gt, gteq, lt, lteq, neq"
            ),
        ),
        (
            h.clone(),
            "sname.foo.3",
            format!(
                "{pre}'foo' is not a valid operator for a value of type NUMBER. Valid operators for this type: eq, gt, gteq, lt, lteq, neq"
            ),
        ),
        (
            Route::Stations,
            "sname.lt.abc",
            format!(
                "{pre}'lt' is not a valid operator for a value of type STRING. Valid operators for this type: eq, ire, neq, nire, nre, re"
            ),
        ),
        (
            Route::Stations,
            "sname.re.5",
            format!(
                "{pre}'re' is not a valid operator for a value of type NUMBER. Valid operators for this type: eq, gt, gteq, lt, lteq, neq"
            ),
        ),
        (
            Route::Stations,
            "smetadata.a.lt.2024-01-01",
            format!("{pre}'lt' is not a valid operator for a value of type JSON/DATE. Valid operators for this type: "),
        ),
        (
            Route::Stations,
            "scode.in.(1,a)",
            format!("{pre}'in' is not a valid operator for a value of type LIST/MIXED. Valid operators for this type: "),
        ),
        (Route::Stations, "foo.eq.1", format!("{pre}Alias 'foo' does not exist")),
        (Route::Stations, "tname.eq.1", format!("{pre}Alias 'tname' does not exist")),
        (
            Route::Stations,
            "scoordinate.bbi.(1,2,3,4,5,6)",
            format!("{pre}'BBI.<LIST>' with value [1, 2, 3, 4, 5, 6] is not valid (checks failed)"),
        ),
        (
            Route::Stations,
            "scoordinate.bbi.(11.63,46.0,11.65)",
            format!("{pre}'BBI.<LIST>' with value [11.63, 46.0, 11.65] is not valid (checks failed)"),
        ),
        (
            Route::Stations,
            "scoordinate.dlt.(20,1,2,4,5)",
            format!("{pre}'DLT.<LIST>' with value [20, 1, 2, 4, 5] is not valid (checks failed)"),
        ),
        (
            Route::Latest,
            "mvalue.eq.true",
            "DATA FETCHING ERROR: 'mvalue' can only be used with NULL, NUMBERS or STRINGS: 'BOOLEAN' given.".into(),
        ),
        (
            Route::Latest,
            "mvalue.lt.2024-01-01",
            "DATA FETCHING ERROR: 'mvalue' can only be used with NULL, NUMBERS or STRINGS: 'DATE' given.".into(),
        ),
        (
            Route::Stations,
            "scode.eq.105",
            format!("{pre}'scode' is a text field and the value '105' is not quoted; string values must be quoted: scode.eq.\"105\""),
        ),
        (
            Route::Stations,
            "sactive.eq.1",
            format!("{pre}'sactive' is a boolean field: compare it with true or false"),
        ),
        (
            Route::Stations,
            "scoordinate.bbi.(1,2,3,4,31468)",
            format!("{pre}SRID 31468 is not supported in geospatial filters; use 4326 (longitude, latitude) or 3857"),
        ),
        (
            Route::Stations,
            "scoordinate.dlt.(NaN,NaN,NaN)",
            format!("{pre}'DLT.<LIST>' with value [NaN, NaN, NaN] is not valid (checks failed)"),
        ),
        (
            Route::Stations,
            "scoordinate.bbi.(Infinity,1,2,-Infinity)",
            format!("{pre}'BBI.<LIST>' with value [inf, 1, 2, -inf] is not valid (checks failed)"),
        ),
    ];
    for (route, w, want) in cases {
        assert_eq!(compile_err(route, w), want, "where {w}");
    }
    // These compile.
    for w in [
        "smetadata.aa.bbb.eq.",
        "smetadata.aa.bbb.eq.\"\"",
        "smetadata.aa.bbb.eq.null",
        "smetadata.aa.bbb.eq.-1",
        "smetadata.aa.bbb.eq.hallo",
        "smetadata.aa.bbb.eq.\".......\"",
        "smetadata.aa.bbb.in.()",
        "smetadata.aa.bbb.in.(null)",
        "smetadata.aa.bbb.in.(null,null)",
        "smetadata.aa.bbb.in.(null,x,null)",
        "smetadata.aa.bbb.in.(1,2,3)",
        "smetadata.aa.bbb.in.(1,hallo)",
        "scoordinate.bbi.(11.63,46.0,11.65,47.0,4326)",
        "scoordinate.dlt.(5000,11.2,46.7)",
        "and(sactive.eq.true,or(sorigin.eq.A,sorigin.eq.B)),sname.ire.x",
        "sname.eq.x,sname.eq.y",
        "pcode.eq.x",
    ] {
        assert_eq!(compile_err(Route::Stations, w), "ok", "where {w}");
    }
}

fn where_sql(route: Route, w: &str, dialect: Dialect) -> (String, Vec<crate::SqlValue>) {
    let mut q = query(route, w);
    q.select = Some("scode".into());
    let c = compile_query(&q, dialect).unwrap();
    let sql = c.sql.as_sql().to_string();
    let start = sql.find(" AND (").expect("where appended");
    let end = sql.find(" ORDER BY").unwrap();
    (sql[start + 5..end].to_string(), c.sql.params().to_vec())
}

#[test]
fn sql_for_both_dialects() {
    use crate::SqlValue::*;
    let (s, p) = where_sql(
        Route::Stations,
        "and(or(scode.eq.null,sname.eq.\"5\"))",
        Dialect::Sqlite,
    );
    assert_eq!(s, "(((s.stationcode IS NULL OR s.name = ?1)))");
    assert_eq!(p, vec![Text("5".into()), Int(200)]);
    let (s, _) = where_sql(Route::Stations, "smetadata.a.b.eq.5", Dialect::Sqlite);
    assert_eq!(s, "(hub_json_num(m.json, ?1) = ?2)");
    let (s, p) = where_sql(Route::Stations, "smetadata.a.b.eq.5", Dialect::Postgres);
    assert_eq!(s, "(hub_json_num(m.json, $1) = $2)");
    assert_eq!(p[0], Text("a.b".into()));
    let (s, p) = where_sql(Route::Stations, "sname.ire.x", Dialect::Sqlite);
    assert_eq!(
        (s.as_str(), &p[0]),
        ("(regexp(?1, s.name))", &Text("(?i)x".into()))
    );
    let (s, _) = where_sql(Route::Stations, "sname.nire.x", Dialect::Postgres);
    assert_eq!(s, "(s.name !~* $1)");
    let (s, _) = where_sql(
        Route::Stations,
        "scoordinate.bbi.(11,46,12,47)",
        Dialect::Postgres,
    );
    assert_eq!(
        s,
        "(ST_Intersects(s.pointprojection, ST_MakeEnvelope($1::float8, $2::float8, $3::float8, $4::float8, 4326)))"
    );
    let (s, _) = where_sql(
        Route::Stations,
        "scoordinate.dlt.(1000,11,46)",
        Dialect::Postgres,
    );
    assert_eq!(s, "(hub_distance(s.x, s.y, $1::float8, $2::float8) < $3)");
    let (s, _) = where_sql(
        Route::Stations,
        "scoordinate.bbc.(11,46,12,47)",
        Dialect::Sqlite,
    );
    assert_eq!(s, "((s.x BETWEEN ?1 AND ?2 AND s.y BETWEEN ?3 AND ?4))");
    let (s, p) = where_sql(
        Route::History { from: 0, to: 1 },
        "mvalidtime.lt.2024-06-01",
        Dialect::Postgres,
    );
    assert!(s.ends_with("(me.timestamp < $3)"), "{s}");
    assert_eq!(p[2], Int(1_717_200_000_000));
    let (s, _) = where_sql(Route::Latest, "mvalue.gt.100", Dialect::Sqlite);
    assert_eq!(s, "(me.double_value > ?2)");
    let (s, _) = where_sql(Route::Latest, "mvalue.a.eq.abc", Dialect::Sqlite);
    assert_eq!(s, "(hub_json_text(me.json_value, ?2) = ?3)");
    let (s, _) = where_sql(Route::Stations, "sname.nin.(a,b)", Dialect::Sqlite);
    assert_eq!(s, "(s.name NOT IN (?1, ?2))");
    let (s, _) = where_sql(Route::Stations, "smetadata.a.in.(1,x)", Dialect::Sqlite);
    assert_eq!(s, "(hub_json_json(m.json, ?1) IN (?2, ?3))");
}

#[test]
fn select_expansion() {
    use super::schema::DefList::*;
    use super::select::expand_select;
    let keys = |s: &str, scope: &[DefList]| {
        expand_select(Some(s), scope)
            .map(|v| v.iter().map(|t| t.key()).collect::<Vec<_>>().join(","))
    };
    assert_eq!(
        keys("tmeasurements", &[Datatype, Measurement, Value, Provenance]).unwrap(),
        "mperiod,mtransactiontime,mvalidtime,mvalue,prlineage,prname,prversion"
    );
    assert_eq!(
        keys("sname,smetadata.a.b", &[Station]).unwrap(),
        "smetadata.a.b,sname"
    );
    assert_eq!(keys("sdatatypes", &[Station, Parent]).unwrap(), "");
    assert_eq!(
        keys("sparent", &[Station, Parent]).unwrap(),
        "pactive,pavailable,pcode,pcoordinate,pmetadata,pname,porigin,ptype"
    );
    assert_eq!(
        keys("SNAME", &[Station, Parent]).unwrap_err().to_string(),
        "SELECT EXPANSION ERROR: Key 'SNAME' is not reachable from the expanded select definition list: [station, parent]"
    );
    assert!(matches!(
        keys("s name", &[Station]),
        Err(TsQueryError::SelectInvalid(_))
    ));
}

/// Size limits: input → limit error (true) or not (false); checked before recursion.
#[test]
fn where_size_limits() {
    use super::parser::{MAX_WHERE_CHARS, MAX_WHERE_CLAUSES, MAX_WHERE_DEPTH};
    let nested = |n: usize| format!("{}a.eq.1{}", "and(".repeat(n), ")".repeat(n));
    let clauses = |n: usize| vec!["a.eq.1"; n].join(",");
    let cases = [
        (nested(MAX_WHERE_DEPTH), false),
        (nested(MAX_WHERE_DEPTH + 1), true),
        (nested(4000), true),
        (format!("{}a.eq.1", "or(".repeat(100_000)), true),
        (clauses(MAX_WHERE_CLAUSES), false),
        (clauses(MAX_WHERE_CLAUSES + 1), true),
        (format!("a.in.({})", vec!["1"; 1001].join(",")), true),
        ("a".repeat(MAX_WHERE_CHARS + 1), true),
    ];
    for (input, limited) in cases {
        let r = parse_where(&input);
        assert_eq!(
            matches!(
                r,
                Err(TsQueryError::Limit {
                    parameter: "where",
                    ..
                })
            ),
            limited,
            "{}… → {r:?}",
            &input[..20.min(input.len())]
        );
    }
}

#[test]
fn latest_without_limit_reads_station_type_and_provenance_columns_from_the_catalog() {
    let latest = |dialect, select: Option<&str>, distinct: bool, limit: i64| {
        let q = TsQuery {
            route: Route::Latest,
            tree: false,
            types: Some(vec!["MeteoStation".into()]),
            data_types: None,
            filter: Some(parse_where("pcode.eq.\"P\"").unwrap()),
            select: select.map(str::to_string),
            distinct,
            limit,
            offset: 3,
            access: Some(vec![AccessRule::default()]),
        };
        compile_query(&q, dialect).unwrap()
    };
    // (dialect, select, distinct, limit, read from the catalog)
    let table = [
        (Dialect::Postgres, None, true, -1, true),
        (Dialect::Postgres, None, false, 0, true),
        (
            Dialect::Postgres,
            Some("scode,mvalue,tunit"),
            false,
            -1,
            true,
        ),
        // A limit keeps the compiled order; SQLite has no row versions.
        (Dialect::Postgres, None, true, 10, false),
        (Dialect::Sqlite, None, true, -1, false),
        // DISTINCT compares columns, not ids; a JSON path is computed in SQL.
        (Dialect::Postgres, Some("scode,mvalue"), true, -1, false),
        (
            Dialect::Postgres,
            Some("smetadata.city,mvalue"),
            false,
            -1,
            false,
        ),
        // Nothing from a catalog.
        (
            Dialect::Postgres,
            Some("mvalidtime,mvalue"),
            false,
            -1,
            false,
        ),
    ];
    for (dialect, select, distinct, limit, expected) in table {
        let compiled = latest(dialect, select, distinct, limit);
        let catalog = compiled.unordered.as_ref().and_then(|u| u.catalog.as_ref());
        assert_eq!(
            catalog.is_some(),
            expected,
            "{dialect:?} {select:?} {distinct} {limit}"
        );
        let Some(read) = catalog else { continue };
        let sql = read.sql.as_sql();
        let (select_list, tail) = sql.split_once(" FROM ").unwrap();
        // The same joins, conditions and parameters as the compiled query; no catalog
        // column is read, each entity's id and version are.
        let compiled_sql = compiled.unordered.as_ref().unwrap().sql.as_sql();
        assert!(compiled_sql.ends_with(tail), "{sql}");
        assert_eq!(
            read.sql.params(),
            compiled.unordered.as_ref().unwrap().sql.params()
        );
        for column in [
            "s.stationcode",
            "m.json",
            "t.cunit",
            "tm.json",
            "pr.lineage",
        ] {
            assert!(!select_list.contains(column), "{select_list}");
        }
        for (k, kind) in read.entities.iter().enumerate() {
            assert!(select_list.contains(".xmin"), "{select_list}");
            let from_catalog = read
                .sources
                .iter()
                .filter(|s| matches!(s, CellSource::Catalog { entity, .. } if *entity == k))
                .count();
            assert!(from_catalog > 0 && from_catalog <= kind.columns().len());
        }
        assert_eq!(
            read.sources.len(),
            compiled
                .columns
                .iter()
                .map(|c| c.kind.width())
                .sum::<usize>()
        );
    }
    // Every column of the default select: 10 of the station, 10 of the parent, 5 of the
    // type, 3 of the provenance from the catalog; the time (shown twice, read once),
    // period, value (3) and transaction time read.
    let read = latest(Dialect::Postgres, None, true, -1)
        .unordered
        .unwrap()
        .catalog
        .unwrap();
    assert_eq!(read.read_columns, 6);
    assert_eq!(read.entities.len(), 4);
    assert_eq!(read.sources.len(), 7 + 10 + 10 + 5 + 3);
    assert_eq!(
        read.sources[0], read.sources[3],
        "_timestamp and mvalidtime"
    );
    assert!(read
        .sql
        .as_sql()
        .starts_with("SELECT me.timestamp, ts.period, me.created_on, me.double_value,"));
}
