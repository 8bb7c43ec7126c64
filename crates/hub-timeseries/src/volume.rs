//! The Time Series volume set (issue 18): many series with a long, regular history, for
//! measuring reads and ingestion at Open Data Hub volume (the demo data is 7 days).
//!
//! `stations` meteo stations (type [`VOLUME_STATION_TYPE`]) × `types` data types =
//! series, each with `points` measurements `interval_s` apart ending at `end`. The
//! default parameterisation ([`VolumeOptions::odh`]) is 1,000 stations × 5 types ×
//! 10,000 points every 53 minutes: 50 million measurements over 368 days, pushed under
//! 300 provenances (a collector release per stretch of time).
//!
//! Owns: what the set contains (deterministic: values are a function of series and time,
//! no random state) and the order it is written in. Records go through
//! [`TimeSeriesRepo::push_records`], the path the writer endpoint uses, in pushes of
//! `steps_per_push` time steps of every series (one transaction each, oldest first: a
//! push only keeps records newer than a series' latest value, so time order is
//! required); with `writers` > 1, as many pushes at once, each of its share of the
//! stations. Each writer generates its next push on a blocking thread while the current
//! one runs, as a data source produces records independently of the store. On PostgreSQL the monthly `ts_history` partitions are made by that push
//! path as each month is reached. Must not: touch connections or build SQL.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use hub_store::timeseries::{
    DataTypeInput, ProvenanceInput, RecordInput, RecordValue, StationInput, SyncFlags,
    TimeSeriesRepo,
};
use hub_store::StoreError;
use serde_json::json;

/// The station type of the volume set: meteo stations, whose first three data types
/// are open data under the default rules and the others closed (as on the Open Data
/// Hub), so reads of the set pay for the closed-data rules as real ones do.
pub const VOLUME_STATION_TYPE: &str = "MeteoStation";

/// Names of the first data types; further ones are `measure-{n}`.
const TYPE_NAMES: [(&str, &str); 8] = [
    ("air-temperature", "°C"),
    ("air-humidity", "%"),
    ("wind-speed", "m/s"),
    ("precipitation", "mm"),
    ("global-radiation", "W/m²"),
    ("wind-direction", "°"),
    ("air-pressure", "hPa"),
    ("sunshine-duration", "s"),
];

/// Data collectors whose releases are the volume set's provenances.
pub const COLLECTORS: u32 = 40;

/// What [`load_volume`] writes.
#[derive(Debug, Clone)]
pub struct VolumeOptions {
    pub stations: u32,
    pub types: u32,
    /// Measurements per series.
    pub points: u32,
    /// Seconds between two measurements of a series (also the series' period).
    pub interval_s: i64,
    /// The newest measurement's time (rounded down to a whole interval).
    pub end: DateTime<Utc>,
    /// Time steps of every series per push (records per push = series × this).
    pub steps_per_push: u32,
    /// The stations' type ([`VOLUME_STATION_TYPE`] for the set itself; an ingestion
    /// benchmark on a loaded store writes another type, so reads of the set stay alike).
    pub station_type: String,
    /// Station codes are `{code_prefix}{n:05}`.
    pub code_prefix: String,
    /// Concurrent writers, each pushing the records of its share of the stations (as
    /// several data collectors do); 1 = one push at a time.
    pub writers: u32,
    /// Provenances registered before the load: releases of [`COLLECTORS`] data
    /// collectors, as a platform that has run for years holds. The set's measurements
    /// come from the first collector: each stretch of time is pushed under one of its
    /// releases, the next release for the next stretch (300: 8 releases, so a week names
    /// one or two and a year all 8); 0 = no provenance.
    pub provenances: u32,
}

impl VolumeOptions {
    /// The volume: 5,000 series × 10,000 points at 53 minutes = 50 M
    /// measurements over 368 days, 100,000 records per push.
    pub fn odh(end: DateTime<Utc>) -> Self {
        VolumeOptions {
            stations: 1_000,
            types: 5,
            points: 10_000,
            interval_s: 53 * 60,
            end,
            steps_per_push: 20,
            station_type: VOLUME_STATION_TYPE.into(),
            code_prefix: "VOL".into(),
            writers: 1,
            provenances: 300,
        }
    }

    /// The provenance (an index below `provenances`, registered in order) whose release
    /// pushed time step `k`, when there are any: provenance `r` is release `r /
    /// COLLECTORS` of collector `r % COLLECTORS`, and the first collector's releases
    /// follow each other over the set's time.
    pub fn provenance_of_step(&self, k: u32) -> Option<usize> {
        let collectors = COLLECTORS as u64;
        let releases = (self.provenances as u64).div_ceil(collectors);
        (releases > 0).then(|| {
            let release = k as u64 * releases / self.points.max(1) as u64;
            (release.min(releases - 1) * collectors) as usize
        })
    }

