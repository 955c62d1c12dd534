//! The steady-state working-set figure of an experiment
//! (`[experiments.working_set]`): each variant's read workload, operations
//! drawn by their weights and keys by a Zipf skew over the lesson's
//! popularity order, run under a cache of the stated size (smaller than
//! the data, typically). The cache starts empty, every collection is read
//! once (as on a server up for a while), a warm-up settles it, then
//! the `serverStatus().wiredTiger.cache` "bytes read into cache" delta
//! over the measured requests, per 100, is the figure (modelled on the
//! embedded engine; docs/CACHE_MODEL.md).
//!
//! Every variant runs the same sequence (the experiment's seed), under the
//! same cache. Writes are left out: run again and again they would change
//! the data the variants are compared on. On a server whose cache cannot
//! be set (no privilege) or emptied, the figure is "not measured", with
//! the server's reason; the cache's size is put back after the run.

use bson::Bson;
use mongodb::Client;
use serde::{Deserialize, Serialize};

use super::claims::{Val, WsField};
use super::manifest::{Experiment, OpKind, WorkingSetSpec};
use super::runner::{VariantReport, parse_in};
use crate::datasets::random::{Gen, Zipf};
use crate::dialect::{Session, WritePolicy, parse_program};
use crate::locale::Message;
use crate::measure::cache::{self, CacheCounters};

/// WiredTiger's smallest `cache_size`.
pub const MIN_CACHE: i64 = 1024 * 1024;

/// What the working-set run measured for one variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkingSetFigure {
    /// The cache's size for the run, in bytes.
    pub cache_bytes: i64,
    /// Requests run to fill the cache, then measured.
    pub warmup: u32,
    pub requests: u32,
    /// Bytes read into the cache per 100 measured requests (`null`: not
    /// measured).
    pub bytes_read_per_100: Option<f64>,
    /// Pages read into the cache per 100 measured requests.
    pub pages_read_per_100: Option<f64>,
    /// The cache is the embedded engine's model.
    pub modelled: bool,
    /// Why there is no figure.
    pub not_measured: Option<Message>,
}

/// Errors of the working-set run, each said in the report.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkingSetError {
    #[error("the cache size '{0}' is not a size (\"25%\" of the data, or \"8M\")")]
    BadSize(String),
    #[error("the server's cache could not be set: {0}")]
    NoCache(String),
    #[error("the keys statement did not return an array of keys")]
    NoKeys,
    #[error("{0}")]
    Failed(Message),
}

impl WorkingSetError {
    /// The error in the reader's words.
    pub fn message(&self) -> Message {
        match self {
            WorkingSetError::BadSize(s) => Message::new(
                "the cache size '{size}' is not a size (\"25%\" of the data, or \"8M\")",
            )
            .arg("size", s),
            WorkingSetError::NoCache(e) => {
                Message::new("not measured: the server's cache could not be set or emptied ({e})")
                    .arg("e", e)
            }
            WorkingSetError::NoKeys => {
                Message::new("the keys statement did not return an array of keys")
            }
            WorkingSetError::Failed(e) => {
                Message::new("the working-set run failed: {e}").arg_msg("e", e.clone())
            }
        }
    }
}

/// The cache's size for the run: `"25%"` of `data` bytes, or a size with
/// WiredTiger's suffixes; never under 1 MB (WiredTiger's least).
pub fn cache_size(spec: &str, data: i64) -> Result<i64, WorkingSetError> {
    let bad = || WorkingSetError::BadSize(spec.to_string());
    let s = spec.trim();
    let bytes = if let Some(pct) = s.strip_suffix('%') {
        let p: f64 = pct.trim().parse().map_err(|_| bad())?;
        if !(p > 0.0 && p.is_finite()) {
            return Err(bad());
        }
        (data as f64 * p / 100.0) as i64
    } else {
        let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let (n, suffix) = s.split_at(digits);
        let n: i64 = n.parse().map_err(|_| bad())?;
        let unit: i64 = match suffix.to_ascii_uppercase().as_str() {
            "" | "B" => 1,
            "K" | "KB" => 1 << 10,
            "M" | "MB" => 1 << 20,
            "G" | "GB" => 1 << 30,
            _ => return Err(bad()),
        };
        n.checked_mul(unit).ok_or_else(bad)?
    };
    Ok(bytes.max(MIN_CACHE))
}

/// Run the experiment's working set on every variant that ran, and keep
/// each one's figure in its report.
pub async fn run(
    client: &Client,
    exp: &Experiment,
    spec: &WorkingSetSpec,
    variants: &mut [VariantReport],
) {
    let data = variants
        .iter()
        .filter(|v| v.failure.is_none())
        .map(|v| v.collections.iter().map(|c| c.size).sum::<i64>())
        .max()
        .unwrap_or(0);
    let size = cache_size(spec.cache.get_ref(), data);
    let original = cache::stats(client).await;
    for v in variants.iter_mut().filter(|v| v.failure.is_none()) {
        let mut figure = WorkingSetFigure {
            cache_bytes: *size.as_ref().unwrap_or(&0),
            warmup: spec.warmup,
            requests: spec.requests,
            bytes_read_per_100: None,
            pages_read_per_100: None,
            modelled: original.as_ref().is_ok_and(|o| o.modelled),
            not_measured: None,
        };
        let measured = match (&size, &original) {
            (Ok(size), Ok(_)) => run_variant(client, exp, spec, &v.id, &v.database, *size).await,
            (Err(e), _) => Err(e.clone()),
            (_, Err(e)) => Err(WorkingSetError::NoCache(e.clone())),
        };
        match measured {
            Ok((before, after)) => {
                let per_100 = |d: i64| d as f64 * 100.0 / f64::from(spec.requests.max(1));
                figure.bytes_read_per_100 = Some(per_100(after.bytes_read - before.bytes_read));
                figure.pages_read_per_100 = Some(per_100(after.pages_read - before.pages_read));
            }
            Err(e) => figure.not_measured = Some(e.message()),
        }
        v.working_set = Some(figure);
    }
    if let Ok(o) = original {
        // Put the server's cache back as it was (a failure here leaves
        // the run's size: nothing measured depends on it).
        let _ = cache::set_size(client, o.maximum_bytes).await;
    }
}

