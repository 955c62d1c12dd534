//! Indexes: ordered sets of keys, maintained on every write.
//!
//! An index entry is a [`keystring`](super::keystring) key followed by the
//! record id (big-endian), kept in an ordered set of byte strings packed to
//! a few bytes of overhead per entry (`keyset`). That is the same shape as a
//! WiredTiger index table, so equality and range scans are ordered walks,
//! unique checks are prefix probes, and the size model can measure real
//! keys. Key generation follows mongod's rules: a missing field
//! indexes as `null`, an array indexes one key per element (the index becomes
//! *multikey*), an empty array indexes as `undefined`. Compound keys whose
//! fields go through the same array are generated per element (correlated,
//! as `$elemMatch` bounds assume); fields through two different arrays are
//! refused (code 171, "parallel arrays").

mod keyset;

use std::collections::{BTreeSet, HashSet};
use std::ops::Bound;

use bson::spec::ElementType;
use bson::{Bson, Document};

use super::codec::walk::Doc;
use super::collation::Collation;
use super::error::{EngineError, ErrorCode, Result};
use super::expr::Vars;
use super::filter::Filter;
use super::keystring;
use super::update::display;
use keyset::KeySet;

use crate::cache::{self, layout::IndexPages};

/// A record's id: its position in insertion order, never reused.
pub type RecordId = u64;

/// An index's definition, as given to `createIndexes`.
#[derive(Debug, Clone)]
pub struct IndexSpec {
    /// `name`, defaulting to `a_1_b_-1`.
    pub name: String,
    /// The key pattern as given (`{a: 1, b: -1}`).
    pub key: Document,
    /// (path, ascending) per key field.
    pub fields: Vec<(String, bool)>,
    pub unique: bool,
    pub sparse: bool,
    /// `partialFilterExpression`, kept as given and parsed.
    pub partial: Option<(Document, Filter)>,
    /// TTL: `expireAfterSeconds`.
    pub expire_after_seconds: Option<i64>,
    pub collation: Option<Collation>,
    pub hidden: bool,
}

impl IndexSpec {
    /// The spec of the `_id_` index every collection has.
    pub fn id_index() -> Self {
        IndexSpec {
            name: "_id_".into(),
            key: bson::doc! {"_id": 1},
            fields: vec![("_id".into(), true)],
            unique: true,
            sparse: false,
            partial: None,
            expire_after_seconds: None,
            collation: None,
            hidden: false,
        }
    }

    /// Parse one `createIndexes` spec, refusing what mongod 7.0's
    /// `validateIndexSpec` refuses, with its codes: unknown options (197),
    /// bad key patterns and TTL values (67), mistyped options (14).
    /// `default_collation` is the collection's, used when the spec names
    /// none.
    pub fn parse(spec: &Document, default_collation: Option<&Collation>) -> Result<IndexSpec> {
        let in_spec = |e: EngineError| {
            if e.code == ErrorCode::NOT_IMPLEMENTED {
                return e;
            }
            EngineError::new(
                e.code,
                format!(
                    "Error in specification {} :: caused by :: {}",
                    display::value(&Bson::Document(spec.clone())),
                    e.message
                ),
            )
        };
        validate_spec_fields(spec).map_err(in_spec)?;
        let key = match spec.get("key") {
            Some(Bson::Document(k)) => k.clone(),
            Some(other) => {
                return Err(in_spec(EngineError::type_mismatch(format!(
                    "The field 'key' must be an object, but got {}",
                    type_name(other)
                ))));
            }
            None => {
                return Err(EngineError::failed_to_parse(
                    "The 'key' field is a required property of an index specification",
                ));
            }
        };
        let fields = validate_key_pattern(&key).map_err(in_spec)?;
        let name = match spec.get("name") {
            Some(Bson::String(n)) if n.is_empty() => {
                return Err(in_spec(EngineError::new(
                    ErrorCode::CANNOT_CREATE_INDEX,
                    "index name cannot be empty",
                )));
            }
            Some(Bson::String(n)) => n.clone(),
            Some(other) => {
                return Err(in_spec(EngineError::type_mismatch(format!(
                    "The field 'name' must be a string, but got {}",
                    type_name(other)
                ))));
            }
            None => default_name(&key),
        };
        for (f, v) in spec {
            match f.as_str() {
                "unique" | "sparse" | "background" | "dropDups" | "prepareUnique"
                    if !matches!(v, Bson::Boolean(_)) && !super::value::is_number(v) =>
                {
                    return Err(in_spec(EngineError::type_mismatch(format!(
                        "The field '{f} has value {}, which is not convertible to bool",
                        display::element(f, v)
                    ))));
                }
                "v" if !super::value::is_number(v) => {
                    return Err(in_spec(EngineError::type_mismatch(format!(
                        "The field 'v' must be a number, but got {}",
                        type_name(v)
                    ))));
                }
                "v" if !matches!(super::value::as_f64(v), Some(n) if n == 1.0 || n == 2.0) => {
                    return Err(in_spec(EngineError::new(
                        ErrorCode::CANNOT_CREATE_INDEX,
                        format!(
                            "Invalid index specification {}; cannot create an index with v={}",
                            display::value(&Bson::Document(spec.clone())),
                            display::value(v)
                        ),
                    )));
                }
                "collation" if matches!(v, Bson::Document(c) if c.is_empty()) => {
                    return Err(in_spec(EngineError::bad_value(
                        "The field 'collation' cannot be an empty object.",
                    )));
                }
                // mongod's message names 'name' here, a slip we keep.
                "hidden" if !matches!(v, Bson::Boolean(_)) => {
                    return Err(in_spec(EngineError::type_mismatch(format!(
                        "The field 'name' must be a bool, but got {}",
                        type_name(v)
                    ))));
                }
                _ => {}
            }
        }
        let flag = |f: &str| {
            matches!(spec.get(f), Some(Bson::Boolean(true)))
                || spec
                    .get(f)
                    .and_then(super::value::as_f64)
                    .is_some_and(|n| n != 0.0)
        };
        let partial = match spec.get("partialFilterExpression") {
            Some(Bson::Document(pfe)) => {
                let filter = Filter::parse(pfe, None).map_err(in_spec)?;
                check_partial_filter(pfe).map_err(in_spec)?;
                Some((pfe.clone(), filter))
            }
            Some(other) => {
                return Err(in_spec(EngineError::type_mismatch(format!(
                    "The field 'partialFilterExpression' must be an object, but got {}",
                    type_name(other)
                ))));
            }
            None => None,
        };
        let expire_after_seconds = match spec.get("expireAfterSeconds") {
            None => None,
            Some(v) => Some(validate_ttl(v).map_err(|e| {
                EngineError::new(
                    e.code,
                    format!(
                        ". Index spec: {} :: caused by :: {}",
                        display::value(&Bson::Document(spec.clone())),
                        e.message
                    ),
                )
            })?),
        };
        if expire_after_seconds.is_some() && fields.len() != 1 {
            return Err(EngineError::new(
                ErrorCode::CANNOT_CREATE_INDEX,
                format!(
                    "TTL indexes are single-field indexes, compound indexes do not support TTL. Index spec: {}",
                    display::value(&Bson::Document(spec.clone()))
                ),
            ));
        }
        let collation = match spec.get("collation") {
            Some(Bson::Document(c)) => Collation::parse(c)?,
            Some(other) => {
                return Err(in_spec(EngineError::type_mismatch(format!(
                    "The field 'collation' must be an object, but got {}",
                    type_name(other)
                ))));
            }
            None => default_collation.cloned(),
        };
        // mongod's descriptor counts an index on `{_id: 1}` as unique
        // whatever the spec says.
        let unique = flag("unique") || is_id_pattern(&key);
        if !is_id_pattern(&key) {
            if name == "_id_" {
                return Err(EngineError::bad_value(format!(
                    "The index name '_id_' is reserved for the _id index, which must have key pattern {{_id: 1}}, found key: {}",
                    display::value(&Bson::Document(key.clone()))
                )));
            }
            if name == "*" {
                return Err(EngineError::bad_value("The index name '*' is not valid."));
            }
        }
        Ok(IndexSpec {
            name,
            key,
            fields,
            unique,
            sparse: flag("sparse"),
            partial,
            expire_after_seconds,
            collation,
            hidden: flag("hidden"),
        })
    }

