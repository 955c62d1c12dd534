//! Seeded datasets for the course: deterministic generators that stream
//! documents, a catalog of their sizes that instructors edit without
//! recompiling, Extended JSON export, loading through the driver, and
//! copying a loaded dataset into another database on the server.
//!
//! Every dataset is a *family* (one file under `datasets/`) that turns
//! `(name, scale, seed)` and the scale's parameters from
//! `datasets/catalog.toml` into an ordered list of collection *phases*. A
//! phase streams its documents lazily, so even the million-document scales
//! never sit in memory at once. The same inputs always give the same bytes:
//! all randomness comes from ChaCha8 and splitmix64 keyed by the inputs,
//! ObjectIds are built from those draws, and dates count from
//! [`EPOCH_SECS`](random::EPOCH_SECS) (2026-01-01T00:00:00Z).

mod catalog;
mod categories;
mod community;
mod copy;
mod export;
mod films;
mod hosts_logs;
mod load;
mod notifications;
mod people;
mod policies;
mod products;
pub mod random;
mod sensors;
mod shop;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use bson::Document;

use crate::locale::Message;

pub use catalog::{
    BUILTIN_CATALOG, Catalog, DatasetSpec, MAX_COUNT, MAX_REAL, load_catalog, range_errors,
};
pub use copy::copy_database;
pub use export::{ExtJsonMode, export_extjson, export_extjson_with};
pub use load::{LoadReport, Progress, SAFE_DB_PREFIX, check_db_name, load, load_with};

/// How big a dataset is generated. Parameters per scale live in the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scale {
    /// A few hundred to a few thousand documents: the course runs in seconds.
    Tiny,
    /// Tens of thousands: each experiment well under 3 s in memory.
    Default,
    /// At least a million documents where a lesson needs volume.
    Large,
}

impl Scale {
    pub const ALL: [Scale; 3] = [Scale::Tiny, Scale::Default, Scale::Large];

    pub fn as_str(self) -> &'static str {
        match self {
            Scale::Tiny => "tiny",
            Scale::Default => "default",
            Scale::Large => "large",
        }
    }
}

impl fmt::Display for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scale {
    type Err = DatasetError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tiny" => Ok(Scale::Tiny),
            "default" => Ok(Scale::Default),
            "large" => Ok(Scale::Large),
            other => Err(DatasetError::UnknownScale(other.to_string())),
        }
    }
}

