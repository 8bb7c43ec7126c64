//! Every decision of the Time Series writer and level-1 lists that both backends need,
//! as pure functions: which stations a sync writes and which it deactivates, whose parent
//! is missing, which records a push keeps, the last-record sentinels, the type-list SQL.
//! The backends only load the rows these functions look at and write what they return.
//!
//! Must not: touch a connection or know a backend.

use std::collections::{HashMap, HashSet};

use super::{PushSummary, RecordInput, StationInput, TypeList};
use crate::StoreError;

/// The flags of a station sync (`syncState`, `onlyActivation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncFlags {
    pub sync_state: bool,
    pub only_activation: bool,
}

/// The stations a sync upserts (codes made unique, the first occurrence wins) and the
/// codes it deactivates.
#[derive(Debug, Clone)]
pub struct SyncPlan<'a> {
    pub upsert: Vec<&'a StationInput>,
    pub deactivate: Vec<String>,
}

/// Whose active stations a sync may deactivate: `Some(origin)` (the first incoming
/// station's origin, possibly none) when the sync deactivates at all, `None` otherwise.
/// The backend loads the active codes of (station type, that origin) for
/// [`plan_station_sync`].
pub fn deactivation_scope(incoming: &[StationInput], flags: SyncFlags) -> Option<Option<String>> {
    if !flags.sync_state || flags.only_activation {
        return None;
    }
    incoming.first().map(|s| s.origin.clone())
}

/// The plan of a station sync given the active codes in its [`deactivation_scope`]
/// (empty when there is none): upsert each incoming code once, deactivate the active
/// codes the sync did not mention.
pub fn plan_station_sync<'a>(
    active_in_scope: &[String],
    incoming: &'a [StationInput],
    flags: SyncFlags,
) -> SyncPlan<'a> {
    let mut seen = HashSet::new();
    let upsert: Vec<&StationInput> = incoming
        .iter()
        .filter(|s| seen.insert(s.code.as_str()))
        .collect();
    let deactivate = match deactivation_scope(incoming, flags) {
        Some(_) => active_in_scope
            .iter()
            .filter(|c| !seen.contains(c.as_str()))
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    SyncPlan { upsert, deactivate }
}

/// The first station (in input order) whose parent is not among `existing` (pairs of
/// station type and code, read after the sync's own upserts), as the error the writer
/// answers.
pub fn first_missing_parent(
    stations: &[&StationInput],
    existing: &HashSet<(String, String)>,
) -> Option<StoreError> {
    stations.iter().find_map(|s| {
        let (ptype, pcode) = s.parent.as_ref()?;
        (!existing.contains(&(ptype.clone(), pcode.clone()))).then(|| {
            StoreError::Invalid(format!(
                "station '{}': parent station '{pcode}' of type '{ptype}' does not exist",
                s.code
            ))
        })
    })
}

/// Whether a new metadata history row is due: the stored document differs.
pub fn metadata_changed(current: Option<&str>, new: &str) -> bool {
    current != Some(new)
}

/// The error of a push or event naming a provenance that does not exist.
pub fn missing_provenance(uuid: &str) -> StoreError {
    StoreError::Invalid(format!(
        "provenance '{uuid}' does not exist; create it with POST /json/provenance"
    ))
}

/// A series: (station id, type id, period, value table).
pub type SeriesKey = (i64, i64, i64, i64);

/// Orders records by series and time, the order a push considers them in (by station
/// code, data type, period and timestamp; records equal in all four keep their order).
/// Codes and types compare as their ranks among the push's distinct values: a push of
/// 100,000 records has a few thousand of those, so strings are compared that often
/// rather than at every step of the sort. Collectors send a series' records together
/// and in time order, so the runs of records (one series, time not going back) are
/// sorted first, as wholes; only when that does not give the one stable order (runs of
/// a series overlapping in time) are the records sorted one by one.
pub fn sort_records(records: &mut Vec<RecordInput>) {
    let codes = distinct_sorted(records.iter().map(|r| r.station_code.as_str()));
    let types = distinct_sorted(records.iter().map(|r| r.data_type.as_str()));
    let (mut code_rank, mut type_rank) = (Ranks::new(&codes), Ranks::new(&types));
    let keys: Vec<(u32, u32, i64, i64)> = records
        .iter()
        .map(|r| {
            (
                code_rank.of(&r.station_code),
                type_rank.of(&r.data_type),
                r.period,
                r.timestamp,
            )
        })
        .collect();
    let order = sorted_runs(&keys).unwrap_or_else(|| {
        let mut order: Vec<usize> = (0..records.len()).collect();
        order.sort_by_key(|&k| keys[k]);
        order
    });
    if order.iter().enumerate().all(|(at, &k)| at == k) {
        return;
    }
    let mut slots: Vec<Option<RecordInput>> = records.drain(..).map(Some).collect();
    records.extend(order.into_iter().filter_map(|k| slots[k].take()));
}

