//! Deterministic demo mobility data (fixed seed): parking stations with free/occupied
//! series, e-charging stations with plugs as children, meteo stations with several data
//! types (precipitation is closed), traffic sensors (A22 ones are closed) joined by road
//! links (edges with line geometries), string and JSON series, and a few events.
//! Seven days of 10/15-minute history ending at `anchor`; `scale` multiplies stations
//! (scale 10 = 1,000 parking stations and about 2.8 million history rows).

use chrono::{DateTime, Utc};
use hub_store::timeseries::{
    DataTypeInput, EdgeInput, EventInput, ProvenanceInput, RecordInput, RecordValue, StationInput,
};
use hub_store::timeseries::{SyncFlags, TimeSeriesRepo};
use hub_store::StoreError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct DemoSummary {
    pub stations: u64,
    pub records: u64,
    pub edges: u64,
    pub events: u64,
}

const DAY_MS: i64 = 86_400_000;

fn dtype(name: &str, unit: &str, desc: &str, rtype: &str) -> DataTypeInput {
    DataTypeInput {
        name: name.into(),
        unit: Some(unit.into()),
        description: Some(desc.into()),
        rtype: Some(rtype.into()),
        metadata: Some(json!({})),
    }
}

fn station(
    code: String,
    name: String,
    origin: &str,
    x: f64,
    y: f64,
    meta: serde_json::Value,
) -> StationInput {
    StationInput {
        code,
        name,
        origin: Some(origin.into()),
        coordinate: Some((x, y)),
        parent: None,
        metadata: Some(meta),
    }
}

fn uuid_from(rng: &mut ChaCha8Rng) -> String {
    let b: [u8; 16] = rng.gen();
    uuid::Builder::from_random_bytes(b).into_uuid().to_string()
}

