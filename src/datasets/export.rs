//! Extended JSON export: one file per collection, each a JSON array that
//! `mongoimport --jsonArray` accepts, written as the documents stream by.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use bson::Bson;

use super::{Catalog, DatasetError, DatasetStream, Scale};

/// Which Extended JSON flavour to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExtJsonMode {
    /// Every type explicit (`{"$numberInt": "3"}`): round-trips exactly.
    Canonical,
    /// Numbers as plain JSON, dates as ISO strings: easier to read.
    #[default]
    Relaxed,
}

/// Exports dataset `name` with the built-in catalog, canonical mode (so
/// types survive a round trip), into `out_dir/<collection>.json`.
pub fn export_extjson(
    name: &str,
    scale: Scale,
    seed: u64,
    out_dir: impl AsRef<Path>,
) -> Result<Vec<PathBuf>, DatasetError> {
    export_extjson_with(
        &Catalog::builtin()?,
        name,
        scale,
        seed,
        out_dir,
        ExtJsonMode::Canonical,
    )
}

/// Exports with an explicit catalog and flavour.
pub fn export_extjson_with(
    catalog: &Catalog,
    name: &str,
    scale: Scale,
    seed: u64,
    out_dir: impl AsRef<Path>,
    mode: ExtJsonMode,
) -> Result<Vec<PathBuf>, DatasetError> {
    catalog.export_extjson(name, scale, seed, out_dir.as_ref(), mode)
}

struct Out {
    path: PathBuf,
    writer: BufWriter<File>,
    first: bool,
}

pub(crate) fn write_stream(
    stream: DatasetStream,
    out_dir: &Path,
    mode: ExtJsonMode,
) -> Result<Vec<PathBuf>, DatasetError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DatasetError::Io { path, source }
    };
    std::fs::create_dir_all(out_dir).map_err(io(out_dir))?;
    // Files open in stream order and stay open, so the writer does not
    // depend on collections arriving one after another.
    let mut order: Vec<String> = Vec::new();
    let mut outs: HashMap<String, Out> = HashMap::new();
    for (collection, _) in stream.counts() {
        let path = out_dir.join(format!("{collection}.json"));
        let file = File::create(&path).map_err(io(&path))?;
        let mut writer = BufWriter::with_capacity(1 << 16, file);
        writer.write_all(b"[").map_err(io(&path))?;
        order.push(collection.clone());
        outs.insert(
            collection.clone(),
            Out {
                path,
                writer,
                first: true,
            },
        );
    }
    for (collection, doc) in stream {
        let Some(out) = outs.get_mut(&collection) else {
            continue;
        };
        let value = match mode {
            ExtJsonMode::Canonical => Bson::Document(doc).into_canonical_extjson(),
            ExtJsonMode::Relaxed => Bson::Document(doc).into_relaxed_extjson(),
        };
        let sep: &[u8] = if out.first { b"\n" } else { b",\n" };
        out.first = false;
        out.writer.write_all(sep).map_err(io(&out.path))?;
        serde_json::to_writer(&mut out.writer, &value)?;
    }
    let mut paths = Vec::new();
    for collection in order {
        if let Some(mut out) = outs.remove(&collection) {
            out.writer.write_all(b"\n]\n").map_err(io(&out.path))?;
            out.writer.flush().map_err(io(&out.path))?;
            paths.push(out.path);
        }
    }
    Ok(paths)
}