/// One variant's run: the counters before and after the measured requests.
async fn run_variant(
    client: &Client,
    exp: &Experiment,
    spec: &WorkingSetSpec,
    vid: &str,
    db: &str,
    size: i64,
) -> Result<(CacheCounters, CacheCounters), WorkingSetError> {
    let db = db.to_string();
    let failed = WorkingSetError::Failed;
    let server = |e: String| WorkingSetError::Failed(Message::verbatim(e));
    let mut session =
        Session::new(client.clone(), db.clone()).with_policy(WritePolicy::Only(db.clone()));
    // The popularity order, most popular first.
    let keys_src = spec.keys.get_ref();
    let program = parse_in(keys_src, &db).map_err(|e| failed(e.message))?;
    let (_, keys) = session.eval_value(&program).await;
    let keys = match keys.map_err(|e| failed(e.with_source(keys_src)))? {
        Bson::Array(k) if !k.is_empty() => k,
        _ => return Err(WorkingSetError::NoKeys),
    };
    let literals: Vec<String> = keys.iter().map(crate::dialect::print::inspect).collect();
    // The reads of the mix, each with its weight and statement here.
    let reads: Vec<(f64, &str)> = exp
        .operations
        .iter()
        .filter(|o| o.kind == OpKind::Read && o.weight > 0.0)
        .filter_map(|o| o.run.get(vid).map(|s| (o.weight, s.get_ref().as_str())))
        .collect();
    let total: f64 = reads.iter().map(|(w, _)| w).sum();
    if reads.is_empty() || total <= 0.0 {
        return Err(failed(Message::new("the experiment has no weighted read")));
    }
    let zipf = Zipf::new(literals.len() as u64, spec.skew);
    let mut g = Gen::new(exp.seed, "working-set");
    let bind = spec.bind.get_ref();
    let mut programs = Vec::new();
    for (_, stmt) in &reads {
        let template = format!("const {bind} = __KEY__;\n{stmt}");
        // Checked once: the key literal cannot leave the database.
        parse_in(&template.replace("__KEY__", "null"), &db).map_err(|e| failed(e.message))?;
        programs.push(template);
    }
    cache::set_size(client, size)
        .await
        .map_err(WorkingSetError::NoCache)?;
    cache::evict(client)
        .await
        .map_err(WorkingSetError::NoCache)?;
    prime(client, &db).await.map_err(server)?;
    let mut before = None;
    for i in 0..spec.warmup + spec.requests {
        if i == spec.warmup {
            before = Some(cache::stats(client).await.map_err(server)?);
        }
        let mut u = g.unit() * total;
        let at = reads
            .iter()
            .position(|(w, _)| {
                u -= w;
                u < 0.0
            })
            .unwrap_or(reads.len() - 1);
        let key = &literals[zipf.rank(g.unit()) as usize];
        let src = programs[at].replace("__KEY__", key);
        let program = parse_program(&src).map_err(|e| failed(e.with_source(&src)))?;
        let (_, res) = session.eval_value(&program).await;
        res.map_err(|e| failed(e.with_source(&src)))?;
    }
    let before = match before {
        Some(b) => b,
        None => cache::stats(client).await.map_err(server)?,
    };
    let after = cache::stats(client).await.map_err(server)?;
    Ok((before, after))
}

/// Read every collection of `db` once, as a server that has been up for
/// a while has: the measured figure is then what the cache cannot keep,
/// not what no request had asked for yet. Each is a collection scan that
/// matches nothing (every record's page is read, no document sent).
async fn prime(client: &Client, db: &str) -> Result<(), String> {
    let database = client.database(db);
    let names = database
        .list_collection_names()
        .await
        .map_err(|e| e.to_string())?;
    for name in names.iter().filter(|n| !n.starts_with("system.")) {
        database
            .collection::<bson::Document>(name)
            .find(bson::doc! {"__schemalab_prime": {"$exists": true}})
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A working-set metric of `v`, for claims.
pub fn metric(v: &VariantReport, field: WsField) -> Result<Val, Message> {
    let ws = v.working_set.as_ref().ok_or_else(|| {
        Message::new("variant '{variant}' has no working-set run (no [experiments.working_set])")
            .arg("variant", &v.id)
    })?;
    let not_measured = || {
        ws.not_measured
            .clone()
            .unwrap_or_else(|| Message::new("not measured"))
    };
    match field {
        WsField::BytesRead => ws.bytes_read_per_100.map(Val::Num).ok_or_else(not_measured),
        WsField::PagesRead => ws.pages_read_per_100.map(Val::Num).ok_or_else(not_measured),
        WsField::CacheSize => Ok(Val::Num(ws.cache_bytes as f64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_are_shares_of_the_data_or_sizes() {
        assert_eq!(cache_size("50%", 100 << 20), Ok(50 << 20));
        assert_eq!(cache_size("8M", 0), Ok(8 << 20));
        assert_eq!(cache_size("2gb", 0), Ok(2 << 30));
        // Never under WiredTiger's 1 MB.
        assert_eq!(cache_size("1%", 1000), Ok(MIN_CACHE));
        assert!(cache_size("lots", 0).is_err());
        assert!(cache_size("-5%", 0).is_err());
    }
}