    /// The spec as `listIndexes` shows it.
    pub fn to_document(&self) -> Document {
        let mut d = bson::doc! {"v": 2, "key": self.key.clone(), "name": self.name.clone()};
        if self.unique && !is_id_pattern(&self.key) {
            d.insert("unique", true);
        }
        if self.sparse {
            d.insert("sparse", true);
        }
        if let Some((pfe, _)) = &self.partial {
            d.insert("partialFilterExpression", pfe.clone());
        }
        if let Some(secs) = self.expire_after_seconds {
            d.insert("expireAfterSeconds", secs);
        }
        if let Some(c) = &self.collation {
            d.insert("collation", c.to_document());
        }
        if self.hidden {
            d.insert("hidden", true);
        }
        d
    }

    /// Whether two specs have the same signature: the options that tell
    /// indexes on one key pattern apart in mongod 7.0 (key, collation,
    /// `partialFilterExpression`, `unique`, `sparse`).
    pub fn same_signature(&self, other: &IndexSpec) -> bool {
        self.key == other.key
            && self.unique == other.unique
            && self.sparse == other.sparse
            && self.partial.as_ref().map(|p| &p.0) == other.partial.as_ref().map(|p| &p.0)
            && self.collation == other.collation
    }

    /// Whether two specs describe the same index (same signature and the
    /// other options too).
    pub fn same_definition(&self, other: &IndexSpec) -> bool {
        self.same_signature(other)
            && self.expire_after_seconds == other.expire_after_seconds
            && self.hidden == other.hidden
    }
}

/// Options a `createIndexes` spec may carry (mongod 7.0's
/// `index_key_validate::allowedFieldNames`).
const ALLOWED_SPEC_FIELDS: &[&str] = &[
    "bits",
    "max",
    "min",
    "coarsestIndexedLevel",
    "finestIndexedLevel",
    "2dsphereIndexVersion",
    "background",
    "collation",
    "default_language",
    "dropDups",
    "expireAfterSeconds",
    "hidden",
    "name",
    "v",
    "key",
    "language_override",
    "ns",
    "partialFilterExpression",
    "wildcardProjection",
    "columnstoreProjection",
    "sparse",
    "storageEngine",
    "textIndexVersion",
    "unique",
    "weights",
    "originalSpec",
    "prepareUnique",
    "_id",
];

/// Options an `_id` index spec may carry.
const ALLOWED_ID_SPEC_FIELDS: &[&str] = &["collation", "name", "v", "key", "ns", "_id"];

/// Index plugins mongod knows (the engine builds only B-tree indexes).
const KNOWN_PLUGINS: &[&str] = &[
    "2d",
    "2dsphere",
    "text",
    "hashed",
    "wildcard",
    "columnstore",
];

/// mongod's `typeName` of a value.
fn type_name(v: &Bson) -> &'static str {
    super::value::type_alias(v)
}

/// `{_id: 1}`, the key pattern of the `_id` index.
fn is_id_pattern(key: &Document) -> bool {
    key.len() == 1 && key.get("_id").and_then(super::value::as_f64) == Some(1.0)
}

/// 197 for an option mongod does not know.
fn validate_spec_fields(spec: &Document) -> Result<()> {
    let id_index = matches!(spec.get("key"), Some(Bson::Document(k)) if is_id_pattern(k));
    let (allowed, what) = if id_index {
        (ALLOWED_ID_SPEC_FIELDS, "an _id index specification")
    } else {
        (ALLOWED_SPEC_FIELDS, "an index specification")
    };
    if let Some(field) = spec.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(EngineError::new(
            ErrorCode::INVALID_INDEX_SPECIFICATION_OPTION,
            format!(
                "The field '{field}' is not valid for {what}. Specification: {}",
                display::value(&Bson::Document(spec.clone()))
            ),
        ));
    }
    Ok(())
}

/// mongod's `validateKeyPattern` for a v:2 index; the (path, ascending)
/// pairs of a B-tree key pattern.
fn validate_key_pattern(key: &Document) -> Result<Vec<(String, bool)>> {
    let cannot = |m: String| EngineError::new(ErrorCode::CANNOT_CREATE_INDEX, m);
    if key.is_empty() {
        return Err(cannot("Index keys cannot be empty.".into()));
    }
    let plugin = key.values().find_map(|v| match v {
        Bson::String(s) => Some(s.as_str()),
        _ => None,
    });
    if let Some(p) = plugin
        && !KNOWN_PLUGINS.contains(&p)
    {
        return Err(cannot(format!("Unknown index plugin '{p}'")));
    }
    let mut fields = Vec::with_capacity(key.len());
    for (path, dir) in key {
        let ascending = match dir {
            Bson::String(kind) => {
                if plugin != Some(kind.as_str()) {
                    return Err(cannot(
                        "Can't use more than one index plugin for a single index.".into(),
                    ));
                }
                true
            }
            v if super::value::is_number(v) => match super::value::as_f64(v) {
                Some(n) if n.is_nan() => {
                    return Err(cannot(
                        "Values in the index key pattern cannot be NaN.".into(),
                    ));
                }
                Some(n) if n > 0.0 => true,
                Some(n) if n < 0.0 => false,
                _ => {
                    return Err(cannot(
                        "Values in the index key pattern cannot be 0.".into(),
                    ));
                }
            },
            other => {
                return Err(cannot(format!(
                    "Values in v:2 index key pattern cannot be of type {}. Only numbers > 0, numbers < 0, and strings are allowed.",
                    type_name(other)
                )));
            }
        };
        if path.is_empty() {
            return Err(cannot("Index keys cannot be an empty field.".into()));
        }
        let parts: Vec<&str> = path.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            if part.is_empty() {
                return Err(cannot("Index keys cannot contain an empty field.".into()));
            }
            let db_ref = i > 0 && matches!(*part, "$db" | "$id" | "$ref");
            if part.starts_with('$') && !db_ref {
                return Err(cannot(
                    "Index key contains an illegal field name: field name starts with '$'.".into(),
                ));
            }
        }
        fields.push((path.clone(), ascending));
    }
    if let Some(kind) = plugin {
        return Err(EngineError::not_implemented(format!(
            "the '{kind}' index type (only ascending/descending B-tree indexes)"
        )));
    }
    Ok(fields)
}

