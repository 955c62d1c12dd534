//! The catalog: `datasets/catalog.toml` read into [`DatasetSpec`]s, checked
//! against the generators, with every mistake reported as `file:line:col`.
//!
//! The file is plain data so that an instructor can change a scale without
//! recompiling; a copy is built into the binary as the fallback.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::locale::Message;
use crate::place::line_col;

use super::{
    DatasetError, DatasetStream, ExtJsonMode, ParamKind, ParamValue, Params, Scale, family,
    generate,
};

/// The catalog shipped with this build (`datasets/catalog.toml`).
pub const BUILTIN_CATALOG: &str = include_str!("../../datasets/catalog.toml");

/// The largest count a catalog may give (documents, sizes, fan-outs): ten
/// times the largest scale shipped. Generators size tables by these
/// numbers, so an unchecked `9223372036854775807` would overflow them.
pub const MAX_COUNT: i64 = 10_000_000;

/// The largest real parameter (exponents, probabilities, means).
pub const MAX_REAL: f64 = 1_000_000.0;

/// One dataset of the catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetSpec {
    pub name: String,
    pub summary: String,
    pub collections: Vec<String>,
    tiny: Params,
    default: Params,
    large: Params,
}

impl DatasetSpec {
    /// The parameters of one scale.
    pub fn params(&self, scale: Scale) -> &Params {
        match scale {
            Scale::Tiny => &self.tiny,
            Scale::Default => &self.default,
            Scale::Large => &self.large,
        }
    }
}

/// Every dataset of a catalog file, in file order of names (sorted).
#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    pub source: String,
    datasets: BTreeMap<String, DatasetSpec>,
}

impl Catalog {
    /// The catalog built into the binary.
    pub fn builtin() -> Result<Self, DatasetError> {
        Self::parse(BUILTIN_CATALOG, "datasets/catalog.toml (built in)")
    }

    /// Parses catalog text; `file` names it in error messages.
    pub fn parse(text: &str, file: &str) -> Result<Self, DatasetError> {
        let at = |span: Option<std::ops::Range<usize>>, message: Message| {
            let (line, col) = line_col(text, span.map_or(0, |s| s.start));
            DatasetError::Catalog {
                file: file.to_string(),
                line,
                col,
                message,
            }
        };
        let raw: BTreeMap<String, Spanned<RawDataset>> =
            toml::from_str(text).map_err(|e| at(e.span(), Message::verbatim(e.message())))?;
        let mut datasets = BTreeMap::new();
        for (name, spanned) in raw {
            let span = spanned.span();
            let raw = spanned.into_inner();
            let fam = family(&name).map_err(|e| at(Some(span.clone()), e.message()))?;
            let listed: Vec<&str> = raw
                .collections
                .get_ref()
                .iter()
                .map(String::as_str)
                .collect();
            if listed != fam.collections {
                return Err(at(
                    Some(raw.collections.span()),
                    Message::new("dataset `{name}` has collections {collections} (in this order)")
                        .arg("name", &name)
                        .arg("collections", format!("{:?}", fam.collections)),
                ));
            }
            let mut scales = Vec::new();
            for table in [raw.tiny, raw.default, raw.large] {
                let mut params = Params::new(&name);
                for (key, value) in table.get_ref() {
                    let Some((_, kind)) = fam.params.iter().find(|(p, _)| p == key) else {
                        let known: Vec<&str> = fam.params.iter().map(|(p, _)| *p).collect();
                        return Err(at(
                            Some(value.span()),
                            Message::new("unknown parameter `{key}` for `{name}` (known: {known})")
                                .arg("key", key)
                                .arg("name", &name)
                                .arg("known", known.join(", ")),
                        ));
                    };
                    let v = match (kind, value.get_ref()) {
                        (ParamKind::Count, toml::Value::Integer(n))
                            if (0..=MAX_COUNT).contains(n) =>
                        {
                            ParamValue::Int(*n)
                        }
                        (ParamKind::Real, toml::Value::Integer(n))
                            if (0..=MAX_REAL as i64).contains(n) =>
                        {
                            ParamValue::Int(*n)
                        }
                        (ParamKind::Real, toml::Value::Float(x))
                            if x.is_finite() && (0.0..=MAX_REAL).contains(x) =>
                        {
                            ParamValue::Float(*x)
                        }
                        (ParamKind::Count, _) => {
                            return Err(at(
                                Some(value.span()),
                                Message::new(
                                    "`{key}` must be a non-negative integer, at most {max}",
                                )
                                .arg("key", key)
                                .arg("max", MAX_COUNT),
                            ));
                        }
                        (ParamKind::Real, _) => {
                            return Err(at(
                                Some(value.span()),
                                Message::new(
                                    "`{key}` must be a non-negative number, at most {max}",
                                )
                                .arg("key", key)
                                .arg("max", MAX_REAL),
                            ));
                        }
                    };
                    params.set(key, v);
                }
                for (p, _) in fam.params {
                    if params.get(p).is_none() {
                        return Err(at(
                            Some(table.span()),
                            Message::new("missing parameter `{p}` for `{name}`")
                                .arg("p", p)
                                .arg("name", &name),
                        ));
                    }
                }
                scales.push(params);
            }
            let [tiny, default, large]: [Params; 3] = scales
                .try_into()
                .map_err(|_| at(Some(span.clone()), Message::new("expected three scales")))?;
            datasets.insert(
                name.clone(),
                DatasetSpec {
                    name,
                    summary: raw.summary,
                    collections: raw.collections.into_inner(),
                    tiny,
                    default,
                    large,
                },
            );
        }
        Ok(Self {
            source: file.to_string(),
            datasets,
        })
    }

