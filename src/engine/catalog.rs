//! The catalog: databases, collections and their records.
//!
//! A collection keeps each document as raw BSON under a record id that grows
//! with every insert, so a collection scan returns documents in insertion
//! order, as mongod's does. Every write goes through [`Collection`], which
//! computes all index keys first, checks unique constraints and the
//! validator, and only then changes anything: a failed write leaves records
//! and indexes exactly as they were.
//!
//! Collections are shared (`Arc`) and copied on write, so cloning a
//! `Catalog` is cheap: a reader takes such a snapshot under the engine's
//! lock for a moment and then runs without holding it, and a writer that
//! meets a collection still shared with a running reader copies that one
//! collection first (`Arc::make_mut`). Readers never hold up writers, the
//! TTL monitor included, and a write to one collection copies nothing of
//! the others.

use std::collections::BTreeMap;
use std::sync::Arc;

use bson::{Bson, Document, RawDocumentBuf, doc};

use super::collation::Collation;
use super::error::{EngineError, ErrorCode, Result};
use super::expr::Vars;
use super::filter::Filter;
use super::index::{DocKeys, Index, IndexSpec, RecordId, key_value};
use super::update::display;
use super::{CreateIndexesOutcome, MAX_BSON_OBJECT_SIZE, keystring, limits, size_model};

/// Every database of the engine.
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    /// Shared with snapshots: cloning the catalog is one reference count.
    dbs: Arc<BTreeMap<String, Arc<Database>>>,
}

/// One database: a set of named collections.
#[derive(Debug, Default, Clone)]
pub struct Database {
    collections: BTreeMap<String, Arc<Collection>>,
}

/// A collection: records in insertion order plus their indexes.
#[derive(Debug, Clone)]
pub struct Collection {
    uuid: bson::Uuid,
    /// The `create` options as given (validator, collation, …).
    options: Document,
    validator: Option<Filter>,
    collation: Option<Collation>,
    /// Records by id: slot `i` holds record `first_record + i`, `None` once
    /// deleted. Ids only grow, so a vector keeps them in order without the
    /// half-empty nodes a B-tree fills with ascending keys.
    records: Vec<Option<RawDocumentBuf>>,
    first_record: RecordId,
    live: usize,
    indexes: Vec<Index>,
    data_size: u64,
}

/// Validate a database name as mongod does.
pub fn check_db_name(db: &str) -> Result<()> {
    if db.is_empty() || db.len() >= 64 || db.contains(['/', '\\', '.', ' ', '"', '$', '\0']) {
        return Err(EngineError::new(
            ErrorCode::INVALID_NAMESPACE,
            format!("Invalid database name: '{db}'"),
        ));
    }
    Ok(())
}

/// Validate a collection name as mongod does.
pub fn check_coll_name(db: &str, coll: &str) -> Result<()> {
    check_db_name(db)?;
    if coll.is_empty() || coll.contains('\0') || coll.starts_with('.') {
        return Err(EngineError::new(
            ErrorCode::INVALID_NAMESPACE,
            format!("Invalid collection name: {coll}"),
        ));
    }
    if coll.contains('$') {
        return Err(EngineError::new(
            ErrorCode::INVALID_NAMESPACE,
            format!("Invalid collection name: {db}.{coll}"),
        ));
    }
    Ok(())
}

/// mongod's longest `<db>.<collection>` for a collection
/// (`NamespaceString::MaxNsCollectionLen`).
pub const MAX_NS_COLLECTION_LEN: usize = 255;

/// The `system.` collections a client may create (mongod's
/// `isLegalClientSystemNS`): `system.js` anywhere, `system.profile` (which
/// mongod lets a client create to resize the profiler's collection, and
/// which the profiler itself writes), and the user, role and version
/// collections of `admin`.
fn legal_client_system_ns(db: &str, coll: &str) -> bool {
    coll == "system.js"
        || coll == "system.profile"
        || (db == "admin"
            && matches!(
                coll,
                "system.users"
                    | "system.roles"
                    | "system.version"
                    | "system.new_users"
                    | "system.backup_users"
            ))
}

/// Whether a client may create (and so write to) `db.coll`, as mongod's
/// `userAllowedCreateNS`: a valid name, not a reserved `system.`
/// collection, at most 255 bytes in all.
pub fn check_create_ns(db: &str, coll: &str) -> Result<()> {
    check_coll_name(db, coll)?;
    if coll.starts_with("system.") && !legal_client_system_ns(db, coll) {
        return Err(EngineError::new(
            ErrorCode::INVALID_NAMESPACE,
            format!("Invalid system namespace: {db}.{coll}"),
        ));
    }
    if db.len() + 1 + coll.len() > MAX_NS_COLLECTION_LEN {
        return Err(EngineError::new(
            ErrorCode::INVALID_NAMESPACE,
            format!(
                "Fully qualified namespace is too long. Namespace: {db}.{coll} Max: {MAX_NS_COLLECTION_LEN}"
            ),
        ));
    }
    Ok(())
}

