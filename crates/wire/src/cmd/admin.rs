//! Handshake and diagnostic commands: `hello`/`isMaster`, `buildInfo`,
//! `ping`, `currentOp`, `killOp`, `getParameter`, `setParameter`, `getLog`,
//! `connectionStatus`, `whatsmyuri`.
//!
//! The hello reply describes a standalone 7.0 server (maxWireVersion 21)
//! with sessions but no `topologyVersion` (so drivers poll rather than
//! stream) and no `compression` (so drivers never compress).

use bson::{Bson, Document, doc};

use super::args;
use super::{CommandDoc, Context};
use crate::frame::MAX_MESSAGE_SIZE;
use schemalab_engine::{EngineError, ErrorCode, MAX_BSON_OBJECT_SIZE, Result, limits};

/// The MongoDB version the engine claims to be.
pub const SERVER_VERSION: &str = "7.0.12";
/// The wire version of MongoDB 7.0.
pub const MAX_WIRE_VERSION: i32 = 21;

/// `hello`, `isMaster` or `ismaster`.
#[derive(Debug, Clone)]
pub struct Hello {
    /// The name used, kept for diagnostics.
    pub name: String,
}

impl Hello {
    /// Nothing in the request changes the reply.
    pub fn parse(name: &str) -> Self {
        Self {
            name: name.to_string(),
        }
    }

    /// The handshake reply.
    pub fn apply(&self, ctx: &Context<'_>) -> Document {
        doc! {
            // Both spellings: legacy clients read `ismaster`, modern ones
            // `isWritablePrimary`.
            "ismaster": true,
            "isWritablePrimary": true,
            "helloOk": true,
            "maxBsonObjectSize": MAX_BSON_OBJECT_SIZE as i32,
            "maxMessageSizeBytes": MAX_MESSAGE_SIZE as i32,
            "maxWriteBatchSize": 100_000,
            "localTime": ctx.engine.now(),
            "logicalSessionTimeoutMinutes": 30,
            "connectionId": ctx.connection_id,
            "minWireVersion": 0,
            "maxWireVersion": MAX_WIRE_VERSION,
            "readOnly": false,
        }
    }
}

/// `currentOp`: the operations running, filtered by the command's other
/// fields (a query over the `inprog` entries, as mongod's). `$all` and
/// `$ownOps` change nothing: every operation is a client's, and there is no
/// authentication.
#[derive(Debug, Clone)]
pub struct CurrentOp {
    filter: Document,
}

impl CurrentOp {
    /// Only on `admin`, as mongod.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        if cmd.db != "admin" {
            return Err(EngineError::new(
                ErrorCode::UNAUTHORIZED,
                "currentOp may only be run against the admin database.",
            ));
        }
        let mut filter = Document::new();
        for (name, value) in cmd.body.iter().skip(1) {
            if args::GENERIC_FIELDS.contains(&name.as_str())
                || matches!(name.as_str(), "$all" | "$ownOps")
            {
                continue;
            }
            filter.insert(name.clone(), value.clone());
        }
        // A bad filter is refused before anything runs.
        schemalab_engine::filter::Filter::parse(&filter, None)?;
        Ok(Self { filter })
    }

    /// `{inprog: [...]}`.
    pub fn apply(&self, ctx: &Context<'_>) -> Result<Document> {
        let filter = schemalab_engine::filter::Filter::parse(&self.filter, None)?;
        let vars = schemalab_engine::expr::Vars::default();
        let mut inprog = Vec::new();
        for entry in ctx.ops.in_progress() {
            if filter.matches(&entry, &vars)? {
                inprog.push(Bson::Document(entry));
            }
        }
        Ok(doc! {"inprog": inprog})
    }
}

/// `killOp`: ask operation `op` (an `opid` from `currentOp`) to stop. As on
/// mongod, the reply does not wait for it, nor say whether it was found;
/// the operation ends at its next checkpoint with 11601 Interrupted.
#[derive(Debug, Clone)]
pub struct KillOp {
    opid: u32,
}