/// Everything that can go wrong in this module. Each variant's words are
/// one [`Message`] ([`DatasetError::message`]); the causes from outside
/// (the operating system, the driver, the encoders) stay as they wrote them.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{}", self.message())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The catalog is not valid TOML or has the wrong shape.
    #[error("{}", self.message())]
    Catalog {
        file: String,
        line: usize,
        col: usize,
        message: Message,
    },
    #[error("{}", self.message())]
    UnknownDataset(String),
    #[error("{}", self.message())]
    UnknownScale(String),
    #[error("{}", self.message())]
    MissingParam { dataset: String, param: String },
    #[error("{}", self.message())]
    BadParam {
        dataset: String,
        param: String,
        message: Message,
    },
    /// A safety rule: schemalab writes only databases named `schemalab_*`.
    #[error("{}", self.message())]
    UnsafeDatabase(String),
    /// A database holds something a load does not make, so copying it
    /// would not give what loading gives.
    #[error("{}", self.message())]
    NotCopyable {
        src: String,
        dst: String,
        reason: String,
    },
    #[error("{}", self.message())]
    Driver(#[from] mongodb::error::Error),
    #[error("{}", self.message())]
    Bson(#[from] bson::ser::Error),
    /// A generated document could not be encoded as raw BSON for loading.
    #[error("{}", self.message())]
    RawBson(#[from] bson::raw::Error),
    #[error("{}", self.message())]
    Json(#[from] serde_json::Error),
}

impl DatasetError {
    /// The error's words, for any language.
    pub fn message(&self) -> Message {
        match self {
            DatasetError::Io { path, source } => Message::new("{path}: {message}")
                .arg("path", path.display())
                .arg("message", source),
            DatasetError::Catalog {
                file,
                line,
                col,
                message,
            } => Message::new("{file}:{line}:{col}: {message}")
                .arg("file", file)
                .arg("line", line)
                .arg("col", col)
                .arg_msg("message", message.clone()),
            DatasetError::UnknownDataset(name) => {
                Message::new("unknown dataset `{name}` (known: {known})")
                    .arg("name", name)
                    .arg("known", family_names().join(", "))
            }
            DatasetError::UnknownScale(scale) => {
                Message::new("unknown scale `{scale}` (expected tiny, default or large)")
                    .arg("scale", scale)
            }
            DatasetError::MissingParam { dataset, param } => {
                Message::new("dataset `{dataset}`: missing parameter `{param}`")
                    .arg("dataset", dataset)
                    .arg("param", param)
            }
            DatasetError::BadParam {
                dataset,
                param,
                message,
            } => Message::new("dataset `{dataset}`: parameter `{param}`: {message}")
                .arg("dataset", dataset)
                .arg("param", param)
                .arg_msg("message", message.clone()),
            DatasetError::UnsafeDatabase(db) => Message::new(
                "refusing to write database `{db}`: schemalab only writes databases whose name starts with `schemalab_`",
            )
            .arg("db", db),
            DatasetError::Driver(e) => Message::new("database: {e}").arg("e", e),
            DatasetError::Bson(e) => Message::new("BSON encoding: {e}").arg("e", e),
            DatasetError::RawBson(e) => Message::new("BSON encoding: {e}").arg("e", e),
            DatasetError::NotCopyable { src, dst, reason } => {
                Message::new("cannot copy database `{src}` to `{dst}`: {reason}")
                    .arg("src", src)
                    .arg("dst", dst)
                    .arg("reason", reason)
            }
            DatasetError::Json(e) => Message::new("JSON encoding: {e}").arg("e", e),
        }
    }
}

impl crate::locale::Localized for DatasetError {
    fn render_in(&self, lang: crate::locale::Lang) -> String {
        self.message().render_in(lang)
    }
}

/// One parameter value from the catalog (or overridden by a caller).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamValue {
    Int(i64),
    Float(f64),
}

/// The kind a family expects for one of its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A non-negative integer (document counts, sizes).
    Count,
    /// A real number (exponents, probabilities); integers are accepted.
    Real,
}

/// The parameters of one dataset at one scale.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    dataset: String,
    values: BTreeMap<String, ParamValue>,
}

impl Params {
    pub fn new(dataset: &str) -> Self {
        Self {
            dataset: dataset.to_string(),
            values: BTreeMap::new(),
        }
    }

    /// Sets (or overrides) one parameter.
    pub fn set(&mut self, name: &str, value: ParamValue) -> &mut Self {
        self.values.insert(name.to_string(), value);
        self
    }

    pub fn get(&self, name: &str) -> Option<ParamValue> {
        self.values.get(name).copied()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, ParamValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// A non-negative integer parameter.
    pub fn count(&self, name: &str) -> Result<u64, DatasetError> {
        match self.get(name) {
            Some(ParamValue::Int(n)) if (0..=catalog::MAX_COUNT).contains(&n) => Ok(n as u64),
            Some(_) => Err(self.bad(
                name,
                Message::new("expected an integer from 0 to at most {max}")
                    .arg("max", catalog::MAX_COUNT),
            )),
            None => Err(self.missing(name)),
        }
    }

    /// A real parameter (an integer is accepted).
    pub fn real(&self, name: &str) -> Result<f64, DatasetError> {
        match self.get(name) {
            Some(ParamValue::Int(n)) => Ok(n as f64),
            Some(ParamValue::Float(x)) if x.is_finite() => Ok(x),
            Some(_) => Err(self.bad(name, "expected a finite number")),
            None => Err(self.missing(name)),
        }
    }

    /// A probability in [0, 1].
    pub fn prob(&self, name: &str) -> Result<f64, DatasetError> {
        let p = self.real(name)?;
        if (0.0..=1.0).contains(&p) {
            Ok(p)
        } else {
            Err(self.bad(name, "expected a number in [0, 1]"))
        }
    }

    /// A count that must be at least `min`.
    pub fn count_min(&self, name: &str, min: u64) -> Result<u64, DatasetError> {
        let n = self.count(name)?;
        if n >= min {
            Ok(n)
        } else {
            Err(self.bad(name, Message::new("must be at least {min}").arg("min", min)))
        }
    }

    fn missing(&self, name: &str) -> DatasetError {
        DatasetError::MissingParam {
            dataset: self.dataset.clone(),
            param: name.to_string(),
        }
    }

    fn bad(&self, name: &str, message: impl Into<Message>) -> DatasetError {
        DatasetError::BadParam {
            dataset: self.dataset.clone(),
            param: name.to_string(),
            message: message.into(),
        }
    }
}

/// A lazily built stream of one collection's documents.
pub(crate) type DocIter = Box<dyn Iterator<Item = Document> + Send>;

/// One collection of a dataset: its exact size and how to stream it.
pub(crate) struct Phase {
    collection: &'static str,
    count: u64,
    make: Box<dyn FnOnce() -> DocIter + Send>,
}

impl Phase {
    pub(crate) fn new(
        collection: &'static str,
        count: u64,
        make: impl FnOnce() -> DocIter + Send + 'static,
    ) -> Self {
        Self {
            collection,
            count,
            make: Box::new(make),
        }
    }
}

/// A dataset family: its collections, parameters and generator.
pub(crate) struct Family {
    pub name: &'static str,
    pub collections: &'static [&'static str],
    pub params: &'static [(&'static str, ParamKind)],
    pub phases: fn(root: u64, params: &Params) -> Result<Vec<Phase>, DatasetError>,
}

