//! `serverStatus`: the server's identity, uptime, connections, operation
//! counters and its `wiredTiger.cache` section, mongod's field names and
//! number types. The cache figures come from the engine's modelled cache
//! (`schemalab_engine::cache`), marked `schemalab.modelled` in the section;
//! the rest is measured.

use bson::{Bson, Document, doc};

use super::{CommandDoc, Context};
use crate::ops::OPCOUNTERS;
use schemalab_engine::Result;

/// mongod's connection limit, reported as `available` less the current.
const MAX_CONNECTIONS: i64 = 838_860;

/// `serverStatus`, with the sections a request turned off (`{wiredTiger:
/// 0}`) left out.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    excluded: Vec<String>,
}

impl ServerStatus {
    /// Read the section switches.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let excluded = cmd
            .body
            .iter()
            .skip(1)
            .filter(|(_, v)| match v {
                Bson::Boolean(b) => !b,
                Bson::Int32(n) => *n == 0,
                Bson::Int64(n) => *n == 0,
                Bson::Double(d) => *d == 0.0,
                _ => false,
            })
            .map(|(k, _)| k.clone())
            .collect();
        Ok(Self { excluded })
    }

    /// The status document (without `ok`).
    pub fn apply(&self, ctx: &Context<'_>) -> Document {
        let counters = &ctx.ops.counters;
        let uptime = counters.started.elapsed();
        let load = |a: &std::sync::atomic::AtomicU32| {
            i64::from(a.load(std::sync::atomic::Ordering::Relaxed))
        };
        let current = load(&counters.connections_current);
        let mut out = doc! {
            "host": host(ctx),
            "version": super::admin::SERVER_VERSION,
            "process": "mongod",
            "pid": i64::from(std::process::id()),
            "uptime": uptime.as_secs_f64().floor(),
            "uptimeMillis": i64::try_from(uptime.as_millis()).unwrap_or(i64::MAX),
            "uptimeEstimate": i64::try_from(uptime.as_secs()).unwrap_or(i64::MAX),
            "localTime": ctx.engine.now(),
        };
        let mut sections: Vec<(&str, Document)> = vec![(
            "connections",
            doc! {
                "current": current as i32,
                "available": (MAX_CONNECTIONS - current) as i32,
                "totalCreated": load(&counters.connections_total),
            },
        )];
        let mut opcounters = Document::new();
        for (name, n) in OPCOUNTERS.iter().zip(&counters.opcounters) {
            let n = n.load(std::sync::atomic::Ordering::Relaxed);
            opcounters.insert(*name, i64::try_from(n).unwrap_or(i64::MAX));
        }
        sections.push(("opcounters", opcounters));
        let cache = ctx.engine.params().cache().stats().to_document();
        sections.push(("wiredTiger", doc! {"cache": cache}));
        for (name, section) in sections {
            if !self.excluded.iter().any(|e| e == name) {
                out.insert(name, section);
            }
        }
        out
    }
}

/// mongod's `host`: the machine's name, with the port unless it is the
/// default 27017.
fn host(ctx: &Context<'_>) -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    match ctx.local.map(|a| a.port()) {
        Some(port) if port != 27017 => format!("{name}:{port}"),
        _ => name,
    }
}