/// The stable order of `keys` from sorting its runs (consecutive keys of one series,
/// the time not decreasing) by their first key, or `None` when that order is not the
/// stable sort of the keys themselves.
fn sorted_runs(keys: &[(u32, u32, i64, i64)]) -> Option<Vec<usize>> {
    let mut starts: Vec<usize> = Vec::new();
    for (k, key) in keys.iter().enumerate() {
        let continues = k > 0 && {
            let before = &keys[k - 1];
            (before.0, before.1, before.2) == (key.0, key.1, key.2) && before.3 <= key.3
        };
        if !continues {
            starts.push(k);
        }
    }
    let mut runs: Vec<(usize, usize)> = starts
        .iter()
        .zip(starts.iter().skip(1).copied().chain([keys.len()]))
        .map(|(&start, end)| (start, end))
        .collect();
    runs.sort_by_key(|&(start, _)| keys[start]);
    let order: Vec<usize> = runs
        .into_iter()
        .flat_map(|(start, end)| start..end)
        .collect();
    // The stable sort is the one order in which (key, position) only grows.
    order
        .windows(2)
        .all(|w| (keys[w[0]], w[0]) < (keys[w[1]], w[1]))
        .then_some(order)
}

/// The distinct values of `values`, sorted (runs of one value, as records grouped by
/// station arrive, are collapsed before the sort).
fn distinct_sorted<'a>(values: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for v in values {
        if out.last() != Some(&v) {
            out.push(v);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Positions of values in a sorted list of distinct values, remembering the last one
/// looked up (consecutive records mostly name the same station and type).
struct Ranks<'l> {
    sorted: &'l [&'l str],
    last: Option<(&'l str, u32)>,
}

impl<'l> Ranks<'l> {
    fn new(sorted: &'l [&'l str]) -> Self {
        Ranks { sorted, last: None }
    }

    fn of(&mut self, v: &str) -> u32 {
        if let Some((s, rank)) = self.last {
            if s == v {
                return rank;
            }
        }
        // Every value is in the list (it was made from the same records).
        let at = self.sorted.binary_search(&v).unwrap_or_else(|at| at);
        self.last = self.sorted.get(at).map(|&s| (s, at as u32));
        at as u32
    }
}

/// Distinct station codes and data-type names of a push, sorted (the rows to load).
pub fn push_names(records: &[RecordInput]) -> (Vec<String>, Vec<String>) {
    let owned = |v: Vec<&str>| v.into_iter().map(str::to_string).collect();
    (
        owned(distinct_sorted(
            records.iter().map(|r| r.station_code.as_str()),
        )),
        owned(distinct_sorted(
            records.iter().map(|r| r.data_type.as_str()),
        )),
    )
}

/// Records of known stations and types with their series keys (by record index), the
/// distinct keys sorted (the series to create or load, in lock order), and the counts of
/// records naming unknown stations or types.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResolvedPush {
    pub keyed: Vec<(usize, SeriesKey)>,
    pub series: Vec<SeriesKey>,
    pub unknown_stations: u64,
    pub unknown_types: u64,
}

/// `map[key]`, remembering the last key looked up in `last`: sorted records name the
/// same station and type in runs, so most lookups are a comparison.
fn lookup<'r>(
    last: &mut Option<(&'r str, Option<i64>)>,
    key: &'r str,
    map: &HashMap<String, i64>,
) -> Option<i64> {
    match *last {
        Some((k, id)) if k == key => id,
        _ => {
            let id = map.get(key).copied();
            *last = Some((key, id));
            id
        }
    }
}

