//! schemalab: a terminal workbench that teaches MongoDB schema design by
//! measurement.
//!
//! # Layout
//!
//! The app is the top layer of a workspace of three crates:
//!
//! - `schemalab-engine` (`crates/engine`): the embedded, in-memory,
//!   MongoDB-compatible database. It knows nothing of the layers above it.
//! - `schemalab-wire` (`crates/wire`): the MongoDB wire protocol server
//!   that exposes the engine on 127.0.0.1, so the official driver, mongosh
//!   and pymongo can use it.
//! - this crate, whose modules are:
//!
//! - [`connect`]: opens the database for every command and the TUI (the
//!   embedded engine on a loopback port, or `--uri`).
//! - [`course`]: lessons, the experiment runner, claims and reports.
//! - [`measure`]: the one measurement path lessons and exercises share.
//! - [`tui`]: the terminal workbench, rendering the course's own types.
//!
//! Everything above the wire layer reaches the database only through the
//! official `mongodb` driver, so the same code runs against a real MongoDB.

// Unsafe code is denied; the one exception is `dialect::js::load_prelude`,
// which loads the prelude's QuickJS bytecode (compiled in this process).
#![deny(unsafe_code)]

pub mod bench;
pub mod bundle;
pub mod connect;
pub mod course;
pub mod datasets;
pub mod dialect;
pub mod doctor;
pub mod exercises;
pub mod files;
pub mod locale;
pub mod measure;
pub mod place;
pub mod tui;
