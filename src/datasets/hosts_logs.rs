//! `hosts_logs`: servers and their log messages, one-to-squillions: a few
//! hosts produce most of the lines, so embedding logs in hosts is hopeless
//! and the child must reference the parent.

use bson::doc;

use super::random::{DAY, EPOCH_SECS, Gen, Keyed, Scatter, Zipf, capitalise, date, spread};
use super::{DatasetError, Family, ParamKind, Params, Phase};

pub(super) const FAMILY: Family = Family {
    name: "hosts_logs",
    collections: &["hosts", "logs"],
    params: &[
        ("hosts", ParamKind::Count),
        ("logs", ParamKind::Count),
        ("host_zipf", ParamKind::Real),
        ("days", ParamKind::Count),
    ],
    phases,
};

const ROLES: &[&str] = &["web", "api", "db", "cache", "queue", "batch"];
const DCS: &[&str] = &["sha-1", "sha-2", "fra-1", "sin-1", "iad-1"];
const SERVICES: &[&str] = &["nginx", "app", "cron", "sshd", "kernel", "mongod", "worker"];
const LEVELS: &[(&str, u32)] = &[
    ("DEBUG", 15),
    ("INFO", 70),
    ("WARN", 10),
    ("ERROR", 4),
    ("FATAL", 1),
];

fn phases(root: u64, p: &Params) -> Result<Vec<Phase>, DatasetError> {
    let hosts = p.count_min("hosts", 1)?;
    let logs = p.count("logs")?;
    let host_zipf = p.real("host_zipf")?;
    let days = p.count_min("days", 1)? as i64;
    let host_key = Keyed::new(root, "hosts");
    let host_id = move |h: u64| host_key.oid(h, EPOCH_SECS - 90 * DAY + h as i64 * 60);
    let hostname = move |h: u64| {
        let role = ROLES[host_key.below(h, 1, ROLES.len() as u64) as usize];
        format!("{role}-{:04}", h + 1)
    };

    let hosts_phase = Phase::new("hosts", hosts, move || {
        let mut g = Gen::new(root, "hosts.content");
        Box::new((0..hosts).map(move |h| {
            doc! {
                "_id": host_id(h),
                "hostname": hostname(h),
                "ip": format!("10.{}.{}.{}", g.range(0, 255), g.range(0, 255), g.range(1, 254)),
                "datacenter": *g.pick(DCS),
                "os": *g.pick(&["debian-12", "ubuntu-24.04", "alma-9"]),
                "cpus": *g.pick(&[2i64, 4, 8, 16, 32]),
                "memory_gb": *g.pick(&[4i64, 8, 16, 64, 128]),
                "tags": [*g.pick(&["prod", "staging"]), capitalise(&g.word()).to_lowercase()],
            }
        }))
    });

    let logs_phase = Phase::new("logs", logs, move || {
        let mut g = Gen::new(root, "logs");
        let ids = Keyed::new(root, "logs.ids");
        let zipf = Zipf::new(hosts, host_zipf);
        let order = Scatter::new(hosts, root ^ 0x10);
        let names: Vec<String> = (0..hosts).map(hostname).collect();
        Box::new((0..logs).map(move |i| {
            let h = order.map(zipf.rank(g.unit()));
            let ts = spread(EPOCH_SECS, days * DAY, i, logs, g.unit());
            let level = *g.weighted(LEVELS);
            let service = *g.pick(SERVICES);
            let message = match level {
                "ERROR" | "FATAL" => format!("{} failed: {}", g.word(), g.words_between(3, 10)),
                "WARN" => format!("slow {} took {} ms", g.word(), g.range(200, 9000)),
                _ => g.sentence(3, 12),
            };
            doc! {
                "_id": ids.oid(i, ts),
                "host_id": host_id(h),
                "hostname": names[h as usize].as_str(),
                "ts": date(ts),
                "level": level,
                "service": service,
                "pid": g.range(100, 65_000),
                "message": message,
            }
        }))
    });
    Ok(vec![hosts_phase, logs_phase])
}