    /// Series in the set.
    pub fn series(&self) -> u64 {
        self.stations as u64 * self.types as u64
    }

    /// Measurements in the set.
    pub fn records(&self) -> u64 {
        self.series() * self.points as u64
    }

    /// Epoch ms of the first and the last measurement.
    pub fn span_ms(&self) -> (i64, i64) {
        let step = self.interval_s.max(1) * 1000;
        let last = self.end.timestamp_millis().div_euclid(step) * step;
        (last - (self.points.max(1) as i64 - 1) * step, last)
    }

    /// The data type names, in order.
    pub fn type_names(&self) -> Vec<String> {
        (0..self.types as usize)
            .map(|k| match TYPE_NAMES.get(k) {
                Some((name, _)) => name.to_string(),
                None => format!("measure-{}", k + 1),
            })
            .collect()
    }

    /// The code of station `n` (0-based).
    pub fn station_code(&self, n: u32) -> String {
        format!("{}{n:05}", self.code_prefix)
    }
}

/// What [`load_volume`] did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct VolumeSummary {
    pub stations: u64,
    pub series: u64,
    pub records: u64,
    pub pushes: u64,
    /// Time spent writing measurements (stations and types excluded).
    pub elapsed: Duration,
}

/// The records of time steps `k..k + steps` of the series of `stations` (index and code).
fn volume_records(
    opts: &VolumeOptions,
    stations: &[(usize, String)],
    names: &[String],
    k: u32,
    steps: u32,
) -> Vec<RecordInput> {
    let (first, _) = opts.span_ms();
    let step = opts.interval_s.max(1) * 1000;
    let mut recs = Vec::with_capacity(stations.len() * names.len() * steps as usize);
    for (s, code) in stations {
        for (d, name) in names.iter().enumerate() {
            let series = (s * names.len() + d) as u64;
            for j in k..k + steps {
                let t = first + j as i64 * step;
                recs.push(RecordInput {
                    station_code: code.clone(),
                    data_type: name.clone(),
                    period: opts.interval_s,
                    timestamp: t,
                    value: RecordValue::Double(value(series, t)),
                });
            }
        }
    }
    recs
}

/// A measurement's value: a daily and a yearly wave per series, plus a small
/// per-step wobble, so values vary like sensor data without random state.
fn value(series: u64, t_ms: i64) -> f64 {
    let day = (t_ms.rem_euclid(86_400_000)) as f64 / 86_400_000.0;
    let year = (t_ms.rem_euclid(31_536_000_000)) as f64 / 31_536_000_000.0;
    let phase = series as f64 * 0.61;
    let wobble = ((t_ms / 60_000) as u64 ^ series.wrapping_mul(0x9e37_79b9)) % 100;
    let v = 50.0
        + 20.0 * (day * std::f64::consts::TAU + phase).sin()
        + 10.0 * (year * std::f64::consts::TAU).sin()
        + wobble as f64 / 50.0;
    (v * 100.0).round() / 100.0
}

