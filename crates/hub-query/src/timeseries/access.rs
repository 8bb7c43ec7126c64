//! Closed-data rules of a measurement query: the rules that can still decide what it
//! sees once its own station and data types are known ([`reachable_rules`]), and their
//! SQL ([`access`]).
//!
//! Why prune: a caller's rules name every station type and data type it may read, and a
//! request names one or two. Rules for other types can never match the request's rows,
//! and a rule that covers all the request's types is true on every row. Left in the
//! SQL, PostgreSQL evaluates each `IN (…)` of bound parameters as an array built again
//! for every joined row (a tenth of its time on 1,000 latest values); pruned, the
//! condition usually disappears. The rows seen are the same: a request's rows all have
//! one of its station types and data types (its own conditions, AND-ed with the rules).
//!
//! Owns: the pruning and the rules' SQL. Must not: decide which rules a caller has
//! (`hub-timeseries` does).

use super::query::{in_list, AccessRule};
use crate::{SqlBuilder, SqlValue};

/// How a rule's criterion on one field stands against the values a request allows
/// (`None`: any value).
enum Criterion {
    /// True on every row of the request.
    Always,
    /// False on every row of the request.
    Never,
    /// Depends on the row.
    Sometimes,
}

fn criterion(rule: &[String], request: Option<&[String]>) -> Criterion {
    match request {
        _ if rule.is_empty() => Criterion::Always,
        None => Criterion::Sometimes,
        Some(asked) if asked.iter().all(|v| rule.contains(v)) => Criterion::Always,
        Some(asked) if !asked.iter().any(|v| rule.contains(v)) => Criterion::Never,
        Some(_) => Criterion::Sometimes,
    }
}

/// The rules (OR-ed) that decide what a query restricted to `station_types` and
/// `data_types` (`None`: any) sees, equivalent on its rows to `rules`: rules that never
/// match its rows dropped, criteria true on all of them removed. `None` when a rule
/// matches every row (nothing to restrict); `Some(empty)` when none can match.
pub fn reachable_rules(
    rules: Option<&[AccessRule]>,
    station_types: Option<&[String]>,
    data_types: Option<&[String]>,
) -> Option<Vec<AccessRule>> {
    let rules = rules?;
    let mut reachable: Vec<AccessRule> = Vec::with_capacity(rules.len());
    'rules: for rule in rules {
        let mut rule = rule.clone();
        for (values, asked) in [
            (&mut rule.station_types, station_types),
            (&mut rule.data_types, data_types),
        ] {
            match criterion(values, asked) {
                Criterion::Always => values.clear(),
                Criterion::Never => continue 'rules,
                Criterion::Sometimes => {}
            }
        }
        if rule == AccessRule::default() {
            return None;
        }
        if !reachable.contains(&rule) {
            reachable.push(rule);
        }
    }
    Some(reachable)
}