impl Collection {
    fn new(options: Document) -> Result<Self> {
        let validator = match options.get("validator") {
            Some(Bson::Document(v)) if !v.is_empty() => Some(Filter::parse(v, None)?),
            Some(Bson::Document(_)) | None => None,
            Some(_) => return Err(EngineError::type_mismatch("'validator' must be an object")),
        };
        let collation = match options.get("collation") {
            Some(Bson::Document(c)) => Collation::parse(c)?,
            Some(_) => return Err(EngineError::type_mismatch("collation must be an object")),
            None => None,
        };
        let mut id_spec = IndexSpec::id_index();
        id_spec.collation = collation.clone();
        Ok(Collection {
            uuid: bson::Uuid::new(),
            options,
            validator,
            collation,
            records: Vec::new(),
            first_record: 1,
            live: 0,
            indexes: vec![Index::new(id_spec)],
            data_size: 0,
        })
    }

    /// The collection's default collation.
    pub fn collation(&self) -> Option<&Collation> {
        self.collation.as_ref()
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether the collection holds no documents.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The exact sum of the documents' BSON sizes.
    pub fn data_size(&self) -> u64 {
        self.data_size
    }

    /// The indexes, `_id_` first.
    pub fn indexes(&self) -> &[Index] {
        &self.indexes
    }

    /// An index by name.
    pub fn index(&self, name: &str) -> Option<&Index> {
        self.indexes.iter().find(|i| i.spec.name == name)
    }

    /// Records in insertion order.
    pub fn records(&self) -> impl DoubleEndedIterator<Item = (RecordId, &RawDocumentBuf)> {
        let first = self.first_record;
        self.records
            .iter()
            .enumerate()
            .filter_map(move |(i, slot)| slot.as_ref().map(|raw| (first + i as u64, raw)))
    }

    /// The first live record at or after `rid`, in insertion order: a
    /// scan resumes from here without holding a list of record ids.
    pub fn live_from(&self, rid: RecordId) -> Option<RecordId> {
        let start = usize::try_from(rid.saturating_sub(self.first_record)).ok()?;
        let first = self.first_record;
        self.records
            .get(start..)?
            .iter()
            .position(Option::is_some)
            .map(|i| first + (start + i) as u64)
    }

    /// One record's raw document.
    pub fn raw(&self, rid: RecordId) -> Option<&RawDocumentBuf> {
        self.slot(rid)?.as_ref()
    }

    fn slot(&self, rid: RecordId) -> Option<&Option<RawDocumentBuf>> {
        let i = usize::try_from(rid.checked_sub(self.first_record)?).ok()?;
        self.records.get(i)
    }

    fn slot_mut(&mut self, rid: RecordId) -> Option<&mut Option<RawDocumentBuf>> {
        let i = usize::try_from(rid.checked_sub(self.first_record)?).ok()?;
        self.records.get_mut(i)
    }

    fn next_record(&self) -> RecordId {
        self.first_record + self.records.len() as u64
    }

    /// One record as a document.
    pub fn doc(&self, rid: RecordId) -> Result<Option<Document>> {
        match self.raw(rid) {
            Some(raw) => Ok(Some(to_document(raw)?)),
            None => Ok(None),
        }
    }

    /// The record whose `_id` equals `id`, through the `_id_` index.
    pub fn find_by_id(&self, id: &Bson) -> Option<RecordId> {
        let key = keystring::encode_single(id, self.collation.as_ref());
        self.indexes[0].records_for_key(&key).next()
    }

    fn only_id_index(&self) -> bool {
        self.indexes.len() == 1 && self.validator.is_none()
    }

    /// Compute every index's keys for `doc`, checking unique constraints
    /// against records other than `except`.
    fn keys_checked(
        &self,
        ns: &str,
        doc: &Document,
        except: Option<RecordId>,
    ) -> Result<Vec<DocKeys>> {
        let mut all = Vec::with_capacity(self.indexes.len());
        for index in &self.indexes {
            let keys = index.keys_for(doc)?;
            if index.spec.unique {
                for key in &keys.keys {
                    if index.conflicts(key, except).is_some() {
                        return Err(duplicate_key(ns, &index.spec, doc));
                    }
                }
            }
            all.push(keys);
        }
        Ok(all)
    }

    fn validate(&self, doc: &Document) -> Result<()> {
        if let Some(v) = &self.validator
            && !v.matches(doc, &Vars::default())?
        {
            return Err(EngineError::new(
                ErrorCode::DOCUMENT_VALIDATION_FAILURE,
                "Document failed validation",
            )
            .with_info(doc! {"errInfo": {
                "failingDocumentId": doc.get("_id").cloned().unwrap_or(Bson::Null),
                "details": {"operatorName": "$and", "schemaRulesNotSatisfied": []},
            }}));
        }
        Ok(())
    }

    /// Insert a document that already has its `_id` first.
    pub fn insert(&mut self, ns: &str, raw: RawDocumentBuf) -> Result<RecordId> {
        check_size(raw.as_bytes().len(), "object to insert too large")?;
        limits::check_insert_depth(&raw)?;
        let rid = self.next_record();
        if self.only_id_index() {
            // Fast path: read `_id` straight from the raw bytes.
            let id = raw
                .get("_id")
                .ok()
                .flatten()
                .and_then(|r| r.to_raw_bson().try_into().ok())
                .unwrap_or(Bson::Null);
            check_id(&id)?;
            let key = keystring::encode_single(&id, self.collation.as_ref());
            if self.indexes[0].conflicts(&key, None).is_some() {
                return Err(duplicate_key(ns, &self.indexes[0].spec, &doc! {"_id": id}));
            }
            let keys = DocKeys {
                keys: vec![key],
                multikey_paths: vec![Default::default()],
            };
            self.indexes[0].insert_keys(&keys, rid);
            super::metrics::keys_written(1, 0);
        } else {
            let doc = to_document(&raw)?;
            check_id(doc.get("_id").unwrap_or(&Bson::Null))?;
            self.validate(&doc)?;
            let keys = self.keys_checked(ns, &doc, None)?;
            for (index, k) in self.indexes.iter_mut().zip(&keys) {
                index.insert_keys(k, rid);
                super::metrics::keys_written(k.keys.len() as u64, 0);
            }
        }
        self.data_size += raw.as_bytes().len() as u64;
        self.records.push(Some(raw));
        self.live += 1;
        Ok(rid)
    }

    /// Replace record `rid` with `new_doc`, keeping its record id.
    pub fn replace(&mut self, ns: &str, rid: RecordId, new_doc: &Document) -> Result<()> {
        limits::check_update_depth(new_doc)?;
        let raw = RawDocumentBuf::from_document(new_doc)
            .map_err(|e| EngineError::bad_value(format!("invalid document: {e}")))?;
        check_size(
            raw.as_bytes().len(),
            "Resulting document after update is larger than 16777216",
        )?;
        let Some(old_raw) = self.raw(rid) else {
            return Err(EngineError::new(
                ErrorCode::INTERNAL_ERROR,
                "record vanished",
            ));
        };
        let old_len = old_raw.as_bytes().len() as u64;
        let old_doc = to_document(old_raw)?;
        self.validate(new_doc)?;
        let new_keys = self.keys_checked(ns, new_doc, Some(rid))?;
        let mut old_keys = Vec::with_capacity(self.indexes.len());
        for index in &self.indexes {
            old_keys.push(index.keys_for(&old_doc)?);
        }
        for ((index, old), new) in self.indexes.iter_mut().zip(&old_keys).zip(&new_keys) {
            if old != new {
                index.remove_keys(old, rid);
                index.insert_keys(new, rid);
                // mongod counts the keys that changed, not every key.
                let added = new.keys.iter().filter(|k| !old.keys.contains(k)).count();
                let removed = old.keys.iter().filter(|k| !new.keys.contains(k)).count();
                super::metrics::keys_written(added as u64, removed as u64);
            }
        }
        self.data_size = self.data_size + raw.as_bytes().len() as u64 - old_len;
        if let Some(slot) = self.slot_mut(rid) {
            *slot = Some(raw);
        }
        Ok(())
    }

    /// Remove record `rid`, returning its document.
    pub fn remove(&mut self, rid: RecordId) -> Result<Option<Document>> {
        let Some(raw) = self.slot_mut(rid).and_then(Option::take) else {
            return Ok(None);
        };
        self.live -= 1;
        let doc = to_document(&raw)?;
        for index in &mut self.indexes {
            // Keys computed from a stored document cannot fail: they did
            // when it was written.
            if let Ok(keys) = index.keys_for(&doc) {
                index.remove_keys(&keys, rid);
                super::metrics::keys_written(0, keys.keys.len() as u64);
            }
        }
        self.data_size -= raw.as_bytes().len() as u64;
        Ok(Some(doc))
    }

    /// Remove every document, keeping the indexes' definitions.
    pub fn clear(&mut self) {
        // Ids are never reused: the next record continues the sequence.
        self.first_record = self.next_record();
        self.records.clear();
        self.live = 0;
        self.data_size = 0;
        for index in &mut self.indexes {
            index.clear();
        }
    }

    fn build_index(&self, ns: &str, spec: IndexSpec) -> Result<Index> {
        let mut index = Index::new(spec);
        for (rid, raw) in self.records() {
            let doc = to_document(raw)?;
            let keys = index.keys_for(&doc)?;
            if index.spec.unique {
                for key in &keys.keys {
                    if index.conflicts(key, Some(rid)).is_some() {
                        return Err(duplicate_key(ns, &index.spec, &doc));
                    }
                }
            }
            index.insert_keys(&keys, rid);
        }
        Ok(index)
    }
}

fn check_size(len: usize, what: &str) -> Result<()> {
    if len > MAX_BSON_OBJECT_SIZE {
        return Err(EngineError::new(
            ErrorCode::BSON_OBJECT_TOO_LARGE,
            format!("{what}. size in bytes: {len}, max size: {MAX_BSON_OBJECT_SIZE}"),
        ));
    }
    Ok(())
}

fn check_id(id: &Bson) -> Result<()> {
    match id {
        Bson::Array(_) => Err(EngineError::new(
            ErrorCode::BAD_VALUE,
            "The '_id' value cannot be of type array",
        )),
        Bson::RegularExpression(_) => Err(EngineError::new(
            ErrorCode::BAD_VALUE,
            "The '_id' value cannot be of type regex",
        )),
        Bson::Undefined => Err(EngineError::new(
            ErrorCode::BAD_VALUE,
            "can't use a undefined for _id",
        )),
        Bson::Document(d) => check_no_dollar_fields(d),
        _ => Ok(()),
    }
}

/// `_id` sub-documents may not hold `$`-prefixed field names, at any depth.
fn check_no_dollar_fields(d: &Document) -> Result<()> {
    for (k, v) in d {
        if k.starts_with('$') {
            return Err(EngineError::new(
                ErrorCode::DOLLAR_PREFIXED_FIELD_NAME,
                format!(
                    "_id fields may not contain '$'-prefixed fields: {k} is not valid for storage."
                ),
            ));
        }
        if let Bson::Document(inner) = v {
            check_no_dollar_fields(inner)?;
        }
    }
    Ok(())
}

/// Decode a stored document.
pub fn to_document(raw: &RawDocumentBuf) -> Result<Document> {
    raw.to_document()
        .map_err(|e| EngineError::new(ErrorCode::INTERNAL_ERROR, format!("corrupt record: {e}")))
}

/// mongod's duplicate key error, with `keyPattern` and `keyValue`.
pub fn duplicate_key(ns: &str, spec: &IndexSpec, doc: &Document) -> EngineError {
    let key_value = key_value(spec, doc);
    let shown = key_value
        .iter()
        .map(|(k, v)| format!("{k}: {}", shell_repr(v)))
        .collect::<Vec<_>>()
        .join(", ");
    EngineError::new(
        ErrorCode::DUPLICATE_KEY,
        format!(
            "E11000 duplicate key error collection: {ns} index: {} dup key: {{ {shown} }}",
            spec.name
        ),
    )
    .with_info(doc! {"keyPattern": spec.key.clone(), "keyValue": key_value})
}

/// A value as mongod prints it inside error messages.
pub fn shell_repr(v: &Bson) -> String {
    match v {
        Bson::String(s) => format!("\"{s}\""),
        Bson::ObjectId(o) => format!("ObjectId('{o}')"),
        Bson::Null => "null".into(),
        Bson::Int32(i) => i.to_string(),
        Bson::Int64(i) => i.to_string(),
        Bson::Double(d) => d.to_string(),
        Bson::Document(d) => {
            let inner = d
                .iter()
                .map(|(k, v)| format!("{k}: {}", shell_repr(v)))
                .collect::<Vec<_>>()
                .join(", ");
            format!("{{ {inner} }}")
        }
        Bson::Array(a) => format!(
            "[ {} ]",
            a.iter().map(shell_repr).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

impl Catalog {
    /// The databases for writing (copied first if a snapshot shares them).
    fn dbs_mut(&mut self) -> &mut BTreeMap<String, Arc<Database>> {
        Arc::make_mut(&mut self.dbs)
    }

    /// A database for writing, if it exists (copied first if shared).
    fn db_mut(&mut self, db: &str) -> Option<&mut Database> {
        if !self.dbs.contains_key(db) {
            return None;
        }
        self.dbs_mut().get_mut(db).map(Arc::make_mut)
    }

    /// A database for writing, created if missing.
    fn db_or_create(&mut self, db: &str) -> &mut Database {
        Arc::make_mut(self.dbs_mut().entry(db.to_string()).or_default())
    }

    /// A collection, if it exists.
    pub fn collection(&self, db: &str, coll: &str) -> Option<&Collection> {
        self.dbs.get(db)?.collections.get(coll).map(Arc::as_ref)
    }

    /// A collection shared with its readers, if it exists: a cursor holds
    /// one to continue its plan over the snapshot its read took.
    pub fn collection_shared(&self, db: &str, coll: &str) -> Option<Arc<Collection>> {
        self.dbs.get(db)?.collections.get(coll).cloned()
    }

    /// A collection for writing, if it exists.
    pub fn collection_mut(&mut self, db: &str, coll: &str) -> Option<&mut Collection> {
        if !self.dbs.get(db)?.collections.contains_key(coll) {
            return None;
        }
        self.db_mut(db)?
            .collections
            .get_mut(coll)
            .map(Arc::make_mut)
    }

    /// A collection for writing, created implicitly (as inserts do).
    /// Returns whether it was created.
    pub fn collection_or_create(
        &mut self,
        db: &str,
        coll: &str,
    ) -> Result<(&mut Collection, bool)> {
        check_create_ns(db, coll)?;
        let database = self.db_or_create(db);
        let created = !database.collections.contains_key(coll);
        if created {
            database.collections.insert(
                coll.to_string(),
                Arc::new(Collection::new(Document::new())?),
            );
        }
        let c = database
            .collections
            .get_mut(coll)
            .map(Arc::make_mut)
            .ok_or_else(|| EngineError::new(ErrorCode::INTERNAL_ERROR, "collection vanished"))?;
        Ok((c, created))
    }

    /// Names of the collections of `db`.
    pub fn collection_names(&self, db: &str) -> Vec<String> {
        self.dbs
            .get(db)
            .map(|d| d.collections.keys().cloned().collect())
            .unwrap_or_default()
    }

    pub fn create_indexes(
        &mut self,
        db: &str,
        coll: &str,
        specs: &[Document],
    ) -> Result<CreateIndexesOutcome> {
        if specs.is_empty() {
            return Err(EngineError::bad_value(
                "Must specify at least one index to create",
            ));
        }
        let ns = format!("{db}.{coll}");
        // Specs are validated before the collection is created, so a
        // refused request leaves no collection behind.
        let collation = self.collection(db, coll).and_then(|c| c.collation.clone());
        let requested = specs
            .iter()
            .map(|s| IndexSpec::parse(s, collation.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        let (c, created) = self.collection_or_create(db, coll)?;
        let before = c.indexes.len();
        let mut parsed = Vec::with_capacity(specs.len());
        for spec in requested {
            // mongod's `_doesSpecConflictWithExisting`: by name first, then
            // by signature (key, collation, partial filter, unique, sparse).
            let shown = |s: &IndexSpec| display::value(&Bson::Document(s.to_document()));
            if let Some(existing) = c.indexes.iter().find(|i| i.spec.name == spec.name) {
                if existing.spec.same_definition(&spec) {
                    continue;
                }
                if existing.spec.same_signature(&spec) {
                    return Err(EngineError::new(
                        ErrorCode::INDEX_OPTIONS_CONFLICT,
                        format!(
                            "An equivalent index already exists with the same name but different options. Requested index: {}, existing index: {}",
                            shown(&spec),
                            shown(&existing.spec)
                        ),
                    ));
                }
                return Err(EngineError::new(
                    ErrorCode::INDEX_KEY_SPECS_CONFLICT,
                    format!(
                        "An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: {}, existing index: {}",
                        shown(&spec),
                        shown(&existing.spec)
                    ),
                ));
            }
            if let Some(existing) = c.indexes.iter().find(|i| i.spec.same_signature(&spec)) {
                if existing.spec.same_definition(&spec) {
                    return Err(EngineError::new(
                        ErrorCode::INDEX_OPTIONS_CONFLICT,
                        format!(
                            "Index already exists with a different name: {}",
                            existing.spec.name
                        ),
                    ));
                }
                return Err(EngineError::new(
                    ErrorCode::INDEX_OPTIONS_CONFLICT,
                    format!(
                        "An equivalent index already exists with a different name and options. Requested index: {}, existing index: {}",
                        shown(&spec),
                        shown(&existing.spec)
                    ),
                ));
            }
            if parsed.iter().any(|p: &IndexSpec| p.name == spec.name) {
                continue;
            }
            parsed.push(spec);
        }
        // Build every index before adding any: all or nothing.
        let mut built = Vec::with_capacity(parsed.len());
        for spec in parsed {
            built.push(c.build_index(&ns, spec)?);
        }
        let note = built
            .is_empty()
            .then(|| "all indexes already exist".to_string());
        c.indexes.extend(built);
        Ok(CreateIndexesOutcome {
            indexes_before: before,
            indexes_after: c.indexes.len(),
            created_collection: created,
            note,
        })
    }

    pub fn list_indexes(&self, db: &str, coll: &str) -> Result<Vec<Document>> {
        let c = self
            .collection(db, coll)
            .ok_or_else(|| ns_not_found(db, coll))?;
        Ok(c.indexes.iter().map(|i| i.spec.to_document()).collect())
    }

    pub fn drop_indexes(&mut self, db: &str, coll: &str, which: &Bson) -> Result<usize> {
        let c = self
            .collection_mut(db, coll)
            .ok_or_else(|| ns_not_found(db, coll))?;
        let before = c.indexes.len();
        let not_found = |what: String| {
            EngineError::new(
                ErrorCode::INDEX_NOT_FOUND,
                format!("index not found with name [{what}]"),
            )
        };
        let names: Vec<String> = match which {
            Bson::String(s) if s == "*" => {
                c.indexes.truncate(1);
                return Ok(before);
            }
            Bson::String(s) => vec![s.clone()],
            Bson::Array(items) => items
                .iter()
                .map(|i| match i {
                    Bson::String(s) => Ok(s.clone()),
                    _ => Err(EngineError::type_mismatch("index names must be strings")),
                })
                .collect::<Result<_>>()?,
            Bson::Document(key) => {
                let found = c
                    .indexes
                    .iter()
                    .find(|i| &i.spec.key == key)
                    .ok_or_else(|| {
                        EngineError::new(
                            ErrorCode::INDEX_NOT_FOUND,
                            format!("can't find index with key: {key}"),
                        )
                    })?;
                vec![found.spec.name.clone()]
            }
            _ => {
                return Err(EngineError::type_mismatch(
                    "'index' must be a string, array or object",
                ));
            }
        };
        for name in &names {
            if name == "_id_" {
                return Err(EngineError::new(
                    ErrorCode::INVALID_OPTIONS,
                    "cannot drop _id index",
                ));
            }
            if !c.indexes.iter().any(|i| &i.spec.name == name) {
                return Err(not_found(name.clone()));
            }
        }
        c.indexes.retain(|i| !names.contains(&i.spec.name));
        Ok(before)
    }

    pub fn create_collection(&mut self, db: &str, coll: &str, options: &Document) -> Result<()> {
        check_create_ns(db, coll)?;
        let mut opts = options.clone();
        for generic in [
            "create",
            "$db",
            "lsid",
            "$clusterTime",
            "$readPreference",
            "writeConcern",
            "comment",
            "apiVersion",
            "apiStrict",
            "apiDeprecationErrors",
        ] {
            opts.remove(generic);
        }
        for (key, _) in &opts {
            match key.as_str() {
                "validator"
                | "validationLevel"
                | "validationAction"
                | "collation"
                | "capped"
                | "size"
                | "max"
                | "storageEngine"
                | "indexOptionDefaults"
                | "idIndex"
                | "timeseries"
                | "expireAfterSeconds"
                | "clusteredIndex"
                | "viewOn"
                | "pipeline"
                | "changeStreamPreAndPostImages"
                | "autoIndexId"
                | "flags" => {}
                other => {
                    return Err(EngineError::new(
                        ErrorCode::INVALID_OPTIONS,
                        format!("BSON field 'create.{other}' is an unknown field."),
                    ));
                }
            }
        }
        for unsupported in ["viewOn", "timeseries", "clusteredIndex"] {
            if opts.contains_key(unsupported) {
                return Err(EngineError::not_implemented(format!(
                    "create with '{unsupported}'"
                )));
            }
        }
        if let Some(existing) = self.collection(db, coll) {
            if existing.options == opts {
                return Ok(());
            }
            return Err(EngineError::new(
                ErrorCode::NAMESPACE_EXISTS,
                format!("Collection {db}.{coll} already exists."),
            ));
        }
        let created = Arc::new(Collection::new(opts)?);
        self.db_or_create(db)
            .collections
            .insert(coll.to_string(), created);
        Ok(())
    }

    pub fn drop_collection(&mut self, db: &str, coll: &str) -> bool {
        if self.collection(db, coll).is_none() {
            return false;
        }
        let Some(database) = self.db_mut(db) else {
            return false;
        };
        let existed = database.collections.remove(coll).is_some();
        if database.collections.is_empty() {
            self.dbs_mut().remove(db);
        }
        existed
    }

    pub fn drop_database(&mut self, db: &str) -> bool {
        if !self.dbs.contains_key(db) {
            return false;
        }
        self.dbs_mut().remove(db).is_some()
    }

    pub fn list_collections(&self, db: &str, filter: &Document) -> Result<Vec<Document>> {
        let Some(database) = self.dbs.get(db) else {
            return Ok(Vec::new());
        };
        let filter = Filter::parse(filter, None)?;
        let mut out = Vec::new();
        for (name, c) in &database.collections {
            let entry = doc! {
                "name": name.clone(),
                "type": "collection",
                "options": c.options.clone(),
                "info": {"readOnly": false, "uuid": bson::Binary::from_uuid(c.uuid)},
                "idIndex": {"v": 2, "key": {"_id": 1}, "name": "_id_"},
            };
            if filter.matches(&entry, &Vars::default())? {
                out.push(entry);
            }
        }
        Ok(out)
    }

    pub fn list_databases(&self) -> Vec<Document> {
        self.dbs
            .iter()
            .map(|(name, d)| {
                let size: u64 = d
                    .collections
                    .values()
                    .map(|c| size_model::collection_sizes(c).total_size())
                    .sum();
                doc! {"name": name.clone(), "sizeOnDisk": size as i64, "empty": d.collections.is_empty()}
            })
            .collect()
    }

    pub fn rename_collection(&mut self, from: &str, to: &str, drop_target: bool) -> Result<()> {
        let split = |ns: &str| -> Result<(String, String)> {
            ns.split_once('.')
                .map(|(d, c)| (d.to_string(), c.to_string()))
                .ok_or_else(|| {
                    EngineError::new(
                        ErrorCode::INVALID_NAMESPACE,
                        format!("Invalid namespace specified '{ns}'"),
                    )
                })
        };
        let (fdb, fcoll) = split(from)?;
        let (tdb, tcoll) = split(to)?;
        check_create_ns(&tdb, &tcoll)?;
        if self.collection(&fdb, &fcoll).is_none() {
            return Err(EngineError::new(
                ErrorCode::NAMESPACE_NOT_FOUND,
                "source namespace does not exist",
            ));
        }
        if from == to {
            return Err(EngineError::new(
                ErrorCode::ILLEGAL_OPERATION,
                "Can't rename a collection to itself",
            ));
        }
        if self.collection(&tdb, &tcoll).is_some() {
            if !drop_target {
                return Err(EngineError::new(
                    ErrorCode::NAMESPACE_EXISTS,
                    "target namespace exists",
                ));
            }
            self.drop_collection(&tdb, &tcoll);
        }
        if self.collection(&fdb, &fcoll).is_none() {
            return Err(EngineError::new(
                ErrorCode::NAMESPACE_NOT_FOUND,
                "source namespace does not exist",
            ));
        }
        let moved = self
            .db_mut(&fdb)
            .and_then(|d| d.collections.remove(&fcoll))
            .ok_or_else(|| {
                EngineError::new(
                    ErrorCode::NAMESPACE_NOT_FOUND,
                    "source namespace does not exist",
                )
            })?;
        if self.dbs.get(&fdb).is_some_and(|d| d.collections.is_empty()) {
            self.dbs_mut().remove(&fdb);
        }
        self.db_or_create(&tdb).collections.insert(tcoll, moved);
        Ok(())
    }

    pub fn coll_stats(&self, db: &str, coll: &str, scale: i64) -> Result<Document> {
        let c = self
            .collection(db, coll)
            .ok_or_else(|| ns_not_found(db, coll))?;
        Ok(size_model::coll_stats(&format!("{db}.{coll}"), c, scale))
    }

    /// The `validate` command: every record is re-read and every index's
    /// keys are regenerated from the documents and compared with the
    /// entries the index holds, so `keysPerIndex` and `valid` are measured,
    /// not assumed. Documents the collection's validator rejects are
    /// counted in `nNonCompliantDocuments` (a warning, as in mongod).
    pub fn validate(&self, db: &str, coll: &str) -> Result<Document> {
        let c = self.collection(db, coll).ok_or_else(|| {
            EngineError::new(
                ErrorCode::NAMESPACE_NOT_FOUND,
                format!("Collection '{db}.{coll}' does not exist to validate."),
            )
        })?;
        let mut generated = vec![0usize; c.indexes.len()];
        let mut non_compliant = 0usize;
        let mut nrecords = 0usize;
        let vars = Vars::default();
        for (_, raw) in c.records() {
            let doc = to_document(raw)?;
            nrecords += 1;
            for (n, index) in generated.iter_mut().zip(&c.indexes) {
                *n += index.keys_for(&doc)?.keys.len();
            }
            if let Some(v) = &c.validator
                && !v.matches(&doc, &vars)?
            {
                non_compliant += 1;
            }
        }
        let int = |n: usize| -> Bson {
            match i32::try_from(n) {
                Ok(v) => Bson::Int32(v),
                Err(_) => Bson::Int64(i64::try_from(n).unwrap_or(i64::MAX)),
            }
        };
        let mut keys_per_index = Document::new();
        let mut index_details = Document::new();
        let mut errors = Vec::new();
        for (index, expected) in c.indexes.iter().zip(&generated) {
            let held = index.len();
            let ok = held == *expected;
            if !ok {
                errors.push(Bson::String(format!(
                    "index '{}' holds {held} keys but its documents generate {expected}",
                    index.spec.name
                )));
            }
            keys_per_index.insert(index.spec.name.clone(), int(held));
            index_details.insert(index.spec.name.clone(), doc! {"valid": ok});
        }
        let mut warnings = Vec::new();
        if non_compliant > 0 {
            warnings.push(Bson::String(
                "Detected one or more documents not compliant with the collection's schema. See logs.".into(),
            ));
        }
        Ok(doc! {
            "ns": format!("{db}.{coll}"),
            "uuid": bson::Binary::from_uuid(c.uuid),
            "nInvalidDocuments": 0,
            "nNonCompliantDocuments": int(non_compliant),
            "nrecords": int(nrecords),
            "nIndexes": int(c.indexes.len()),
            "keysPerIndex": keys_per_index,
            "indexDetails": index_details,
            "valid": errors.is_empty(),
            "repaired": false,
            "warnings": warnings,
            "errors": errors,
            "extraIndexEntries": [],
            "missingIndexEntries": [],
            "corruptRecords": [],
        })
    }

    /// The `dataSize` command over a whole collection: the exact sum of
    /// the documents' BSON sizes and their count (0 and 0 for a collection
    /// that does not exist, as mongod answers).
    pub fn data_size_of(&self, db: &str, coll: &str) -> (u64, usize) {
        self.collection(db, coll)
            .map_or((0, 0), |c| (c.data_size(), c.len()))
    }

    pub fn db_stats(&self, db: &str, scale: i64) -> Result<Document> {
        check_db_name(db)?;
        let empty = Database::default();
        let database = self.dbs.get(db).map_or(&empty, Arc::as_ref);
        Ok(size_model::db_stats(
            db,
            database.collections.values().map(Arc::as_ref),
            scale,
        ))
    }

    /// Delete the documents whose TTL has passed. The scan runs on `self`
    /// as it is; see [`Catalog::ttl_expired`] to scan a snapshot instead.
    pub fn expire_ttl(&mut self, now: bson::DateTime) -> u64 {
        let expired = self.ttl_expired(now);
        self.remove_expired(expired, now)
    }

    /// The records each TTL index says have expired, per (db, collection).
    /// Reads only, so it can run on a snapshot without the engine's lock.
    pub fn ttl_expired(&self, now: bson::DateTime) -> Vec<(String, String, Vec<RecordId>)> {
        let mut out = Vec::new();
        for (db, database) in self.dbs.iter() {
            for (name, c) in &database.collections {
                let ttl = ttl_paths(c);
                if ttl.is_empty() {
                    continue;
                }
                let expired: Vec<RecordId> = c
                    .records()
                    .filter(|(_, raw)| is_expired(&ttl, raw, now))
                    .map(|(rid, _)| rid)
                    .collect();
                if !expired.is_empty() {
                    out.push((db.clone(), name.clone(), expired));
                }
            }
        }
        out
    }

    /// Remove the records [`Catalog::ttl_expired`] found (those still there).
    /// Each is checked again, since a write may have renewed its date
    /// since the scan.
    pub fn remove_expired(
        &mut self,
        expired: Vec<(String, String, Vec<RecordId>)>,
        now: bson::DateTime,
    ) -> u64 {
        let mut removed = 0;
        for (db, coll, rids) in expired {
            let Some(c) = self.collection_mut(&db, &coll) else {
                continue;
            };
            let ttl = ttl_paths(c);
            for rid in rids {
                if c.raw(rid).is_some_and(|raw| is_expired(&ttl, raw, now))
                    && let Ok(Some(_)) = c.remove(rid)
                {
                    removed += 1;
                }
            }
        }
        removed
    }
}

/// (path, expireAfterSeconds) of a collection's TTL indexes.
fn ttl_paths(c: &Collection) -> Vec<(String, i64)> {
    c.indexes
        .iter()
        .filter_map(|i| Some((i.spec.fields[0].0.clone(), i.spec.expire_after_seconds?)))
        .collect()
}

/// Whether a document has passed one of its TTL indexes' expiry.
fn is_expired(ttl: &[(String, i64)], raw: &RawDocumentBuf, now: bson::DateTime) -> bool {
    let Ok(doc) = to_document(raw) else {
        return false;
    };
    ttl.iter().any(|(path, secs)| {
        earliest_date(&doc, path)
            .is_some_and(|t| t.saturating_add(secs.saturating_mul(1000)) <= now.timestamp_millis())
    })
}

/// The earliest date at `path` (a date, or the smallest date in an array),
/// which is what a TTL index expires by.
fn earliest_date(doc: &Document, path: &str) -> Option<i64> {
    let mut cur = doc;
    let parts: Vec<&str> = path.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let v = cur.get(*part)?;
        if i + 1 == parts.len() {
            return match v {
                Bson::DateTime(d) => Some(d.timestamp_millis()),
                Bson::Array(items) => items
                    .iter()
                    .filter_map(|x| match x {
                        Bson::DateTime(d) => Some(d.timestamp_millis()),
                        _ => None,
                    })
                    .min(),
                _ => None,
            };
        }
        cur = v.as_document()?;
    }
    None
}

/// `NamespaceNotFound` for a collection.
pub fn ns_not_found(db: &str, coll: &str) -> EngineError {
    EngineError::new(
        ErrorCode::NAMESPACE_NOT_FOUND,
        format!("ns does not exist: {db}.{coll}"),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn raw(d: Document) -> RawDocumentBuf {
        RawDocumentBuf::from_document(&d).unwrap()
    }

    #[test]
    fn snapshots_are_isolated_and_writes_copy_only_their_collection() {
        let mut cat = Catalog::default();
        cat.collection_or_create("d", "a")
            .unwrap()
            .0
            .insert("d.a", raw(doc! {"_id": 1}))
            .unwrap();
        cat.collection_or_create("d", "b")
            .unwrap()
            .0
            .insert("d.b", raw(doc! {"_id": 1}))
            .unwrap();
        let snapshot = cat.clone();
        cat.collection_mut("d", "a")
            .unwrap()
            .insert("d.a", raw(doc! {"_id": 2}))
            .unwrap();
        cat.create_collection("d", "c", &Document::new()).unwrap();
        // The snapshot still sees the catalog as it was.
        assert_eq!(snapshot.collection("d", "a").unwrap().len(), 1);
        assert!(snapshot.collection("d", "c").is_none());
        assert_eq!(cat.collection("d", "a").unwrap().len(), 2);
        // The untouched collection is still shared, not copied.
        assert!(std::ptr::eq(
            snapshot.collection("d", "b").unwrap(),
            cat.collection("d", "b").unwrap()
        ));
        assert!(!std::ptr::eq(
            snapshot.collection("d", "a").unwrap(),
            cat.collection("d", "a").unwrap()
        ));
        // Dropping in the catalog leaves the snapshot whole.
        assert!(cat.drop_database("d"));
        assert_eq!(snapshot.collection_names("d"), vec!["a", "b"]);
    }
}