/// Writes the volume set into `store`: data types, stations, then the measurements,
/// oldest first. `progress(records written so far)` is called after every push.
pub async fn load_volume(
    store: &dyn TimeSeriesRepo,
    opts: &VolumeOptions,
    mut progress: impl FnMut(u64),
) -> Result<VolumeSummary, StoreError> {
    let names = opts.type_names();
    store
        .sync_data_types(
            names
                .iter()
                .enumerate()
                .map(|(k, name)| DataTypeInput {
                    name: name.clone(),
                    unit: Some(TYPE_NAMES.get(k).map_or("", |t| t.1).into()),
                    description: Some(format!("{name} (volume set)")),
                    rtype: Some("Mean".into()),
                    metadata: Some(json!({})),
                })
                .collect(),
        )
        .await?;
    let stations: Vec<StationInput> = (0..opts.stations)
        .map(|n| {
            // A grid over South Tyrol's extent, so bounding-box filters select a share.
            let (col, row) = ((n % 40) as f64, (n / 40) as f64);
            StationInput {
                code: opts.station_code(n),
                name: format!("Volume meteo station {}", n + 1),
                origin: Some("VOLUME".into()),
                coordinate: Some((10.4 + col * 0.04, 46.2 + (row % 40.0) * 0.015)),
                parent: None,
                metadata: Some(json!({"volume": true})),
            }
        })
        .collect();
    for chunk in stations.chunks(1_000) {
        store
            .sync_stations(
                opts.station_type.clone(),
                chunk.to_vec(),
                SyncFlags::default(),
            )
            .await?;
    }
    let codes: Vec<String> = (0..opts.stations).map(|n| opts.station_code(n)).collect();
    let mut provenances = Vec::with_capacity(opts.provenances as usize);
    for k in 0..opts.provenances {
        provenances.push(
            store
                .provenance(ProvenanceInput {
                    uuid: format!("volume-provenance-{k}"),
                    lineage: "VOLUME".into(),
                    data_collector: format!("volume-collector-{}", k % COLLECTORS),
                    data_collector_version: format!("1.{}", k / COLLECTORS),
                })
                .await?,
        );
    }
    let provenances = &provenances;
    let mut sum = VolumeSummary {
        stations: opts.stations as u64,
        series: opts.series(),
        ..Default::default()
    };
    // Writer w pushes stations w, w + writers, …: each series has one writer, which
    // pushes it oldest first.
    let writers = opts.writers.clamp(1, opts.stations.max(1)) as usize;
    let shared = std::cell::RefCell::new((&mut sum, &mut progress));
    let started = Instant::now();
    let pushes = (0..writers).map(|w| {
        let shared = &shared;
        // What this writer generates from: its share of the stations, the type names.
        let mine: Vec<(usize, String)> = codes
            .iter()
            .cloned()
            .enumerate()
            .skip(w)
            .step_by(writers)
            .collect();
        let source = std::sync::Arc::new((opts.clone(), mine, names.clone()));
        // The records of steps k.. on a blocking thread, as a data source produces them
        // independently of the store: the next push is generated while this one runs.
        let generate = move |k: u32| {
            let source = source.clone();
            tokio::task::spawn_blocking(move || {
                let (opts, mine, names) = &*source;
                let steps = opts.steps_per_push.max(1).min(opts.points - k);
                (steps, volume_records(opts, mine, names, k, steps))
            })
        };
        async move {
            let mut k = 0u32;
            let mut next = (k < opts.points).then(|| generate(k));
            while let Some(generated) = next.take() {
                let (steps, recs) = generated
                    .await
                    .map_err(|e| StoreError::Task(e.to_string()))?;
                if k + steps < opts.points {
                    next = Some(generate(k + steps));
                }
                let provenance = opts.provenance_of_step(k).map(|p| provenances[p].clone());
                let done = store
                    .push_records(opts.station_type.clone(), provenance, recs)
                    .await?;
                // Pushes of several writers are awaited on this one thread: the borrow
                // never overlaps another.
                let mut shared = shared.borrow_mut();
                let (sum, progress) = &mut *shared;
                sum.records += done.inserted;
                sum.pushes += 1;
                progress(sum.records);
                k += steps;
            }
            Ok::<(), StoreError>(())
        }
    });
    for pushed in futures::future::join_all(pushes).await {
        pushed?;
    }
    sum.elapsed = started.elapsed();
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_odh_set_is_50_million_measurements_over_a_year() {
        let o = VolumeOptions::odh(Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap());
        assert_eq!(o.series(), 5_000);
        assert_eq!(o.records(), 50_000_000);
        let (a, b) = o.span_ms();
        assert!(
            b - a >= 365 * 86_400_000,
            "span {} days",
            (b - a) / 86_400_000
        );
        assert_eq!(o.type_names()[4], "global-radiation");
        // The first collector's 8 releases, one after another over the year.
        let releases: Vec<usize> = (0..o.points).filter_map(|k| o.provenance_of_step(k)).fold(
            Vec::new(),
            |mut seen, p| {
                if seen.last() != Some(&p) {
                    seen.push(p);
                }
                seen
            },
        );
        assert_eq!(releases, vec![0, 40, 80, 120, 160, 200, 240, 280]);
        // A week (190 steps of 53 minutes) names one release or two.
        for start in (0..o.points - 190).step_by(97) {
            let span =
                o.provenance_of_step(start + 190).unwrap() - o.provenance_of_step(start).unwrap();
            assert!(span <= 40, "steps {start}..: {span}");
        }
        let none = VolumeOptions {
            provenances: 0,
            ..o
        };
        assert_eq!(none.provenance_of_step(0), None);
    }

    #[test]
    fn values_are_deterministic_and_vary() {
        assert_eq!(value(3, 1_700_000_000_000), value(3, 1_700_000_000_000));
        assert_ne!(value(3, 1_700_000_000_000), value(4, 1_700_000_000_000));
        assert_ne!(value(3, 1_700_000_000_000), value(3, 1_700_003_180_000));
    }
}