/// The SQL of rules OR-ed together (`1 = 0` for none).
pub(super) fn access(b: &mut SqlBuilder, rules: &[AccessRule]) {
    if rules.is_empty() {
        b.sql("1 = 0");
        return;
    }
    b.sql("(");
    for (k, r) in rules.iter().enumerate() {
        if k > 0 {
            b.sql(" OR ");
        }
        b.sql("(1 = 1");
        if !r.station_types.is_empty() {
            in_list(b, "s.stationtype", &r.station_types);
        }
        if !r.origins.is_empty() {
            in_list(b, "s.origin", &r.origins);
        }
        if !r.data_types.is_empty() {
            in_list(b, "t.cname", &r.data_types);
        }
        if !r.periods.is_empty() {
            b.sql(" AND ts.period IN (");
            for (k, p) in r.periods.iter().enumerate() {
                if k > 0 {
                    b.sql(", ");
                }
                b.param(SqlValue::Int(*p));
            }
            b.sql(")");
        }
        b.sql(")");
    }
    b.sql(")");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeseries::{compile_query, Route, TsQuery};
    use crate::Dialect;

    fn rule(station_types: &[&str], origins: &[&str], data_types: &[&str]) -> AccessRule {
        let texts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        AccessRule {
            station_types: texts(station_types),
            origins: texts(origins),
            data_types: texts(data_types),
            periods: Vec::new(),
        }
    }

    /// Rules, station types asked, data types asked, rules left.
    type Case<'a> = (
        Option<Vec<AccessRule>>,
        Option<&'a [&'a str]>,
        Option<&'a [&'a str]>,
        Option<Vec<AccessRule>>,
    );

    fn texts(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn rules_are_pruned_to_those_that_can_decide_the_request() {
        let open = vec![
            rule(&["ParkingStation", "EChargingStation"], &[], &[]),
            rule(&["MeteoStation"], &[], &["air-temperature", "wind-speed"]),
            rule(&["TrafficSensor"], &["FAMAS"], &[]),
        ];
        let periodic = AccessRule {
            periods: vec![600],
            ..rule(&["MeteoStation"], &[], &[])
        };
        let table: Vec<Case> = vec![
            // An admin sees everything, whatever is asked.
            (None, Some(&["MeteoStation"]), None, None),
            // No rules: nothing is visible, and stays so.
            (Some(vec![]), Some(&["MeteoStation"]), None, Some(vec![])),
            // A rule covering every asked type and data type: no condition at all.
            (
                Some(open.clone()),
                Some(&["MeteoStation"]),
                Some(&["air-temperature"]),
                None,
            ),
            (
                Some(open.clone()),
                Some(&["ParkingStation"]),
                Some(&["free", "occupied"]),
                None,
            ),
            (
                Some(open.clone()),
                Some(&["ParkingStation", "EChargingStation"]),
                None,
                None,
            ),
            // Rules of other types go; a criterion partly covered stays whole.
            (
                Some(open.clone()),
                Some(&["MeteoStation"]),
                Some(&["air-temperature", "snow-height"]),
                Some(vec![rule(&[], &[], &["air-temperature", "wind-speed"])]),
            ),
            (
                Some(open.clone()),
                Some(&["MeteoStation"]),
                None,
                Some(vec![rule(&[], &[], &["air-temperature", "wind-speed"])]),
            ),
            (
                Some(open.clone()),
                Some(&["ParkingStation", "MeteoStation"]),
                Some(&["free"]),
                Some(vec![rule(
                    &["ParkingStation", "EChargingStation"],
                    &[],
                    &[],
                )]),
            ),
            // Origins and periods are not asked for by a request: they stay.
            (
                Some(open.clone()),
                Some(&["TrafficSensor"]),
                Some(&["count"]),
                Some(vec![rule(&[], &["FAMAS"], &[])]),
            ),
            (
                Some(vec![periodic.clone()]),
                Some(&["MeteoStation"]),
                None,
                Some(vec![AccessRule {
                    periods: vec![600],
                    ..AccessRule::default()
                }]),
            ),
            // No rule for an asked type: nothing visible.
            (
                Some(open.clone()),
                Some(&["BikesharingStation"]),
                None,
                Some(vec![]),
            ),
            (
                Some(open.clone()),
                Some(&["MeteoStation"]),
                Some(&["snow-height"]),
                Some(vec![]),
            ),
            // Any station type (`*`): rules by station type stay as they are.
            (Some(open.clone()), None, None, Some(open.clone())),
            // Rules that became the same are kept once.
            (
                Some(vec![
                    rule(&["A"], &["FAMAS"], &[]),
                    rule(&["A", "B"], &["FAMAS"], &[]),
                ]),
                Some(&["A"]),
                None,
                Some(vec![rule(&[], &["FAMAS"], &[])]),
            ),
        ];
        for (rules, types, data_types, expected) in table {
            let types = types.map(texts);
            let data_types = data_types.map(texts);
            assert_eq!(
                reachable_rules(rules.as_deref(), types.as_deref(), data_types.as_deref()),
                expected,
                "rules {rules:?}, asked {types:?} / {data_types:?}"
            );
        }
    }

    #[test]
    fn a_request_covered_by_a_rule_compiles_without_its_condition() {
        let latest = |types: &[&str], data_types: &[&str], dialect| {
            let q = TsQuery {
                route: Route::Latest,
                tree: false,
                types: Some(texts(types)),
                data_types: Some(texts(data_types)),
                filter: None,
                select: None,
                distinct: true,
                limit: 10,
                offset: 0,
                access: Some(vec![
                    rule(&["ParkingStation"], &[], &[]),
                    rule(&["MeteoStation"], &[], &["air-temperature"]),
                ]),
            };
            let c = compile_query(&q, dialect).unwrap();
            (c.sql.as_sql().to_string(), c.sql.params().len())
        };
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            // Three parameters: the station type and data type asked, the limit.
            let (sql, params) = latest(&["MeteoStation"], &["air-temperature"], dialect);
            assert!(!sql.contains("(1 = 1"), "{sql}");
            assert_eq!(params, 3, "{sql}");
            let (sql, _) = latest(&["BikesharingStation"], &["free"], dialect);
            assert!(sql.contains("AND 1 = 0"), "{sql}");
            let (sql, params) = latest(&["MeteoStation", "ParkingStation"], &["free"], dialect);
            // The parking rule alone is left, with its one station type.
            assert!(sql.contains("AND ((1 = 1 AND s.stationtype IN ("), "{sql}");
            assert!(!sql.contains("OR (1 = 1"), "{sql}");
            assert_eq!(params, 5, "{sql}");
        }
    }
}