pub fn resolve_push(
    records: &[RecordInput],
    stations: &HashMap<String, i64>,
    types: &HashMap<String, i64>,
) -> ResolvedPush {
    let mut out = ResolvedPush::default();
    // The last lookups: sorted records name the same station and type in runs.
    let mut station: Option<(&str, Option<i64>)> = None;
    let mut dtype: Option<(&str, Option<i64>)> = None;
    for (k, r) in records.iter().enumerate() {
        let sid = lookup(&mut station, &r.station_code, stations);
        let Some(sid) = sid else {
            out.unknown_stations += 1;
            continue;
        };
        let tid = lookup(&mut dtype, &r.data_type, types);
        let Some(tid) = tid else {
            out.unknown_types += 1;
            continue;
        };
        let key = (sid, tid, r.period, r.value.table());
        if out.series.last() != Some(&key) {
            out.series.push(key);
        }
        out.keyed.push((k, key));
    }
    out.series.sort_unstable();
    out.series.dedup();
    out
}

/// What a push writes: history rows as (series id, record index) in record order, the
/// new latest row per series (sorted by series id), and the summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PushPlan {
    pub history: Vec<(i64, usize)>,
    pub latest: Vec<(i64, usize)>,
    pub summary: PushSummary,
}

/// Keeps, per series, only records newer than its latest value (`series` maps a key to
/// (series id, latest timestamp or `i64::MIN`)); `records` sorted by [`sort_records`].
pub fn plan_push(
    records: &[RecordInput],
    resolved: &ResolvedPush,
    series: &HashMap<SeriesKey, (i64, i64)>,
) -> PushPlan {
    let mut plan = PushPlan {
        summary: PushSummary {
            unknown_stations: resolved.unknown_stations,
            unknown_types: resolved.unknown_types,
            ..Default::default()
        },
        ..Default::default()
    };
    // Per series met before: its newest timestamp so far. The series of the current run
    // of records is kept apart (key, id, newest, last record kept) and put back when
    // the run ends, so most records cost no hash lookup.
    let mut newest: HashMap<SeriesKey, i64> = HashMap::new();
    let mut latest: HashMap<i64, usize> = HashMap::new();
    let mut run: Option<(SeriesKey, i64, i64, Option<usize>)> = None;
    let end_run = |run: (SeriesKey, i64, i64, Option<usize>),
                   newest: &mut HashMap<SeriesKey, i64>,
                   latest: &mut HashMap<i64, usize>| {
        let (key, id, ts, kept) = run;
        newest.insert(key, ts);
        if let Some(k) = kept {
            latest.insert(id, k);
        }
    };
    for (k, key) in &resolved.keyed {
        if run.as_ref().map(|r| &r.0) != Some(key) {
            if let Some(done) = run.take() {
                end_run(done, &mut newest, &mut latest);
            }
            let Some(&(id, stored)) = series.get(key) else {
                continue;
            };
            let ts = newest.get(key).copied().unwrap_or(stored);
            run = Some((*key, id, ts, None));
        }
        let Some((_, id, current, kept)) = run.as_mut() else {
            continue;
        };
        if records[*k].timestamp <= *current {
            plan.summary.skipped_older += 1;
            continue;
        }
        *current = records[*k].timestamp;
        plan.history.push((*id, *k));
        *kept = Some(*k);
        plan.summary.inserted += 1;
    }
    if let Some(done) = run.take() {
        end_run(done, &mut newest, &mut latest);
    }
    plan.latest = latest.into_iter().collect();
    plan.latest.sort_unstable();
    plan
}

/// The reference's answer of `getDateOfLastRecord`: the newest latest value, else 0 when
/// the station is unknown or nothing beyond it was asked, else -1 (station without
/// that series).
pub fn last_record_answer(
    station_exists: bool,
    newest: Option<i64>,
    type_or_period_asked: bool,
) -> i64 {
    match (station_exists, newest) {
        (false, _) => 0,
        (true, Some(t)) => t,
        (true, None) if !type_or_period_asked => 0,
        (true, None) => -1,
    }
}

/// The SQL of a level-1 list, one text for both backends (`IS TRUE` reads SQLite's 0/1
/// and PostgreSQL's boolean alike).
pub fn type_list_sql(what: TypeList) -> &'static str {
    match what {
        TypeList::StationTypes => {
            "SELECT DISTINCT stationtype FROM ts_station WHERE available IS TRUE ORDER BY 1"
        }
        TypeList::EdgeTypes => {
            "SELECT DISTINCT i.stationtype FROM ts_edge e JOIN ts_station i ON i.id = e.edge_data_id WHERE i.available IS TRUE ORDER BY 1"
        }
        TypeList::EventOrigins => "SELECT DISTINCT origin FROM ts_event ORDER BY 1",
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