/// mongod's TTL check for a secondary index: a number, not NaN, within
/// [0, 2147483647] (fractions are truncated). Every failure is 67.
pub(crate) fn validate_ttl(v: &Bson) -> Result<i64> {
    let cannot = |m: String| EngineError::new(ErrorCode::CANNOT_CREATE_INDEX, m);
    let Some(n) = super::value::as_f64(v).filter(|_| super::value::is_number(v)) else {
        return Err(cannot(format!(
            "TTL index 'expireAfterSeconds' option must be numeric, but received a type of '{}'",
            type_name(v)
        )));
    };
    if n.is_nan() {
        return Err(cannot(
            "TTL index 'expireAfterSeconds' option must not be NaN".into(),
        ));
    }
    let whole = n.trunc();
    if whole > f64::from(i32::MAX) || whole < f64::from(i32::MIN) {
        return Err(cannot(
            "TTL index 'expireAfterSeconds' must be within the range of a 32-bit integer".into(),
        ));
    }
    if whole < 0.0 {
        return Err(cannot(
            "TTL index 'expireAfterSeconds' option cannot be less than 0".into(),
        ));
    }
    // In range of i32 by the checks above.
    Ok(whole as i64)
}

/// mongod 7.0's `partialFilterExpression` rules: equality, `$exists: true`,
/// `$gt/$gte/$lt/$lte`, `$type`, `$in`, and `$and`/`$or` of those (67
/// otherwise); `$expr` and `$jsonSchema` are refused with 224, `$where`
/// with 2.
fn check_partial_filter(filter: &Document) -> Result<()> {
    let unsupported = |tree: String| {
        EngineError::new(
            ErrorCode::CANNOT_CREATE_INDEX,
            format!("Expression not supported in partial index: {tree}"),
        )
    };
    for (k, v) in filter {
        match k.as_str() {
            "$and" | "$or" => {
                if let Bson::Array(items) = v {
                    for item in items {
                        if let Bson::Document(d) = item {
                            check_partial_filter(d)?;
                        }
                    }
                }
            }
            "$expr" | "$jsonSchema" => {
                return Err(EngineError::new(
                    ErrorCode(224),
                    format!("{k} is not allowed in this context"),
                ));
            }
            "$where" => {
                return Err(EngineError::bad_value(
                    "$where is not allowed in this context",
                ));
            }
            "$comment" => {}
            op if op.starts_with('$') => {
                return Err(unsupported(format!("{op}\n")));
            }
            path => {
                let Bson::Document(ops) = v else {
                    if let Bson::RegularExpression(r) = v {
                        return Err(unsupported(format!(
                            "{path} regex /{}/{}\n",
                            r.pattern, r.options
                        )));
                    }
                    continue;
                };
                if !ops.keys().next().is_some_and(|o| o.starts_with('$')) {
                    continue;
                }
                for (op, arg) in ops {
                    let shown = display::value(arg);
                    match op.as_str() {
                        "$eq" | "$gt" | "$gte" | "$lt" | "$lte" | "$type" | "$in" => {}
                        "$exists" if crate::expr::truthy(Some(arg)) => {}
                        "$exists" => {
                            return Err(unsupported(format!("$not\n    {path} exists\n")));
                        }
                        "$ne" => {
                            return Err(unsupported(format!("$not\n    {path} $eq {shown}\n")));
                        }
                        "$nin" => {
                            return Err(unsupported(format!("$not\n    {path} $in {shown}\n")));
                        }
                        "$not" => return Err(unsupported(format!("$not\n    {path} {shown}\n"))),
                        other => {
                            return Err(unsupported(format!("{path} {other} {shown}\n")));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// mongod's default index name: `field_direction` joined by `_`.
pub fn default_name(key: &Document) -> String {
    key.iter()
        .map(|(k, v)| {
            let dir = match v {
                Bson::Int32(i) => i.to_string(),
                Bson::Int64(i) => i.to_string(),
                Bson::Double(d) if d.fract() == 0.0 => format!("{}", *d as i64),
                Bson::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!("{k}_{dir}")
        })
        .collect::<Vec<_>>()
        .join("_")
}

/// The keys one document contributes to an index.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct DocKeys {
    /// Encoded keys (without record id), deduplicated.
    pub keys: Vec<Vec<u8>>,
    /// Per key field, the path prefixes at which an array was expanded.
    pub multikey_paths: Vec<BTreeSet<String>>,
}

/// Keys gathered for [`Index::bulk_load`], back to back in one buffer (a
/// `Vec` per key would cost some 40 bytes more each).
#[derive(Debug, Default)]
pub struct BulkKeys {
    bytes: Vec<u8>,
    keys: Vec<BulkKey>,
    /// Per key field, the array path prefixes of the documents pushed.
    multikey_paths: Vec<BTreeSet<String>>,
}

#[derive(Debug)]
struct BulkKey {
    /// The key's first 8 bytes, big-endian, zero-padded: keys whose
    /// prefixes differ sort as their prefixes do, so most comparisons of
    /// the sort read no key bytes (which lie all over the buffer).
    prefix: u64,
    start: usize,
    end: usize,
    rid: RecordId,
}

impl BulkKey {
    fn prefix_of(key: &[u8]) -> u64 {
        let mut p = [0u8; 8];
        let n = key.len().min(8);
        p[..n].copy_from_slice(&key[..n]);
        u64::from_be_bytes(p)
    }
}

impl BulkKeys {
    /// Room for `n` keys.
    pub fn with_capacity(n: usize) -> Self {
        BulkKeys {
            keys: Vec::with_capacity(n),
            ..Self::default()
        }
    }

    /// Add `key` under `rid`.
    pub fn push(&mut self, key: &[u8], rid: RecordId) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(key);
        self.close_key(start, rid);
    }

    /// Record the key written to `bytes` from `start` on, under `rid`.
    fn close_key(&mut self, start: usize, rid: RecordId) {
        let end = self.bytes.len();
        self.keys.push(BulkKey {
            prefix: BulkKey::prefix_of(&self.bytes[start..end]),
            start,
            end,
            rid,
        });
    }

    /// Add a document's keys under `rid`, and its multikey paths.
    pub fn push_doc(&mut self, keys: &DocKeys, rid: RecordId) {
        for key in &keys.keys {
            self.push(key, rid);
        }
        if self.multikey_paths.len() < keys.multikey_paths.len() {
            self.multikey_paths
                .resize(keys.multikey_paths.len(), BTreeSet::new());
        }
        for (seen, new) in self.multikey_paths.iter_mut().zip(&keys.multikey_paths) {
            seen.extend(new.iter().cloned());
        }
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key was pushed.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// A live index.
#[derive(Debug, Clone)]
pub struct Index {
    pub spec: IndexSpec,
    entries: KeySet,
    /// Per key field, every path prefix at which some document had an array.
    multikey_paths: Vec<BTreeSet<String>>,
    /// Where the entries are in the cache model's pages.
    pages: IndexPages,
}

impl Index {
    /// An empty index.
    pub fn new(spec: IndexSpec) -> Self {
        let n = spec.fields.len();
        Index {
            spec,
            entries: KeySet::new(),
            multikey_paths: vec![BTreeSet::new(); n],
            pages: IndexPages::default(),
        }
    }

    /// Whether any document made this index multikey.
    pub fn is_multikey(&self) -> bool {
        self.multikey_paths.iter().any(|p| !p.is_empty())
    }

    /// mongod's `multiKeyPaths`: per key field, the array path prefixes.
    pub fn multikey_paths(&self) -> &[BTreeSet<String>] {
        &self.multikey_paths
    }

    /// Number of entries (keys), which exceeds the document count when
    /// multikey.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the index has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every entry in key order (key bytes followed by the 8-byte record id).
    pub fn entries(&self) -> impl Iterator<Item = &[u8]> {
        self.entries.iter()
    }

    /// Compute the keys of `doc` (empty when sparse/partial exclude it).
    pub fn keys_for(&self, doc: &Document) -> Result<DocKeys> {
        generate_keys(&self.spec, doc)
    }

    /// [`Index::keys_for`] a stored record, decoding only the top-level
    /// fields the key pattern reads (the whole record for a partial or
    /// wildcard index).
    pub fn keys_for_raw(&self, raw: &bson::RawDocument) -> Result<DocKeys> {
        let whole = self.reads_whole_record();
        if !whole && let Some(keys) = self.plain_keys_raw(raw) {
            return Ok(keys);
        }
        let doc = if whole {
            crate::codec::decode(raw)
        } else {
            let wanted = |name: &str| {
                self.spec
                    .fields
                    .iter()
                    .any(|(p, _)| p.split('.').next() == Some(name))
            };
            crate::codec::decode_fields(raw, &wanted)
        }
        .map_err(|e| EngineError::new(ErrorCode::INTERNAL_ERROR, format!("corrupt record: {e}")))?;
        self.keys_for(&doc)
    }

    /// Whether this index's keys may depend on any field of a record (a
    /// partial filter's, a wildcard's), not only on its key pattern's.
    fn reads_whole_record(&self) -> bool {
        self.spec.partial.is_some() || self.spec.fields.iter().any(|(p, _)| p.contains("$**"))
    }

    /// The keys of a record none of whose key paths meets an array, read
    /// from its bytes: one key, or none for a sparse index that finds no
    /// field. `None` when a path meets an array (its expansion is
    /// [`KeyGen`]'s) or the bytes are malformed (the decoding path reports
    /// that). A value is read as decoding finds it: the last element of a
    /// name, a scalar mid-path is missing (null).
    fn plain_keys_raw(&self, raw: &bson::RawDocument) -> Option<DocKeys> {
        let mut key = Vec::new();
        let written = self.plain_key_into(raw, &mut key)?;
        Some(DocKeys {
            keys: if written { vec![key] } else { Vec::new() },
            multikey_paths: vec![BTreeSet::new(); self.spec.fields.len()],
        })
    }

    /// Add a record's keys to an index build's: a plain key (see
    /// [`Self::plain_keys_raw`]) is encoded straight into the build's
    /// buffer.
    pub fn gather_keys(
        &self,
        raw: &bson::RawDocument,
        rid: RecordId,
        into: &mut BulkKeys,
    ) -> Result<()> {
        let start = into.bytes.len();
        if !self.reads_whole_record() {
            match self.plain_key_into(raw, &mut into.bytes) {
                Some(true) => {
                    into.close_key(start, rid);
                    return Ok(());
                }
                Some(false) => return Ok(()),
                None => {}
            }
        }
        into.push_doc(&self.keys_for_raw(raw)?, rid);
        Ok(())
    }

    /// Append the plain key of `raw` to `out`: `Some(true)` when written,
    /// `Some(false)` when a sparse index finds no field, `None` (and `out`
    /// as it was) when the record is not plain.
    fn plain_key_into(&self, raw: &bson::RawDocument, out: &mut Vec<u8>) -> Option<bool> {
        let n = self.spec.fields.len();
        let mut values = Vec::with_capacity(n);
        let mut not_found = 0;
        for (path, _) in &self.spec.fields {
            let mut doc = Doc::from_raw(raw);
            let mut parts = path.split('.').peekable();
            let found = loop {
                let part = parts.next()?;
                let Some(v) = doc.get_last(part).ok()? else {
                    break None;
                };
                if v.element_type() == ElementType::Array {
                    return None;
                }
                if parts.peek().is_none() {
                    break Some(v);
                }
                match v.as_document() {
                    Some(_) => doc = v.nested().ok()??,
                    None => break None,
                }
            };
            match found {
                Some(v) => values.push(v.decode().ok()?),
                None => {
                    not_found += 1;
                    values.push(Bson::Null);
                }
            }
        }
        if self.spec.sparse && not_found == n {
            return Some(false);
        }
        for (v, (_, ascending)) in values.iter().zip(&self.spec.fields) {
            keystring::append_component(out, v, *ascending, self.spec.collation.as_ref());
        }
        keystring::end_key(out);
        Some(true)
    }

    /// Whether two versions of a record certainly have the same keys here:
    /// every top-level field the key pattern reads holds the same bytes in
    /// both (so an update that left them alone need not compute keys).
    /// False for an index that may read any field, or on malformed bytes.
    pub fn reads_same(&self, a: &bson::RawDocument, b: &bson::RawDocument) -> bool {
        if self.reads_whole_record() {
            return false;
        }
        self.spec.fields.iter().all(|(path, _)| {
            let name = path.split('.').next().unwrap_or(path);
            let bytes = |raw| {
                Doc::from_raw(raw)
                    .get_last(name)
                    .ok()
                    .map(|v| v.map(|v| (v.element_type(), v.raw_bytes())))
            };
            matches!((bytes(a), bytes(b)), (Some(x), Some(y)) if x == y)
        })
    }

    /// Whether a key (from [`Self::keys_for`]) is present for a record other
    /// than `except` (a unique violation).
    pub fn conflicts(&self, key: &[u8], except: Option<RecordId>) -> Option<RecordId> {
        self.records_for_key(key).find(|rid| Some(*rid) != except)
    }

    /// The records holding exactly `key`.
    pub fn records_for_key<'a>(&'a self, key: &[u8]) -> impl Iterator<Item = RecordId> + 'a {
        let mut lo = key.to_vec();
        lo.extend_from_slice(&[0; 8]);
        let mut hi = key.to_vec();
        hi.extend_from_slice(&[0xFF; 8]);
        self.entries
            .range(Bound::Included(&lo[..]), Bound::Included(&hi[..]))
            .map(record_id_of)
    }

    /// Raw entries (key bytes followed by the 8-byte record id) between two
    /// entry-level bounds, in order: what a resumable index scan reads.
    pub fn entries_between<'a>(
        &'a self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
    ) -> impl DoubleEndedIterator<Item = &'a [u8]> + 'a {
        self.entries.range(lo, hi)
    }

    /// The record id stored at the end of an entry.
    pub fn entry_record_id(entry: &[u8]) -> RecordId {
        record_id_of(entry)
    }

    /// Entries whose key lies between `lo` and `hi` (key bytes without
    /// record ids), in order, as (key, record id).
    pub fn scan<'a>(
        &'a self,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
    ) -> impl DoubleEndedIterator<Item = (&'a [u8], RecordId)> + 'a {
        let lo: Bound<Vec<u8>> = match lo {
            Bound::Included(k) => Bound::Included([k, &[0u8; 8][..]].concat()),
            Bound::Excluded(k) => Bound::Excluded([k, &[0xFFu8; 8][..]].concat()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let hi: Bound<Vec<u8>> = match hi {
            Bound::Included(k) => Bound::Included([k, &[0xFFu8; 8][..]].concat()),
            Bound::Excluded(k) => Bound::Excluded([k, &[0u8; 8][..]].concat()),
            Bound::Unbounded => Bound::Unbounded,
        };
        self.entries
            .range(lo.as_ref().map(|v| &v[..]), hi.as_ref().map(|v| &v[..]))
            .map(|e| (&e[..e.len() - 8], record_id_of(e)))
    }

    /// Add `key` under `rid` unless a record already holds it, with one
    /// search of the entries (a unique index's insert): false, and nothing
    /// added, if one does.
    pub fn insert_unique(&mut self, key: &[u8], rid: RecordId) -> bool {
        let e = entry(key, rid);
        let added = self
            .entries
            .insert_if_none_in(&entry(key, 0), &entry(key, RecordId::MAX), &e);
        if added {
            self.added(&e);
        }
        added
    }

    /// The cache model: `e` was added, dirtying its page.
    fn added(&mut self, e: &[u8]) {
        let entries = &self.entries;
        let (page, bytes) = self.pages.added(e, |lo, hi| entries.range(lo, hi));
        cache::touch(self.pages.file(), page, bytes, true);
    }

    /// The cache model: entry `e` (key bytes and record id) is read, its
    /// page requested from the running server's cache.
    pub fn touch_entry(&self, e: &[u8]) {
        let (page, bytes) = self.pages.page_of(e);
        cache::touch(self.pages.file(), page, bytes, false);
    }

    /// The cache model: the entry of `key` for `rid` is read.
    pub fn touch_key(&self, key: &[u8], rid: RecordId) {
        self.touch_entry(&entry(key, rid));
    }

    /// The cache model's pages of the entries.
    pub fn pages(&self) -> &IndexPages {
        &self.pages
    }

    /// Fill this index, which must be empty, with `keys`: sorted first and
    /// then appended in order (the keys of a collection read in natural
    /// order come in random order, and inserting them one by one costs a
    /// search each and, every eighth of the way, a merge). A unique index
    /// refuses two records holding one key: nothing is added, and the error
    /// is the later record holding the smallest such key, the duplicate a
    /// sorted index build (mongod's) meets first.
    pub fn bulk_load(&mut self, keys: BulkKeys) -> std::result::Result<(), RecordId> {
        debug_assert!(self.entries.is_empty());
        let BulkKeys {
            bytes,
            mut keys,
            multikey_paths,
        } = keys;
        let key = |k: &BulkKey| &bytes[k.start..k.end];
        keys.sort_unstable_by(|a, b| {
            a.prefix
                .cmp(&b.prefix)
                .then_with(|| key(a).cmp(key(b)))
                .then(a.rid.cmp(&b.rid))
        });
        if self.spec.unique
            && let Some(w) = keys
                .windows(2)
                .find(|w| w[0].rid != w[1].rid && key(&w[0]) == key(&w[1]))
        {
            return Err(w[1].rid);
        }
        let rid_bytes = std::mem::size_of::<RecordId>();
        self.entries
            .reserve(keys.len(), bytes.len() + rid_bytes * keys.len());
        let mut e = Vec::new();
        for k in &keys {
            e.clear();
            e.extend_from_slice(key(k));
            e.extend_from_slice(&k.rid.to_be_bytes());
            self.entries.insert(&e);
        }
        for (seen, new) in self.multikey_paths.iter_mut().zip(multikey_paths) {
            seen.extend(new);
        }
        // A sorted build writes full pages, every one dirty.
        self.pages.rebuild(self.entries.iter());
        for (page, bytes) in self.pages.each() {
            cache::touch(self.pages.file(), page, bytes, true);
        }
        Ok(())
    }

    /// Add a document's keys under `rid`.
    pub fn insert_keys(&mut self, keys: &DocKeys, rid: RecordId) {
        for key in &keys.keys {
            let e = entry(key, rid);
            if self.entries.insert(&e) {
                self.added(&e);
            }
        }
        for (seen, new) in self.multikey_paths.iter_mut().zip(&keys.multikey_paths) {
            seen.extend(new.iter().cloned());
        }
    }

    /// Remove a document's keys.
    pub fn remove_keys(&mut self, keys: &DocKeys, rid: RecordId) {
        for key in &keys.keys {
            let e = entry(key, rid);
            if self.entries.remove(&e) {
                let (page, bytes) = self.pages.removed(&e);
                cache::touch(self.pages.file(), page, bytes, true);
            }
        }
    }

    /// Drop every entry (the multikey flags stay, as in mongod).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.pages.reset();
    }
}

fn entry(key: &[u8], rid: RecordId) -> Vec<u8> {
    let mut e = Vec::with_capacity(key.len() + 8);
    e.extend_from_slice(key);
    e.extend_from_slice(&rid.to_be_bytes());
    e
}

fn record_id_of(entry: &[u8]) -> RecordId {
    let mut b = [0u8; 8];
    b.copy_from_slice(&entry[entry.len() - 8..]);
    u64::from_be_bytes(b)
}

/// Values found along one path, and where arrays were expanded.
#[derive(Default)]
struct PathValues {
    values: Vec<Bson>,
    found: bool,
    array_prefixes: BTreeSet<String>,
}

fn collect_path(value: &Bson, parts: &[&str], depth: usize, out: &mut PathValues, in_array: bool) {
    let prefix = |d: usize| parts[..d].join(".");
    if depth == parts.len() {
        match value {
            Bson::Array(items) => {
                out.array_prefixes.insert(prefix(depth));
                out.found = true;
                if items.is_empty() {
                    out.values.push(Bson::Undefined);
                }
                out.values.extend(items.iter().cloned());
            }
            other => {
                out.found = true;
                out.values.push(other.clone());
            }
        }
        return;
    }
    match value {
        Bson::Document(d) => match d.get(parts[depth]) {
            Some(v) => collect_path(v, parts, depth + 1, out, in_array),
            None => {
                if in_array {
                    out.values.push(Bson::Null);
                }
            }
        },
        Bson::Array(items) => {
            let part = parts[depth];
            if let Ok(i) = part.parse::<usize>() {
                // A numeric component addresses an element positionally.
                if let Some(v) = items.get(i) {
                    collect_path(v, parts, depth + 1, out, in_array);
                    return;
                }
            }
            out.array_prefixes.insert(prefix(depth));
            for item in items {
                if let Bson::Document(_) = item {
                    collect_path(item, parts, depth, out, true);
                }
            }
        }
        _ => {}
    }
}

/// Walk `path` from the top of `doc` without copying it.
fn path_values(doc: &Document, path: &str) -> PathValues {
    let parts: Vec<&str> = path.split('.').collect();
    let mut pv = PathValues::default();
    if let Some(v) = doc.get(parts[0]) {
        collect_path(v, &parts, 1, &mut pv, false);
    }
    pv
}

fn generate_keys(spec: &IndexSpec, doc: &Document) -> Result<DocKeys> {
    if let Some((_, filter)) = &spec.partial
        && !filter.matches(doc, &Vars::default())?
    {
        return Ok(DocKeys::default());
    }
    let paths: Vec<Vec<&str>> = spec
        .fields
        .iter()
        .map(|(path, _)| path.split('.').collect())
        .collect();
    let mut keygen = KeyGen {
        paths: &paths,
        ascending: spec.fields.iter().map(|(_, a)| *a).collect(),
        collation: spec.collation.as_ref(),
        sparse: spec.sparse,
        keys: Vec::new(),
        seen: HashSet::new(),
        multikey_paths: vec![BTreeSet::new(); paths.len()],
    };
    let fields = vec![Slot::Walking(0); paths.len()];
    keygen.expand(Some(doc), fields, 0)?;
    Ok(DocKeys {
        keys: keygen.keys,
        multikey_paths: keygen.multikey_paths,
    })
}

static NULL_VALUE: Bson = Bson::Null;
static UNDEFINED_VALUE: Bson = Bson::Undefined;

/// One key field while its keys are generated: settled on a value, or still
/// walking its path from the current (sub)document, `depth` parts in.
#[derive(Clone, Copy)]
enum Slot<'a> {
    Fixed(&'a Bson),
    Walking(usize),
}

/// Where a field's walk stopped.
enum Walk<'a> {
    /// The path leads nowhere (missing field, or a scalar mid-path).
    Missing,
    /// A non-array value (or a positionally addressed element) at the end.
    Value(&'a Bson),
    /// An array reached after `depth` parts (the path may go on inside it).
    Array(&'a Bson, usize),
}

/// Walk `parts[depth..]` from `obj`, stopping at the first array to expand.
/// A numeric part naming an existing element addresses it positionally,
/// which selects one element and so expands nothing.
fn walk<'a>(obj: Option<&'a Document>, parts: &[&str], depth: usize) -> Walk<'a> {
    let Some(mut value) = obj.and_then(|d| d.get(parts[depth])) else {
        return Walk::Missing;
    };
    let mut depth = depth + 1;
    loop {
        if depth == parts.len() {
            return match value {
                Bson::Array(_) => Walk::Array(value, depth),
                other => Walk::Value(other),
            };
        }
        value = match value {
            Bson::Document(d) => match d.get(parts[depth]) {
                Some(v) => v,
                None => return Walk::Missing,
            },
            Bson::Array(items) => match parts[depth]
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i))
            {
                Some(v) => v,
                None => return Walk::Array(value, depth),
            },
            _ => return Walk::Missing,
        };
        depth += 1;
    }
}

/// mongod's key generation: every field walks its path until it settles on a
/// value or meets an array. All fields that meet an array must meet the
/// *same* array (else "parallel arrays", 171); that array is then expanded
/// once, and each element continues every field that went through it, so a
/// compound key over `attrs.k`/`attrs.v` pairs each element's `k` with the
/// same element's `v` rather than forming the cross product.
struct KeyGen<'s> {
    paths: &'s [Vec<&'s str>],
    ascending: Vec<bool>,
    collation: Option<&'s Collation>,
    sparse: bool,
    keys: Vec<Vec<u8>>,
    seen: HashSet<Vec<u8>>,
    multikey_paths: Vec<BTreeSet<String>>,
}

impl KeyGen<'_> {
    fn expand<'a>(
        &mut self,
        obj: Option<&'a Document>,
        mut fields: Vec<Slot<'a>>,
        mut not_found: usize,
    ) -> Result<()> {
        // The array being expanded at this level, and the field that met it
        // first (for the parallel-arrays message).
        let mut array: Option<(&'a Bson, usize, usize)> = None;
        // (field, parts consumed to reach the array) for each field under it.
        let mut through: Vec<(usize, usize)> = Vec::new();
        for (i, slot) in fields.iter_mut().enumerate() {
            let Slot::Walking(depth) = *slot else {
                continue;
            };
            match walk(obj, &self.paths[i], depth) {
                Walk::Missing => {
                    *slot = Slot::Fixed(&NULL_VALUE);
                    not_found += 1;
                }
                Walk::Value(v) => *slot = Slot::Fixed(v),
                Walk::Array(arr, at) => {
                    match array {
                        None => array = Some((arr, i, at)),
                        // Same array: the same place in the document, not
                        // merely an equal value.
                        Some((first, _, _)) if std::ptr::eq(first, arr) => {}
                        Some((_, j, j_at)) => {
                            return Err(EngineError::new(
                                ErrorCode::CANNOT_INDEX_PARALLEL_ARRAYS,
                                format!(
                                    "cannot index parallel arrays [{}] [{}]",
                                    self.paths[i][at - 1],
                                    self.paths[j][j_at - 1]
                                ),
                            ));
                        }
                    }
                    through.push((i, at));
                }
            }
        }
        let Some((Bson::Array(items), _, _)) = array else {
            self.emit(&fields, not_found);
            return Ok(());
        };
        for &(i, at) in &through {
            self.multikey_paths[i].insert(self.paths[i][..at].join("."));
        }
        // An empty array indexes as `undefined` where the path ends there;
        // paths that go on inside it find nothing (null).
        let elements: &'a [Bson] = if items.is_empty() {
            std::slice::from_ref(&UNDEFINED_VALUE)
        } else {
            items
        };
        for element in elements {
            let mut next = fields.clone();
            for &(i, at) in &through {
                next[i] = if at == self.paths[i].len() {
                    Slot::Fixed(element)
                } else {
                    Slot::Walking(at)
                };
            }
            let inner = match element {
                Bson::Document(d) => Some(d),
                _ => None,
            };
            self.expand(inner, next, not_found)?;
        }
        Ok(())
    }

    /// Encode one fully settled key (sparse indexes skip keys in which no
    /// field was found, as mongod does per key).
    fn emit(&mut self, fields: &[Slot<'_>], not_found: usize) {
        if self.sparse && not_found == fields.len() {
            return;
        }
        let values: Vec<&Bson> = fields
            .iter()
            .map(|slot| match slot {
                Slot::Fixed(v) => *v,
                Slot::Walking(_) => &NULL_VALUE,
            })
            .collect();
        let key = keystring::encode_key(&values, &self.ascending, self.collation);
        if self.seen.insert(key.clone()) {
            self.keys.push(key);
        }
    }
}