impl KillOp {
    /// Only on `admin`, with a numeric `op`, as mongod.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        if cmd.db != "admin" {
            return Err(EngineError::new(
                ErrorCode::UNAUTHORIZED,
                "killOp may only be run against the admin database.",
            ));
        }
        let opid = match cmd.body.get("op") {
            Some(v @ (Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_))) => {
                schemalab_engine::value::as_i64(v)
            }
            // mongod reads it with `bsonExtractIntegerField`.
            Some(other) => {
                return Err(EngineError::new(
                    ErrorCode::TYPE_MISMATCH,
                    format!(
                        "\"op\" had the wrong type. Expected number, found {}",
                        schemalab_engine::value::type_alias(other)
                    ),
                ));
            }
            None => {
                return Err(EngineError::new(
                    ErrorCode(4),
                    "Missing expected field \"op\"",
                ));
            }
        };
        Ok(Self {
            // An opid that cannot be one of ours matches nothing.
            opid: opid.and_then(|o| u32::try_from(o).ok()).unwrap_or(0),
        })
    }

    /// `{info: "attempting to kill op"}`.
    pub fn apply(&self, ctx: &Context<'_>) -> Document {
        ctx.ops.kill(self.opid);
        doc! {"info": "attempting to kill op"}
    }
}

/// `buildInfo`: the version drivers and tools check, plus our own marker.
pub fn build_info() -> Document {
    doc! {
        "version": SERVER_VERSION,
        "gitVersion": "schemalab-embedded",
        "modules": [],
        "allocator": "system",
        "javascriptEngine": "none",
        "sysInfo": "deprecated",
        "versionArray": [7_i32, 0_i32, 12_i32, 0_i32],
        "bits": 64,
        "debug": false,
        "maxBsonObjectSize": MAX_BSON_OBJECT_SIZE as i32,
        "storageEngines": ["schemalab-embedded"],
        "schemalab": {
            "engine": "schemalab embedded engine",
            "version": env!("CARGO_PKG_VERSION"),
        },
    }
}

/// `getParameter`: only what a shell asks for on connect is known.
#[derive(Debug, Clone)]
pub struct GetParameter {
    /// `getParameter: "*"` asks for everything.
    all: bool,
    /// The other fields of the request, named parameters among them.
    names: Vec<String>,
}

impl GetParameter {
    /// Read the parameter names.
    pub fn parse(cmd: &CommandDoc) -> Self {
        let all = matches!(cmd.body.get("getParameter"), Some(Bson::String(s)) if s == "*");
        let names = cmd.body.keys().skip(1).cloned().collect();
        Self { all, names }
    }

    /// The known parameters that were asked for, as this server has them.
    pub fn apply(&self, params: &limits::Params) -> Document {
        let mut reply = Document::new();
        if self.all
            || self
                .names
                .iter()
                .any(|n| n == "featureCompatibilityVersion")
        {
            reply.insert("featureCompatibilityVersion", doc! {"version": "7.0"});
        }
        if self.all
            || self
                .names
                .iter()
                .any(|n| n == "wiredTigerEngineRuntimeConfig")
        {
            reply.insert(
                "wiredTigerEngineRuntimeConfig",
                params.cache().runtime_config(),
            );
        }
        for p in limits::params() {
            if self.all || self.names.iter().any(|n| n == p.name) {
                let v = params.get(p);
                if p.boolean {
                    reply.insert(p.name, v != 0);
                } else {
                    reply.insert(p.name, v as i64);
                }
            }
        }
        reply
    }
}

/// schemalab's own `setParameter` name that empties the modelled cache
/// (`db.adminCommand({setParameter: 1, schemalabEvictCache: true})`):
/// mongod has none (its cache empties only on a restart) and refuses the
/// name as any unknown parameter.
pub const EVICT_CACHE: &str = "schemalabEvictCache";