/// Loads the demo data set; `anchor` is the end of the history (e.g. now).
pub async fn load_demo(
    store: &dyn TimeSeriesRepo,
    scale: u32,
    anchor: DateTime<Utc>,
) -> Result<DemoSummary, StoreError> {
    let s = scale.max(1) as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(0x0d11_2024);
    let mut sum = DemoSummary::default();
    let end = anchor.timestamp_millis() / 600_000 * 600_000;
    let start = end - 7 * DAY_MS;
    let prov = store
        .provenance(ProvenanceInput {
            uuid: uuid_from(&mut rng),
            lineage: "hub-demo".into(),
            data_collector: "hub-demo-generator".into(),
            data_collector_version: "1".into(),
        })
        .await?;
    store
        .sync_data_types(vec![
            dtype("free", "", "free parking slots", "Instantaneous"),
            dtype("occupied", "", "occupied parking slots", "Instantaneous"),
            dtype(
                "number-available",
                "",
                "available charging points",
                "Instantaneous",
            ),
            dtype(
                "echarging-plug-status",
                "",
                "state of the plug",
                "Instantaneous",
            ),
            dtype("air-temperature", "°C", "air temperature", "Mean"),
            dtype("air-humidity", "%", "relative humidity", "Mean"),
            dtype("wind-speed", "m/s", "wind speed", "Mean"),
            dtype("precipitation", "mm", "precipitation", "Total"),
            dtype(
                "weather-report",
                "",
                "sky and forecast as JSON",
                "Instantaneous",
            ),
            dtype("Nr. Light Vehicles", "", "light vehicles counted", "Count"),
            dtype(
                "Average Speed Light Vehicles",
                "km/h",
                "average speed of light vehicles",
                "Mean",
            ),
        ])
        .await?;
    let steps = |period: i64| {
        (0..(7 * DAY_MS / (period * 1000))).map(move |k| start + (k + 1) * period * 1000)
    };
    let day_wave = |t: i64, phase: f64| {
        ((t % DAY_MS) as f64 / DAY_MS as f64 * std::f64::consts::TAU + phase).sin()
    };
    let push = |stype: &'static str, recs: Vec<RecordInput>| {
        let prov = prov.clone();
        async move {
            store
                .push_records(stype.to_string(), Some(prov), recs)
                .await
        }
    };

    // Parking.
    let n = 100 * s;
    let mut st = Vec::new();
    let mut caps = Vec::new();
    for i in 0..n {
        let cap: i64 = rng.gen_range(40..600);
        caps.push(cap);
        let (x, y) = (
            11.25 + rng.gen::<f64>() * 0.25,
            46.40 + rng.gen::<f64>() * 0.25,
        );
        let muni = ["Bolzano - Bozen", "Merano - Meran", "Bressanone - Brixen"][i % 3];
        st.push(station(
            format!("P{i:04}"),
            format!("P{i:04} - Parking {}", i + 1),
            "FAMAS",
            x,
            y,
            json!({"capacity": cap, "municipality": muni}),
        ));
    }
    sum.stations += st.len() as u64;
    store
        .sync_stations("ParkingStation".into(), st, SyncFlags::default())
        .await?;
    for chunk in (0..n).collect::<Vec<_>>().chunks(50) {
        let mut recs = Vec::new();
        for &i in chunk {
            let phase = i as f64 * 0.37;
            for t in steps(600) {
                let occ = ((0.55 + 0.4 * day_wave(t, phase)) * caps[i] as f64)
                    .round()
                    .clamp(0.0, caps[i] as f64);
                for (name, v) in [("free", caps[i] as f64 - occ), ("occupied", occ)] {
                    recs.push(RecordInput {
                        station_code: format!("P{i:04}"),
                        data_type: name.into(),
                        period: 600,
                        timestamp: t,
                        value: RecordValue::Double(v),
                    });
                }
            }
        }
        sum.records += push("ParkingStation", recs).await?.inserted;
    }

    // E-charging stations with plugs.
    let n = 10 * s;
    let (mut stations, mut plugs) = (Vec::new(), Vec::new());
    for i in 0..n {
        let (x, y) = (11.1 + rng.gen::<f64>() * 0.5, 46.3 + rng.gen::<f64>() * 0.5);
        stations.push(station(
            format!("ECS{i:03}"),
            format!("Charging point {}", i + 1),
            "ALPERIA",
            x,
            y,
            json!({"provider": "demo", "capacity": 2, "accessType": "PUBLIC"}),
        ));
        for k in 1..=2 {
            let mut p = station(
                format!("ECS{i:03}-{k}"),
                format!("Charging point {} plug {k}", i + 1),
                "ALPERIA",
                x,
                y,
                json!({"outlets": [{"id": format!("{k}"), "maxPower": 22.0 * k as f64, "outletTypeCode": "Type2Mennekes"}]}),
            );
            p.parent = Some(("EChargingStation".into(), format!("ECS{i:03}")));
            plugs.push(p);
        }
    }
    sum.stations += (stations.len() + plugs.len()) as u64;
    store
        .sync_stations("EChargingStation".into(), stations, SyncFlags::default())
        .await?;
    store
        .sync_stations("EChargingPlug".into(), plugs, SyncFlags::default())
        .await?;
    let (mut rs, mut rp) = (Vec::new(), Vec::new());
    for i in 0..n {
        for t in steps(900) {
            let mut avail = 0.0;
            for k in 1..=2 {
                let free = rng.gen_bool(0.6);
                avail += free as i64 as f64;
                rp.push(RecordInput {
                    station_code: format!("ECS{i:03}-{k}"),
                    data_type: "echarging-plug-status".into(),
                    period: 900,
                    timestamp: t,
                    value: RecordValue::Text(if free { "AVAILABLE" } else { "OCCUPIED" }.into()),
                });
            }
            rs.push(RecordInput {
                station_code: format!("ECS{i:03}"),
                data_type: "number-available".into(),
                period: 900,
                timestamp: t,
                value: RecordValue::Double(avail),
            });
        }
    }
    sum.records +=
        push("EChargingStation", rs).await?.inserted + push("EChargingPlug", rp).await?.inserted;

    // Meteo.
    let n = 5 * s;
    let mut st = Vec::new();
    for i in 0..n {
        let (x, y) = (10.9 + rng.gen::<f64>() * 1.0, 46.3 + rng.gen::<f64>() * 0.6);
        st.push(station(
            format!("M{i:03}"),
            format!("Meteo station {}", i + 1),
            "SIAG",
            x,
            y,
            json!({"altitude": rng.gen_range(200..2500)}),
        ));
    }
    sum.stations += st.len() as u64;
    store
        .sync_stations("MeteoStation".into(), st, SyncFlags::default())
        .await?;
    let mut recs = Vec::new();
    for i in 0..n {
        for t in steps(600) {
            let temp = (8.0 + 9.0 * day_wave(t, -1.6) + rng.gen::<f64>()) * 10.0;
            let code = format!("M{i:03}");
            recs.push(RecordInput {
                station_code: code.clone(),
                data_type: "air-temperature".into(),
                period: 600,
                timestamp: t,
                value: RecordValue::Double(temp.round() / 10.0),
            });
            recs.push(RecordInput {
                station_code: code.clone(),
                data_type: "air-humidity".into(),
                period: 600,
                timestamp: t,
                value: RecordValue::Double(rng.gen_range(30..95) as f64),
            });
            recs.push(RecordInput {
                station_code: code.clone(),
                data_type: "wind-speed".into(),
                period: 600,
                timestamp: t,
                value: RecordValue::Double((rng.gen::<f64>() * 120.0).round() / 10.0),
            });
            recs.push(RecordInput {
                station_code: code.clone(),
                data_type: "precipitation".into(),
                period: 600,
                timestamp: t,
                value: RecordValue::Double(if rng.gen_bool(0.1) {
                    (rng.gen::<f64>() * 40.0).round() / 10.0
                } else {
                    0.0
                }),
            });
            if t % 3_600_000 == 0 {
                let sky = ["sunny", "cloudy", "rain", "snow"][rng.gen_range(0..4)];
                recs.push(RecordInput {
                    station_code: code,
                    data_type: "weather-report".into(),
                    period: 3600,
                    timestamp: t,
                    value: RecordValue::Json(
                        json!({"sky": sky, "forecast": {"tmax": (temp / 10.0 + 3.0).round(), "tmin": (temp / 10.0 - 4.0).round()}})
                            .to_string(),
                    ),
                });
            }
        }
    }
    sum.records += push("MeteoStation", recs).await?.inserted;

    // Traffic sensors along a road, joined by links.
    let n = 10 * s;
    let mut st = Vec::new();
    let mut pos = Vec::new();
    for i in 0..n {
        let (x, y) = (
            11.10 + i as f64 * 0.01,
            46.45 + (i as f64 * 0.3).sin() * 0.02,
        );
        pos.push((x, y));
        let origin = if i % 2 == 0 { "A22" } else { "FAMAS-traffic" };
        st.push(station(
            format!("T{i:03}"),
            format!("Traffic sensor km {}", 80 + i),
            origin,
            x,
            y,
            json!({"lanes": 2, "direction": "south"}),
        ));
    }
    sum.stations += st.len() as u64;
    store
        .sync_stations("TrafficSensor".into(), st, SyncFlags::default())
        .await?;
    let mut recs = Vec::new();
    for i in 0..n {
        for t in steps(600) {
            let flow = (120.0 + 100.0 * day_wave(t, -2.0 + i as f64 * 0.1))
                .max(0.0)
                .round();
            recs.push(RecordInput {
                station_code: format!("T{i:03}"),
                data_type: "Nr. Light Vehicles".into(),
                period: 600,
                timestamp: t,
                value: RecordValue::Double(flow),
            });
            recs.push(RecordInput {
                station_code: format!("T{i:03}"),
                data_type: "Average Speed Light Vehicles".into(),
                period: 600,
                timestamp: t,
                value: RecordValue::Double(
                    ((95.0 - flow / 10.0 + rng.gen::<f64>() * 5.0) * 10.0).round() / 10.0,
                ),
            });
        }
    }
    sum.records += push("TrafficSensor", recs).await?.inserted;
    let edges: Vec<EdgeInput> = (0..n.saturating_sub(1))
        .map(|i| {
            let (a, b) = (pos[i], pos[i + 1]);
            EdgeInput {
                station_type: "LinkStation".into(),
                station: StationInput {
                    code: format!("T{i:03}->T{:03}", i + 1),
                    name: format!("link {} -> {}", i, i + 1),
                    origin: Some("NOI".into()),
                    coordinate: None,
                    parent: None,
                    metadata: Some(json!({"length_m": 800})),
                },
                begin: Some(("TrafficSensor".into(), format!("T{i:03}"))),
                end: Some(("TrafficSensor".into(), format!("T{:03}", i + 1))),
                directed: true,
                line: vec![a, ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0 + 0.002), b],
            }
        })
        .collect();
    sum.edges = store.put_edges(edges).await?;

    // Events.
    let mut events = Vec::new();
    for k in 0..(3 * s) {
        let series = uuid_from(&mut rng);
        for v in 0..2 {
            let from = start + (k as i64 * 11 + v * 40) * 3_600_000;
            events.push(EventInput {
                uuid: uuid_from(&mut rng),
                origin: if k % 2 == 0 { "PROVINCE_BZ".into() } else { "A22".into() },
                category: ["roadworks", "accident", "closure"][k % 3].into(),
                series_uuid: series.clone(),
                name: format!("event {k}.{v}"),
                description: Some(format!("Demo traffic event {k}, version {v}")),
                metadata: Some(json!({"severity": k % 4})),
                location_description: Some(format!("km {}", 80 + k)),
                geometry: Some(
                    json!({"type": "LineString", "coordinates": [[11.1 + k as f64 * 0.01, 46.45], [11.11 + k as f64 * 0.01, 46.451]]}),
                ),
                start: Some(from),
                end: if v == 1 && k % 2 == 0 { None } else { Some(from + 6 * 3_600_000) },
                provenance_uuid: Some(prov.clone()),
            });
        }
    }
    sum.events = store.put_events(events).await?;
    Ok(sum)
}