const FAMILIES: &[Family] = &[
    community::FAMILY,
    sensors::FAMILY,
    products::FAMILY,
    films::FAMILY,
    hosts_logs::FAMILY,
    shop::FAMILY,
    notifications::FAMILY,
    policies::FAMILY,
    categories::FAMILY,
    people::FAMILY,
];

pub(crate) fn family(name: &str) -> Result<&'static Family, DatasetError> {
    FAMILIES
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| DatasetError::UnknownDataset(name.to_string()))
}

/// The names of every dataset this build can generate.
pub fn family_names() -> Vec<&'static str> {
    FAMILIES.iter().map(|f| f.name).collect()
}

/// The stream of `(collection, document)` pairs of one generation run,
/// collection after collection, in the order of [`DatasetStream::counts`].
pub struct DatasetStream {
    counts: Vec<(String, u64)>,
    pending: std::vec::IntoIter<Phase>,
    current: Option<(String, DocIter)>,
}

impl DatasetStream {
    /// Each collection with its exact number of documents, in stream order.
    pub fn counts(&self) -> &[(String, u64)] {
        &self.counts
    }

    /// The total number of documents the stream will yield.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|(_, n)| n).sum()
    }

    /// The collections not yet begun, each with its lazy document stream
    /// (for the loader, which batches per collection on another thread).
    fn into_phases(self) -> impl Iterator<Item = (&'static str, DocIter)> + Send {
        self.pending.map(|p| (p.collection, (p.make)()))
    }
}

impl fmt::Debug for DatasetStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatasetStream")
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl Iterator for DatasetStream {
    type Item = (String, Document);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((name, docs)) = &mut self.current
                && let Some(doc) = docs.next()
            {
                return Some((name.clone(), doc));
            }
            let phase = self.pending.next()?;
            self.current = Some((phase.collection.to_string(), (phase.make)()));
        }
    }
}

/// Streams dataset `name` at `scale` with `seed`, using `params` (normally
/// [`DatasetSpec::params`] of the catalog, possibly overridden).
pub fn generate(
    name: &str,
    scale: Scale,
    seed: u64,
    params: &Params,
) -> Result<DatasetStream, DatasetError> {
    let family = family(name)?;
    let root = random::root_key(name, scale, seed);
    let phases = (family.phases)(root, params)?;
    let counts = phases
        .iter()
        .map(|p| (p.collection.to_string(), p.count))
        .collect();
    Ok(DatasetStream {
        counts,
        pending: phases.into_iter(),
        current: None,
    })
}

/// The exact number of documents per collection that [`generate`] will
/// yield, without generating them (for progress bars).
pub fn count(
    name: &str,
    scale: Scale,
    seed: u64,
    params: &Params,
) -> Result<Vec<(String, u64)>, DatasetError> {
    Ok(generate(name, scale, seed, params)?.counts)
}
