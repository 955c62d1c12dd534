//! `sensors`: a fleet of sensors and one reading per sensor per minute, the
//! raw material of the bucket pattern (and the dataset that reaches a
//! million documents first).

use bson::doc;

use super::random::{EPOCH_SECS, Gen, Keyed, capitalise, date, round};
use super::{DatasetError, Family, ParamKind, Params, Phase};

pub(super) const FAMILY: Family = Family {
    name: "sensors",
    collections: &["sensors", "readings"],
    params: &[("sensors", ParamKind::Count), ("minutes", ParamKind::Count)],
    phases,
};

/// Kind, unit, typical level, daily swing, noise.
const KINDS: &[(&str, &str, f64, f64, f64)] = &[
    ("temperature", "C", 21.0, 4.0, 0.15),
    ("humidity", "%", 45.0, 10.0, 0.6),
    ("pressure", "hPa", 1013.0, 3.0, 0.2),
    ("co2", "ppm", 600.0, 250.0, 8.0),
];

fn sensor_id(s: u64) -> String {
    format!("S-{:05}", s + 1)
}

fn phases(root: u64, p: &Params) -> Result<Vec<Phase>, DatasetError> {
    let sensors = p.count_min("sensors", 1)?;
    let minutes = p.count("minutes")?;
    let kind_key = Keyed::new(root, "sensors.kind");
    let kind = move |s: u64| KINDS[kind_key.below(s, 0, KINDS.len() as u64) as usize];

    let sensors_phase = Phase::new("sensors", sensors, move || {
        let mut g = Gen::new(root, "sensors");
        Box::new((0..sensors).map(move |s| {
            let (k, unit, ..) = kind(s);
            doc! {
                "_id": sensor_id(s),
                "kind": k,
                "unit": unit,
                "site": format!("{} {}", capitalise(&g.word()), *g.pick(&["Hall", "Lab", "Depot", "Roof"])),
                "floor": g.range(0, 12),
                "installed_at": date(EPOCH_SECS - g.range(30, 900) * 86_400),
            }
        }))
    });

    let readings = sensors * minutes;
    let readings_phase = Phase::new("readings", readings, move || {
        let mut g = Gen::new(root, "readings");
        let ids = Keyed::new(root, "readings.ids");
        let names: Vec<String> = (0..sensors).map(sensor_id).collect();
        // Each sensor drifts slowly (a mean-reverting random walk) around
        // its level, plus a daily cycle and measurement noise.
        let mut drift = vec![0.0f64; sensors as usize];
        let phase_shift: Vec<f64> = (0..sensors).map(|s| kind_key.unit(s, 1) * 0.5).collect();
        Box::new((0..readings).map(move |i| {
            let minute = i / sensors;
            let s = i % sensors;
            let (_, unit, level, swing, noise) = kind(s);
            let d = &mut drift[s as usize];
            *d = 0.995 * *d + noise * 0.5 * g.normal();
            let day = (minute as f64 / 1440.0 + phase_shift[s as usize]) * std::f64::consts::TAU;
            let value = level + swing * day.sin() + *d + noise * g.normal();
            let ts = EPOCH_SECS + minute as i64 * 60;
            doc! {
                "_id": ids.oid(i, ts),
                "sensor_id": names[s as usize].as_str(),
                "ts": date(ts),
                "value": round(value, 2),
                "unit": unit,
            }
        }))
    });
    Ok(vec![sensors_phase, readings_phase])
}
