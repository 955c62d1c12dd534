//! The integration tests, one binary: a module per area (engine, wire,
//! course, exercises, shell, TUI, CLI), sharing the helpers of
//! `tests/support/` (servers on 127.0.0.1:0, the course, CLI runs,
//! reports of real tiny runs). One binary links the workspace once;
//! `cargo test <module>::` runs one area.

#![allow(clippy::unwrap_used)]

#[path = "../support/mod.rs"]
#[allow(dead_code)]
mod support;

mod aggregation;
mod cache;
mod cli;
mod concurrency;
mod conformance;
mod course;
mod datasets;
mod dialect;
mod engine;
mod exercises;
mod explain;
mod grading;
mod i18n;
mod i18n_cli;
mod i18n_reports;
mod indexes;
mod lessons;
mod limits;
mod measure;
mod memory_limits;
mod mongosh_corpus;
mod profiler;
mod safety;
mod semantics;
mod shell;
mod size_model;
mod tui;
mod tui_e2e;
mod tui_presenter;
mod tui_zh;
mod updates;
mod validation;
mod wire;
mod wire_fuzz;
mod workspace_files;
