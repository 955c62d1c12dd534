//! Handshake and diagnostic commands: `hello`/`isMaster`, `buildInfo`,
//! `ping`, `getParameter`, `getLog`, `connectionStatus`, `whatsmyuri`.
//!
//! The hello reply describes a standalone 7.0 server (maxWireVersion 21)
//! with sessions but no `topologyVersion` (so drivers poll rather than
//! stream) and no `compression` (so drivers never compress).

use bson::{Bson, Document, doc};

use super::args;
use super::{CommandDoc, Context};
use crate::engine::{MAX_BSON_OBJECT_SIZE, Result};
use crate::wire::frame::MAX_MESSAGE_SIZE;

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

    /// The known parameters that were asked for.
    pub fn apply(&self) -> Document {
        let mut reply = Document::new();
        if self.all
            || self
                .names
                .iter()
                .any(|n| n == "featureCompatibilityVersion")
        {
            reply.insert("featureCompatibilityVersion", doc! {"version": "7.0"});
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

    /// The engine keeps no log, so every log is empty.
    pub fn apply(&self) -> Document {
        if self.which == "*" {
            doc! {"names": ["global", "startupWarnings"]}
        } else {
            doc! {"totalLinesWritten": 0, "log": []}
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