/// The values of `doc` for each key field, for a duplicate-key message
/// (`keyValue`): the first value found along each path.
pub fn key_value(spec: &IndexSpec, doc: &Document) -> Document {
    let mut out = Document::new();
    for (path, _) in &spec.fields {
        let pv = path_values(doc, path);
        out.insert(
            path.clone(),
            pv.values.into_iter().next().unwrap_or(Bson::Null),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn spec(key: Document) -> IndexSpec {
        IndexSpec::parse(&doc! {"key": key}, None).unwrap()
    }

    /// Keys read from a record's bytes are the keys of the record decoded,
    /// for plain records (read without decoding) and the others alike.
    #[test]
    fn keys_read_from_bytes_are_the_decoded_records_keys() {
        let specs = [
            doc! {"key": {"a": 1}},
            doc! {"key": {"a": 1, "b": -1}},
            doc! {"key": {"a.b": 1}},
            doc! {"key": {"a": 1}, "sparse": true},
            doc! {"key": {"a.b": 1, "c": -1}, "sparse": true},
            doc! {"key": {"b": 1}, "collation": {"locale": "en", "strength": 2}},
            doc! {"key": {"a": 1}, "partialFilterExpression": {"c": {"$gt": 0}}},
        ];
        // A record naming `b` twice: decoding keeps the last value.
        let mut twice = bson::RawDocumentBuf::new();
        twice.append("b", "Up");
        twice.append("a", 1);
        twice.append("b", "down");
        let mut records: Vec<bson::RawDocumentBuf> = [
            doc! {"a": 1, "b": "X", "c": 2},
            doc! {"c": 1},
            doc! {"a": {"b": 5}, "b": 2.5},
            doc! {"a": 5, "c": 3},
            doc! {"a": {"b": {"c": [1]}}, "c": null},
            doc! {"a": [1, 2], "b": "y"},
            doc! {"a": {"b": [3, 4]}, "c": 1},
        ]
        .iter()
        .map(|d| bson::RawDocumentBuf::from_document(d).unwrap())
        .collect();
        records.push(twice);
        let mut plain = 0;
        for spec in &specs {
            let index = Index::new(IndexSpec::parse(spec, None).unwrap());
            for raw in &records {
                let decoded = crate::codec::decode(raw).unwrap();
                let want = index.keys_for(&decoded).unwrap();
                assert_eq!(index.keys_for_raw(raw).unwrap(), want, "{spec} {decoded}");
                let mut gathered = BulkKeys::default();
                index.gather_keys(raw, 7, &mut gathered).unwrap();
                let mut pushed = BulkKeys::default();
                pushed.push_doc(&want, 7);
                assert_eq!(gathered.bytes, pushed.bytes, "{spec} {decoded}");
                assert_eq!(gathered.len(), pushed.len());
                if !index.reads_whole_record() && index.plain_keys_raw(raw).is_some() {
                    plain += 1;
                }
            }
        }
        // Every record without an array on a key path was read plainly.
        assert_eq!(plain, 41);
    }

    #[test]
    fn an_index_whose_fields_kept_their_bytes_is_known_to_keep_its_keys() {
        let raw = |d: Document| bson::RawDocumentBuf::from_document(&d).unwrap();
        let ab = Index::new(spec(doc! {"a.x": 1, "b": 1}));
        let before = raw(doc! {"_id": 1, "a": {"x": 1, "y": 2}, "c": 3});
        // Other fields changed, moved or added: the same keys.
        assert!(ab.reads_same(
            &before,
            &raw(doc! {"c": 4, "_id": 1, "a": {"x": 1, "y": 2}})
        ));
        // `b` missing in both is the same; gaining it, or any change
        // inside `a` (even one the key does not read), is not.
        assert!(!ab.reads_same(
            &before,
            &raw(doc! {"_id": 1, "a": {"x": 1, "y": 2}, "b": null})
        ));
        assert!(!ab.reads_same(
            &before,
            &raw(doc! {"_id": 1, "a": {"x": 1, "y": 3}, "c": 3})
        ));
        // The same value as another type is another key.
        assert!(!ab.reads_same(&raw(doc! {"b": 1}), &raw(doc! {"b": 1_i64})));
        // A partial index's filter may read any field.
        let partial = Index::new(
            IndexSpec::parse(
                &doc! {"key": {"a": 1}, "partialFilterExpression": {"c": 1}},
                None,
            )
            .unwrap(),
        );
        assert!(!partial.reads_same(&before, &before));
    }

    #[test]
    fn default_names() {
        assert_eq!(default_name(&doc! {"a": 1, "b.c": -1}), "a_1_b.c_-1");
    }

    #[test]
    fn arrays_expand_and_missing_is_null() {
        let s = spec(doc! {"tags": 1});
        let k = generate_keys(&s, &doc! {"tags": ["x", "y", "x"]}).unwrap();
        assert_eq!(k.keys.len(), 2);
        assert!(k.multikey_paths[0].contains("tags"));
        let missing = generate_keys(&s, &doc! {"other": 1}).unwrap();
        assert_eq!(
            missing.keys,
            vec![keystring::encode_single(&Bson::Null, None)]
        );
        let empty = generate_keys(&s, &doc! {"tags": []}).unwrap();
        assert_eq!(
            empty.keys,
            vec![keystring::encode_single(&Bson::Undefined, None)]
        );
    }

    #[test]
    fn dotted_paths_through_arrays_of_documents() {
        let s = spec(doc! {"a.b": 1});
        let k = generate_keys(&s, &doc! {"a": [{"b": 1}, {"b": 2}, {"c": 3}]}).unwrap();
        assert_eq!(k.keys.len(), 3, "1, 2 and null");
        assert!(k.multikey_paths[0].contains("a"));
    }

    #[test]
    fn parallel_arrays_are_refused() {
        let s = spec(doc! {"a": 1, "b": 1});
        let err = generate_keys(&s, &doc! {"a": [1, 2], "b": [3, 4]}).unwrap_err();
        assert_eq!(err.code, ErrorCode::CANNOT_INDEX_PARALLEL_ARRAYS);
        assert!(generate_keys(&s, &doc! {"a": [1, 2], "b": 3}).is_ok());
    }

    fn key(values: &[Bson]) -> Vec<u8> {
        let refs: Vec<&Bson> = values.iter().collect();
        keystring::encode_key(&refs, &vec![true; values.len()], None)
    }

    fn sorted(mut keys: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        keys.sort();
        keys
    }

    #[test]
    fn fields_through_the_same_array_are_correlated() {
        let s = spec(doc! {"attrs.k": 1, "attrs.v": 1});
        let k = generate_keys(
            &s,
            &doc! {"attrs": [{"k": "color", "v": "red"}, {"k": "size", "v": 9}]},
        )
        .unwrap();
        assert_eq!(
            sorted(k.keys),
            sorted(vec![
                key(&["color".into(), "red".into()]),
                key(&["size".into(), 9.into()]),
            ]),
            "one key per element, not the cross product"
        );
        for paths in &k.multikey_paths {
            assert_eq!(paths.iter().collect::<Vec<_>>(), vec!["attrs"]);
        }
    }

    #[test]
    fn nested_array_expands_within_its_element() {
        let s = spec(doc! {"attrs.k": 1, "attrs.v": 1});
        let k = generate_keys(
            &s,
            &doc! {"attrs": [{"k": "a", "v": [1, 2]}, {"k": "b", "v": 3}]},
        )
        .unwrap();
        assert_eq!(
            sorted(k.keys),
            sorted(vec![
                key(&["a".into(), 1.into()]),
                key(&["a".into(), 2.into()]),
                key(&["b".into(), 3.into()]),
            ])
        );
        assert_eq!(
            k.multikey_paths[0].iter().collect::<Vec<_>>(),
            vec!["attrs"]
        );
        assert_eq!(
            k.multikey_paths[1].iter().collect::<Vec<_>>(),
            vec!["attrs", "attrs.v"]
        );
    }

    #[test]
    fn outside_fields_combine_with_each_element() {
        let s = spec(doc! {"sku": 1, "attrs.k": 1, "attrs.v": -1});
        let k = generate_keys(
            &s,
            &doc! {"sku": "x1", "attrs": [{"k": "color", "v": "red"}, {"k": "size"}, 7]},
        )
        .unwrap();
        let asc = [true, true, false];
        let enc = |v: [Bson; 3]| keystring::encode_key(&[&v[0], &v[1], &v[2]], &asc, None);
        assert_eq!(
            sorted(k.keys),
            sorted(vec![
                enc(["x1".into(), "color".into(), "red".into()]),
                enc(["x1".into(), "size".into(), Bson::Null]),
                // A scalar element has no subfields: null for both, as mongod.
                enc(["x1".into(), Bson::Null, Bson::Null]),
            ])
        );
        assert!(k.multikey_paths[0].is_empty());
    }

    #[test]
    fn whole_array_and_subpath_share_the_array() {
        let s = spec(doc! {"a": 1, "a.b": 1});
        let k = generate_keys(&s, &doc! {"a": [{"b": 1}, {"b": 2}]}).unwrap();
        assert_eq!(
            sorted(k.keys),
            sorted(vec![
                key(&[Bson::Document(doc! {"b": 1}), 1.into()]),
                key(&[Bson::Document(doc! {"b": 2}), 2.into()]),
            ])
        );
    }

    #[test]
    fn empty_shared_array_indexes_null_subfields() {
        let s = spec(doc! {"attrs": 1, "attrs.k": 1});
        let k = generate_keys(&s, &doc! {"attrs": []}).unwrap();
        assert_eq!(k.keys, vec![key(&[Bson::Undefined, Bson::Null])]);
        assert!(k.multikey_paths.iter().all(|p| p.contains("attrs")));
    }

    #[test]
    fn different_arrays_are_parallel_even_when_nested() {
        let s = spec(doc! {"a.x": 1, "b.y": 1});
        let err = generate_keys(&s, &doc! {"a": [{"x": 1}], "b": [{"y": 2}]}).unwrap_err();
        assert_eq!(err.code, ErrorCode::CANNOT_INDEX_PARALLEL_ARRAYS);
        assert_eq!(err.message, "cannot index parallel arrays [b] [a]");
        // Inside one shared element, two different arrays are parallel too.
        let s = spec(doc! {"a.b": 1, "a.c": 1});
        let err = generate_keys(&s, &doc! {"a": [{"b": [1, 2], "c": [3, 4]}]}).unwrap_err();
        assert_eq!(err.message, "cannot index parallel arrays [c] [b]");
        // But one array per element is fine.
        assert!(
            generate_keys(&s, &doc! {"a": [{"b": [1, 2], "c": 3}, {"b": 4, "c": [5]}]}).is_ok()
        );
    }

    #[test]
    fn sparse_skips_keys_where_nothing_was_found() {
        let s = IndexSpec::parse(&doc! {"key": {"a.b": 1}, "sparse": true}, None).unwrap();
        let k = generate_keys(&s, &doc! {"a": [{"c": 1}, {"b": 2}]}).unwrap();
        assert_eq!(k.keys, vec![key(&[2.into()])]);
    }

    #[test]
    fn sparse_skips_documents_without_the_field() {
        let s = IndexSpec::parse(&doc! {"key": {"a": 1}, "sparse": true}, None).unwrap();
        assert!(generate_keys(&s, &doc! {"b": 1}).unwrap().keys.is_empty());
        assert_eq!(generate_keys(&s, &doc! {"a": null}).unwrap().keys.len(), 1);
    }

    #[test]
    fn scans_and_unique_probes() {
        let mut ix = Index::new(spec(doc! {"n": 1}));
        for (rid, n) in [(1, 5), (2, 3), (3, 5), (4, 9)] {
            let keys = ix.keys_for(&doc! {"n": n}).unwrap();
            ix.insert_keys(&keys, rid);
        }
        let five = keystring::encode_single(&Bson::Int32(5), None);
        assert_eq!(ix.records_for_key(&five).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(ix.conflicts(&five, Some(1)), Some(3));
        let ge5: Vec<_> = ix
            .scan(Bound::Included(&five), Bound::Unbounded)
            .map(|(_, r)| r)
            .collect();
        assert_eq!(ge5, vec![1, 3, 4]);
        let gt5: Vec<_> = ix
            .scan(Bound::Excluded(&five), Bound::Unbounded)
            .map(|(_, r)| r)
            .collect();
        assert_eq!(gt5, vec![4]);
    }
}