/// `setParameter` for the limits the engine enforces (see
/// `schemalab_engine::limits`): the server's own, as a mongod process's
/// are.
#[derive(Debug, Clone)]
pub struct SetParameter {
    settings: Vec<(&'static limits::Param, u64)>,
    /// `wiredTigerEngineRuntimeConfig`: the string as given, and the
    /// `cache_size` it sets (applied to the modelled cache), if any.
    runtime_config: Option<(String, Option<u64>)>,
    /// `schemalabEvictCache: true` (schemalab's own): empty the modelled
    /// cache, as a restart would, so that the next operation runs cold.
    evict_cache: bool,
}

impl SetParameter {
    /// Check every name and value before setting anything.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        if cmd.db != "admin" {
            return Err(EngineError::new(
                ErrorCode::UNAUTHORIZED,
                "setParameter may only be run against the admin database.",
            ));
        }
        let mut settings = Vec::new();
        let mut runtime_config = None;
        let mut evict_cache = false;
        for (name, value) in cmd.body.iter().skip(1) {
            if args::GENERIC_FIELDS.contains(&name.as_str()) {
                continue;
            }
            if name == "wiredTigerEngineRuntimeConfig" {
                let Bson::String(config) = value else {
                    return Err(EngineError::bad_value(format!(
                        "Invalid value for {name}: {value}"
                    )));
                };
                let size = schemalab_engine::cache::parse_runtime_config(config)
                    .map_err(|e| EngineError::bad_value(e.to_string()))?;
                runtime_config = Some((config.clone(), size));
                continue;
            }
            if name == EVICT_CACHE {
                let Bson::Boolean(b) = value else {
                    return Err(EngineError::bad_value(format!(
                        "Invalid value for {name}: {value}"
                    )));
                };
                evict_cache = *b;
                continue;
            }
            let Some(param) = limits::params().into_iter().find(|p| p.name == name) else {
                return Err(EngineError::new(
                    ErrorCode::INVALID_OPTIONS,
                    format!(
                        "attempted to set unrecognized parameter [{name}], use help:true to see options "
                    ),
                ));
            };
            let v = match value {
                Bson::Boolean(b) if param.boolean => i64::from(*b),
                _ if param.boolean => {
                    return Err(EngineError::bad_value(format!(
                        "Invalid value for {name}: {value}"
                    )));
                }
                Bson::Int32(i) => i64::from(*i),
                Bson::Int64(i) => *i,
                Bson::Double(d) if d.fract() == 0.0 => *d as i64,
                other => {
                    return Err(EngineError::bad_value(format!(
                        "Invalid value for {name}: {other}"
                    )));
                }
            };
            let Ok(v) = u64::try_from(v) else {
                return Err(EngineError::bad_value(format!(
                    "Invalid value for {name}: {v} is negative"
                )));
            };
            settings.push((param, v));
        }
        if settings.is_empty() && runtime_config.is_none() && !evict_cache {
            return Err(EngineError::new(
                ErrorCode::INVALID_OPTIONS,
                "no option found to set, use help:true to see options ",
            ));
        }
        Ok(Self {
            settings,
            runtime_config,
            evict_cache,
        })
    }

    /// Set the values on this server; `was` is the first one's previous
    /// value.
    pub fn apply(&self, params: &limits::Params) -> Document {
        let mut reply = Document::new();
        if self.evict_cache {
            params.cache().evict_all();
        }
        if let Some((config, size)) = &self.runtime_config {
            // mongod answers with the previous string (empty at start).
            let was = params.cache().swap_runtime_config(config.clone());
            reply.insert("was", was);
            if let Some(size) = size {
                params.cache().set_max_bytes(*size);
            }
        }
        for (param, v) in &self.settings {
            let was = params.set(param, *v);
            if !reply.contains_key("was") {
                if param.boolean {
                    reply.insert("was", was != 0);
                } else {
                    reply.insert("was", was as i64);
                }
            }
        }
        reply
    }
}

/// `getLog`.
#[derive(Debug, Clone)]
pub struct GetLog {
    which: String,
}

impl GetLog {
    /// Read the log name.
    pub fn parse(cmd: &CommandDoc) -> Result<Self> {
        let which = args::string(cmd, "getLog", "getLog")?.unwrap_or_default();
        Ok(Self { which })
    }

    /// `global` holds the engine's warnings (documents that would fail
    /// validation under `validationAction: "warn"`); `startupWarnings` is
    /// empty.
    pub fn apply(&self) -> Document {
        match self.which.as_str() {
            "*" => doc! {"names": ["global", "startupWarnings"]},
            "global" => {
                let (total, lines) = schemalab_engine::global_log();
                doc! {
                    "totalLinesWritten": i64::try_from(total).unwrap_or(i64::MAX),
                    "log": lines,
                }
            }
            _ => doc! {"totalLinesWritten": 0, "log": []},
        }
    }
}

/// `connectionStatus`: there is no authentication.
pub fn connection_status() -> Document {
    doc! {"authInfo": {"authenticatedUsers": [], "authenticatedUserRoles": []}}
}

/// `whatsmyuri`: the client's address as the server sees it.
pub fn whatsmyuri(ctx: &Context<'_>) -> Document {
    let you = ctx.peer.map(|p| p.to_string()).unwrap_or_default();
    doc! {"you": you}
}