    pub fn get(&self, name: &str) -> Result<&DatasetSpec, DatasetError> {
        self.datasets
            .get(name)
            .ok_or_else(|| DatasetError::UnknownDataset(name.to_string()))
    }

    pub fn datasets(&self) -> impl Iterator<Item = &DatasetSpec> {
        self.datasets.values()
    }

    /// Streams a dataset with this catalog's parameters.
    pub fn generate(
        &self,
        name: &str,
        scale: Scale,
        seed: u64,
    ) -> Result<DatasetStream, DatasetError> {
        generate(name, scale, seed, self.get(name)?.params(scale))
    }

    /// Writes one Extended JSON array file per collection into `out_dir`.
    pub fn export_extjson(
        &self,
        name: &str,
        scale: Scale,
        seed: u64,
        out_dir: &Path,
        mode: ExtJsonMode,
    ) -> Result<Vec<PathBuf>, DatasetError> {
        super::export::write_stream(self.generate(name, scale, seed)?, out_dir, mode)
    }
}

/// Numbers out of range anywhere in a catalog's scale tables, whether or not
/// the datasets are known to this build (lint checks instructors' catalogs
/// with this before anything generates from them): integers outside
/// 0..=[`MAX_COUNT`], reals outside 0..=[`MAX_REAL`] or not finite.
pub fn range_errors(text: &str, file: &str) -> Vec<DatasetError> {
    #[derive(Deserialize)]
    struct Loose {
        #[serde(default)]
        tiny: BTreeMap<String, Spanned<toml::Value>>,
        #[serde(default)]
        default: BTreeMap<String, Spanned<toml::Value>>,
        #[serde(default)]
        large: BTreeMap<String, Spanned<toml::Value>>,
    }
    let Ok(raw) = toml::from_str::<BTreeMap<String, Loose>>(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for table in raw.values() {
        for (key, value) in table.tiny.iter().chain(&table.default).chain(&table.large) {
            let message = match value.get_ref() {
                toml::Value::Integer(n) if !(0..=MAX_COUNT).contains(n) => {
                    Message::new("`{key}` must be a non-negative integer, at most {max}")
                        .arg("key", key)
                        .arg("max", MAX_COUNT)
                }
                toml::Value::Float(x) if !(x.is_finite() && (0.0..=MAX_REAL).contains(x)) => {
                    Message::new("`{key}` must be a non-negative number, at most {max}")
                        .arg("key", key)
                        .arg("max", MAX_REAL)
                }
                _ => continue,
            };
            let (line, col) = line_col(text, value.span().start);
            out.push(DatasetError::Catalog {
                file: file.to_string(),
                line,
                col,
                message,
            });
        }
    }
    out
}

/// Reads and checks a catalog file.
pub fn load_catalog(path: impl AsRef<Path>) -> Result<Catalog, DatasetError> {
    let path = path.as_ref();
    let text = crate::files::read_text(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Catalog::parse(&text, &path.display().to_string())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDataset {
    summary: String,
    collections: Spanned<Vec<String>>,
    tiny: Spanned<BTreeMap<String, Spanned<toml::Value>>>,
    default: Spanned<BTreeMap<String, Spanned<toml::Value>>>,
    large: Spanned<BTreeMap<String, Spanned<toml::Value>>>,
}
