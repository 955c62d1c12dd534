//! The catalog: databases, collections and their records.
//!
//! A collection keeps each document as raw BSON under a record id that grows
//! with every insert, so a collection scan returns documents in insertion
//! order, as mongod's does. Every write goes through [`Collection`], which
//! computes all index keys first, checks unique constraints and the
//! validator, and only then changes anything: a failed write leaves records
//! and indexes exactly as they were.
//!
//! Locking is per collection. The live catalog ([`Store`]) maps names to
//! [`Slot`]s behind one lock that is held only to look a name up or to
//! change the set of names (create, drop, rename); each slot holds its
//! collection behind a lock of its own, which a writer takes only while it
//! changes that collection. A reader's [`Catalog`] is the set of names as
//! they were when it was taken, and each collection as it was the first
//! time the reader touched it: the collection is shared (`Arc`) and copied
//! on write, so the reader then runs without any lock, and a writer that
//! meets a collection still shared with a running reader copies that one
//! collection first (`Arc::make_mut`). A reader never waits for a writer of
//! another collection; it waits for a writer of its own collection only
//! while that writer applies one chunk of changes.
//!
//! The store also keeps the record bytes it holds in memory within a
//! budget, by spilling the chunks of the collections used least recently
//! to a file ([`Store::spill_cold`], module `spill`).

use std::collections::BTreeMap;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bson::{Bson, Document, RawDocument, RawDocumentBuf, doc};
use parking_lot::RwLock;

use super::collation::Collation;
use super::error::{EngineError, ErrorCode, Result};
use super::expr::Vars;
use super::filter::Filter;
use super::index::{BulkKeys, DocKeys, Index, IndexSpec, RecordId, key_value};
use super::update::display;
use super::{CreateIndexesOutcome, MAX_BSON_OBJECT_SIZE, codec, keystring, limits, size_model};

mod coll_mod;
mod heap;
mod spill;
pub mod validation;

pub use heap::Record;
use heap::{Heap, Spilling};
use spill::SpillFile;
use validation::Validator;

/// What a reader sees of every database: the names as they were when it
/// was taken, each collection as it was when the reader first touched it.
#[derive(Debug, Default)]
pub struct Catalog {
    dbs: BTreeMap<String, Database>,
}

/// One database of a [`Catalog`]: a set of named collections.
#[derive(Debug, Default)]
pub struct Database {
    collections: BTreeMap<String, Entry>,
}

/// A collection of a [`Catalog`], read from its slot on first use.
#[derive(Debug)]
struct Entry {
    slot: Arc<Slot>,
    taken: OnceLock<Arc<Collection>>,
}

impl Entry {
    fn get(&self) -> &Collection {
        self.taken.get_or_init(|| {
            self.slot.touch();
            self.slot.state.read().coll.clone()
        })
    }
}

/// One collection of the live catalog, behind a lock of its own.
#[derive(Debug)]
pub struct Slot {
    state: RwLock<SlotState>,
    /// `state.gone`, readable without the lock: a long write polls it
    /// between documents.
    gone: AtomicBool,
    /// When the collection was last looked up, in milliseconds of
    /// [`clock_ms`]: the spill pass picks the least recently used.
    used: AtomicU64,
}

/// Milliseconds since the first call in this process: a clock for
/// recency, cheaper to compare than `Instant`s.
fn clock_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

#[derive(Debug)]
struct SlotState {
    coll: Arc<Collection>,
    /// Set once the collection has been dropped or renamed away: a writer
    /// that still holds the slot looks the name up again.
    gone: bool,
}

impl Slot {
    fn new(coll: Collection) -> Arc<Self> {
        Self::holding(Arc::new(coll))
    }

    fn holding(coll: Arc<Collection>) -> Arc<Self> {
        Arc::new(Slot {
            state: RwLock::new(SlotState { coll, gone: false }),
            gone: AtomicBool::new(false),
            used: AtomicU64::new(clock_ms()),
        })
    }

    /// Record a use, for the spill pass.
    fn touch(&self) {
        self.used.store(clock_ms(), Ordering::Relaxed);
    }

    /// Mark the slot gone (its collection dropped or renamed away), once
    /// its current writer lets go.
    fn mark_gone(&self) {
        let mut state = self.state.write();
        state.gone = true;
        self.gone.store(true, Ordering::Release);
    }

    /// The collection as it is now, to read without any lock; a collection
    /// dropped or renamed away is mongod's `QueryPlanKilled`.
    pub fn current(&self, db: &str, coll: &str) -> Result<Arc<Collection>> {
        self.touch();
        let state = self.state.read();
        if state.gone {
            return Err(killed(db, coll));
        }
        Ok(state.coll.clone())
    }

    /// Whether the collection was dropped or renamed away; a long write
    /// asks between documents and stops as mongod's `QueryPlanKilled`.
    pub fn check_live(&self, db: &str, coll: &str) -> Result<()> {
        if self.gone.load(Ordering::Acquire) {
            return Err(killed(db, coll));
        }
        Ok(())
    }
}

/// Names of the live catalog: database, then collection.
type Names = BTreeMap<String, BTreeMap<String, Arc<Slot>>>;

/// The live catalog every operation of the engine works on.
#[derive(Debug, Default)]
pub struct Store {
    /// Held only for a lookup or to change the set of names, never while
    /// a collection is read or written.
    names: RwLock<Names>,
    /// Where cold chunks go, opened by the first pass that spills.
    spill_file: parking_lot::Mutex<Option<Arc<SpillFile>>>,
}

/// What one [`Store::spill_cold`] pass found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpillReport {
    /// Record bytes in memory before the pass, each shared chunk once.
    pub resident: u64,
    /// Collections whose chunks the pass spilled, as `db.coll`.
    pub spilled: Vec<String>,
    /// Bytes that left memory (chunks no other collection shares).
    pub freed: u64,
}

/// A collection: records in insertion order plus their indexes.
#[derive(Debug, Clone)]
pub struct Collection {
    uuid: bson::Uuid,
    /// The `create` options as given (validator, collation, …).
    options: Document,
    validator: Option<Validator>,
    collation: Option<Collation>,
    /// Records by id: slot `i` holds record `first_record + i`. Ids only
    /// grow, so slots keep them in order without the half-empty nodes a
    /// B-tree fills with ascending keys.
    records: Heap,
    first_record: RecordId,
    indexes: Vec<Index>,
    /// Counts every change, so that work done on a snapshot (an index
    /// build) can tell whether the collection moved on since.
    version: u64,
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
        let validator = Validator::from_options(&options, "create")?;
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
            records: Heap::default(),
            first_record: 1,
            indexes: vec![Index::new(id_spec)],
            version: 0,
        })
    }

    /// A collection created implicitly (no options).
    fn plain() -> Self {
        let mut id = IndexSpec::id_index();
        id.collation = None;
        Collection {
            uuid: bson::Uuid::new(),
            options: Document::new(),
            validator: None,
            collation: None,
            records: Heap::default(),
            first_record: 1,
            indexes: vec![Index::new(id)],
            version: 0,
        }
    }

    /// The `create` options.
    pub fn options(&self) -> &Document {
        &self.options
    }

    /// The collection's default collation.
    pub fn collation(&self) -> Option<&Collation> {
        self.collation.as_ref()
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.records.live()
    }

    /// Whether the collection holds no documents.
    pub fn is_empty(&self) -> bool {
        self.records.live() == 0
    }

    /// The exact sum of the documents' BSON sizes.
    pub fn data_size(&self) -> u64 {
        self.records.data_size()
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
    pub fn records(&self) -> impl DoubleEndedIterator<Item = (RecordId, &RawDocument)> {
        self.shared_records().map(|(rid, r)| (rid, r.as_raw()))
    }

    /// Records in insertion order, to share with another collection.
    pub fn shared_records(&self) -> impl DoubleEndedIterator<Item = (RecordId, Record<'_>)> {
        let first = self.first_record;
        self.records
            .iter_from(0)
            .map(move |(i, r)| (first + i as u64, r))
    }

    /// The first live record at or after `rid`, in insertion order: a
    /// scan resumes from here without holding a list of record ids.
    pub fn live_from(&self, rid: RecordId) -> Option<RecordId> {
        let start = usize::try_from(rid.saturating_sub(self.first_record)).ok()?;
        self.records
            .live_from(start)
            .map(|i| self.first_record + i as u64)
    }

    /// One record's raw document.
    pub fn raw(&self, rid: RecordId) -> Option<&RawDocument> {
        self.records.get(self.slot(rid)?).map(|r| r.as_raw())
    }

    /// The cache model: record `rid` is read, its page requested from the
    /// running server's cache.
    pub fn touch_record(&self, rid: RecordId) {
        if let Some(slot) = self.slot(rid) {
            self.records.touch(slot);
        }
    }

    /// The cache model: the `_id` index entry of `id` (held by `rid`) is
    /// read.
    pub fn touch_id_entry(&self, id: &Bson, rid: RecordId) {
        let key = keystring::encode_single(id, self.collation.as_ref());
        self.indexes[0].touch_key(&key, rid);
    }

    /// The cache model's pages of the records.
    pub fn record_pages(&self) -> &crate::cache::layout::RecordPages {
        self.records.pages()
    }

    fn slot(&self, rid: RecordId) -> Option<usize> {
        usize::try_from(rid.checked_sub(self.first_record)?).ok()
    }

    fn next_record(&self) -> RecordId {
        self.first_record + self.records.slots() as u64
    }

    /// One record as a document.
    pub fn doc(&self, rid: RecordId) -> Result<Option<Document>> {
        match self.raw(rid) {
            Some(raw) => Ok(Some(to_document(raw)?)),
            None => Ok(None),
        }
    }

    /// Record `rid` with only the top-level `fields` decoded (an
    /// aggregation's `$cursor` hands its pipeline what it depends on).
    pub fn doc_fields(
        &self,
        rid: RecordId,
        fields: &std::collections::BTreeSet<String>,
    ) -> Result<Option<Document>> {
        match self.raw(rid) {
            Some(raw) => Ok(Some(
                codec::decode_fields(raw, &|k| fields.contains(k)).map_err(|e| {
                    EngineError::new(ErrorCode::INTERNAL_ERROR, format!("corrupt record: {e}"))
                })?,
            )),
            None => Ok(None),
        }
    }

    /// The record whose `_id` equals `id`, through the `_id_` index.
    pub fn find_by_id(&self, id: &Bson) -> Option<RecordId> {
        let key = keystring::encode_single(id, self.collation.as_ref());
        self.indexes[0].records_for_key(&key).next()
    }

    fn only_id_index(&self) -> bool {
        self.indexes.len() == 1 && !self.validates()
    }

    /// Compute every index's keys for a new record, read from its bytes,
    /// checking unique constraints (the record is decoded only for the
    /// error that names it).
    fn keys_checked(&self, ns: &str, raw: &RawDocument) -> Result<Vec<DocKeys>> {
        let mut all = Vec::with_capacity(self.indexes.len());
        for index in &self.indexes {
            let keys = index.keys_for_raw(raw)?;
            if index.spec.unique {
                for key in &keys.keys {
                    if index.conflicts(key, None).is_some() {
                        return Err(duplicate_key(ns, &index.spec, &to_document(raw)?));
                    }
                }
            }
            all.push(keys);
        }
        Ok(all)
    }

    /// Whether writes are checked against a validator.
    fn validates(&self) -> bool {
        self.validator.as_ref().is_some_and(Validator::is_active)
    }

    /// Check a document about to be written against the validator
    /// (`old`: for an update, the stored document it replaces).
    fn validate(&self, ns: &str, doc: &Document, old: Option<&RawDocument>) -> Result<()> {
        let Some(v) = &self.validator else {
            return Ok(());
        };
        let old = match old {
            Some(raw) if v.level == validation::Level::Moderate => Some(to_document(raw)?),
            _ => None,
        };
        v.check(ns, doc, old.as_ref())
    }

    /// Insert a document that already has its `_id` first.
    pub fn insert(&mut self, ns: &str, raw: RawDocumentBuf) -> Result<RecordId> {
        let rid = self.admit(ns, &raw)?;
        self.records.push(raw.as_bytes());
        Ok(rid)
    }

    /// [`Collection::insert`] of another collection's record, sharing its
    /// bytes with the collection it comes from.
    pub fn insert_record(&mut self, ns: &str, record: Record<'_>) -> Result<RecordId> {
        let rid = self.admit(ns, record.as_raw())?;
        self.records.push_shared(record);
        Ok(rid)
    }

    /// Insert every record of `source`, in its natural order, sharing their
    /// bytes: [`Collection::insert_record`] for each, except that when this
    /// collection is empty with only its `_id` index, the `_id` keys are
    /// sorted and loaded at the end
    /// ([`Index::bulk_load`]) instead of inserted one by one. The
    /// records, their ids and the index are the same either way; on a
    /// duplicate `_id` the insert starts again record by record, to fail
    /// where that fails. `each` runs before each record (an interrupt
    /// check). Returns how many records were read.
    pub fn insert_records_of(
        &mut self,
        ns: &str,
        source: &Collection,
        each: &mut dyn FnMut() -> Result<()>,
    ) -> Result<u64> {
        let bulk = self.only_id_index() && self.records.slots() == 0;
        if bulk {
            let start = self.clone();
            let mut keys = BulkKeys::with_capacity(source.len());
            for (_, record) in source.shared_records() {
                each()?;
                let raw = record.as_raw();
                check_size(raw.as_bytes().len(), "object to insert too large")?;
                limits::check_insert_depth(raw)?;
                let id = id_of(raw);
                check_id(&id)?;
                keys.push(
                    &keystring::encode_single(&id, self.collation.as_ref()),
                    self.next_record(),
                );
                self.records.push_shared(record);
            }
            let read = keys.len() as u64;
            if self.indexes[0].bulk_load(keys).is_ok() {
                super::metrics::keys_written(read, 0);
                self.version += read;
                return Ok(read);
            }
            *self = start;
        }
        let mut read = 0u64;
        for (_, record) in source.shared_records() {
            each()?;
            read += 1;
            self.insert_record(ns, record)?;
        }
        Ok(read)
    }

    /// Check a document about to be inserted and add its index keys; the
    /// record id it is to be stored under.
    fn admit(&mut self, ns: &str, raw: &RawDocument) -> Result<RecordId> {
        check_size(raw.as_bytes().len(), "object to insert too large")?;
        limits::check_insert_depth(raw)?;
        let rid = self.next_record();
        if self.only_id_index() {
            // Fast path: read `_id` straight from the raw bytes.
            let id = id_of(raw);
            check_id(&id)?;
            let key = keystring::encode_single(&id, self.collation.as_ref());
            if !self.indexes[0].insert_unique(&key, rid) {
                return Err(duplicate_key(ns, &self.indexes[0].spec, &doc! {"_id": id}));
            }
            super::metrics::keys_written(1, 0);
        } else {
            check_id(&id_of(raw))?;
            if self.validates() {
                self.validate(ns, &to_document(raw)?, None)?;
            }
            let keys = self.keys_checked(ns, raw)?;
            for (index, k) in self.indexes.iter_mut().zip(&keys) {
                index.insert_keys(k, rid);
                super::metrics::keys_written(k.keys.len() as u64, 0);
            }
        }
        self.version += 1;
        Ok(rid)
    }

    /// Replace record `rid` with `new_doc`, keeping its record id.
    pub fn replace(&mut self, ns: &str, rid: RecordId, new_doc: &Document) -> Result<()> {
        limits::check_update_depth(new_doc)?;
        let raw = codec::encode(new_doc)
            .map_err(|e| EngineError::bad_value(format!("invalid document: {e}")))?;
        self.replace_encoded(ns, rid, raw, Some(new_doc))
    }

    /// [`Collection::replace`] with the new document already encoded (its
    /// index keys read from its bytes, and it is decoded only for a
    /// validator or for the error that names it).
    pub fn replace_raw(&mut self, ns: &str, rid: RecordId, raw: RawDocumentBuf) -> Result<()> {
        limits::check_update_depth_raw(&raw)?;
        self.replace_encoded(ns, rid, raw, None)
    }

    /// The rest of [`Collection::replace`] and [`Collection::replace_raw`]:
    /// `doc` is `raw` decoded, when the caller has it.
    fn replace_encoded(
        &mut self,
        ns: &str,
        rid: RecordId,
        raw: RawDocumentBuf,
        doc: Option<&Document>,
    ) -> Result<()> {
        check_size(
            raw.as_bytes().len(),
            "Resulting document after update is larger than 16777216",
        )?;
        let (Some(slot), Some(old_raw)) = (self.slot(rid), self.raw(rid)) else {
            return Err(EngineError::new(
                ErrorCode::INTERNAL_ERROR,
                "record vanished",
            ));
        };
        let decoded;
        let new_doc = match doc {
            Some(d) => Some(d),
            None if self.validates() => {
                decoded = to_document(&raw)?;
                Some(&decoded)
            }
            None => None,
        };
        if let Some(d) = new_doc
            && self.validates()
        {
            self.validate(ns, d, Some(old_raw))?;
        }
        // The old keys come from the stored bytes (only the fields each
        // key pattern reads are decoded). A unique index is only checked
        // for the keys the update adds: one it keeps is this record's own.
        // An index whose fields kept their bytes keeps its keys, and is
        // left alone.
        let mut changed = Vec::with_capacity(self.indexes.len());
        for index in &self.indexes {
            if index.reads_same(old_raw, &raw) {
                changed.push(None);
                continue;
            }
            let new = match new_doc {
                Some(d) => index.keys_for(d)?,
                None => index.keys_for_raw(&raw)?,
            };
            let old = index.keys_for_raw(old_raw)?;
            if index.spec.unique {
                for key in new.keys.iter().filter(|k| !old.keys.contains(k)) {
                    if index.conflicts(key, Some(rid)).is_some() {
                        let shown = match new_doc {
                            Some(d) => d.clone(),
                            None => to_document(&raw)?,
                        };
                        return Err(duplicate_key(ns, &index.spec, &shown));
                    }
                }
            }
            changed.push(Some((old, new)));
        }
        for (index, keys) in self.indexes.iter_mut().zip(&changed) {
            if let Some((old, new)) = keys
                && old != new
            {
                index.remove_keys(old, rid);
                index.insert_keys(new, rid);
                // mongod counts the keys that changed, not every key.
                let added = new.keys.iter().filter(|k| !old.keys.contains(k)).count();
                let removed = old.keys.iter().filter(|k| !new.keys.contains(k)).count();
                super::metrics::keys_written(added as u64, removed as u64);
            }
        }
        self.records.replace(slot, raw.as_bytes());
        self.version += 1;
        Ok(())
    }

    /// Remove record `rid`, returning its document.
    pub fn remove(&mut self, rid: RecordId) -> Result<Option<Document>> {
        let Some((slot, raw)) = self.slot(rid).zip(self.raw(rid)) else {
            return Ok(None);
        };
        let doc = to_document(raw)?;
        self.records.remove(slot);
        self.version += 1;
        for index in &mut self.indexes {
            // Keys computed from a stored document cannot fail: they did
            // when it was written.
            if let Ok(keys) = index.keys_for(&doc) {
                index.remove_keys(&keys, rid);
                super::metrics::keys_written(0, keys.keys.len() as u64);
            }
        }
        Ok(Some(doc))
    }

    /// An empty collection with this one's identity, options and index
    /// definitions (their entries left out): where `$out` builds the new
    /// contents, to put them in place of the old ones all at once.
    pub fn emptied(&self) -> Collection {
        Collection {
            uuid: self.uuid,
            options: self.options.clone(),
            validator: self.validator.clone(),
            collation: self.collation.clone(),
            records: Heap::default(),
            // Ids are never reused: the new records continue the sequence.
            first_record: self.next_record(),
            indexes: self
                .indexes
                .iter()
                .map(|i| Index::new(i.spec.clone()))
                .collect(),
            version: self.version + 1,
        }
    }

    /// Where `$out` builds new contents for `target` (as it is now, or
    /// `None` when it does not exist yet): [`Collection::emptied`], or an
    /// implicitly created collection.
    pub fn fresh_for(target: Option<&Collection>) -> Collection {
        target.map_or_else(Collection::plain, Collection::emptied)
    }

    /// Whether contents built on `template` ([`Collection::fresh_for`] of
    /// the target as it was, `None` when it did not exist) may take the
    /// place of the target as it is `now`: it is the same collection with
    /// the same options and index definitions and had no insert since (so
    /// record ids are not reused), or, for `None`, it is still an empty
    /// implicitly created one. When not, the records are copied into the
    /// target's current shape instead.
    pub fn fits(template: Option<&Collection>, now: &Collection) -> bool {
        match template {
            Some(t) => {
                t.uuid == now.uuid
                    && t.first_record == now.next_record()
                    && t.options == now.options
                    && t.indexes.len() == now.indexes.len()
                    && t.indexes
                        .iter()
                        .zip(&now.indexes)
                        .all(|(a, b)| a.spec.to_document() == b.spec.to_document())
            }
            None => now.next_record() == 1 && now.options.is_empty() && now.indexes.len() == 1,
        }
    }

    /// `self` (new contents) taking the place of `now`: its version follows
    /// `now`'s, so that work done on a snapshot of `now` sees the change.
    pub fn succeeding(mut self, now: &Collection) -> Collection {
        self.version = self.version.max(now.version + 1);
        self
    }

    /// Remove every document, keeping the indexes' definitions.
    pub fn clear(&mut self) {
        // Ids are never reused: the next record continues the sequence.
        self.first_record = self.next_record();
        self.records.clear();
        self.version += 1;
        for index in &mut self.indexes {
            index.clear();
        }
    }

    /// Build an index over every record: their keys gathered, then sorted
    /// and loaded at once ([`Index::bulk_load`]), as mongod builds an index
    /// through an external sorter.
    fn build_index(&self, ns: &str, spec: IndexSpec) -> Result<Index> {
        let mut index = Index::new(spec);
        let mut keys = BulkKeys::with_capacity(self.len());
        // Only the fields the key reads are decoded; the whole record only
        // for the error that names it. A spilled record is read for the
        // build and stays in the file.
        let first = self.first_record;
        self.records
            .scan(|i, raw| index.gather_keys(raw, first + i as u64, &mut keys))?;
        if let Err(rid) = index.bulk_load(keys) {
            let raw = self.raw(rid).ok_or_else(|| {
                EngineError::new(ErrorCode::INTERNAL_ERROR, "an index key names no record")
            })?;
            return Err(duplicate_key(ns, &index.spec, &to_document(raw)?));
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

/// A stored document's `_id`, read from its bytes (null when missing).
fn id_of(raw: &RawDocument) -> Bson {
    raw.get("_id")
        .ok()
        .flatten()
        .and_then(|r| r.to_raw_bson().try_into().ok())
        .unwrap_or(Bson::Null)
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
pub fn to_document(raw: &RawDocument) -> Result<Document> {
    codec::decode(raw)
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

impl Collection {
    /// Check requested index specs against the existing indexes as mongod's
    /// `_doesSpecConflictWithExisting` does (by name first, then by
    /// signature: key, collation, partial filter, unique, sparse); returns
    /// those still to build.
    fn indexes_to_build(&self, requested: &[IndexSpec]) -> Result<Vec<IndexSpec>> {
        let c = self;
        let requested = requested.to_vec();
        let mut parsed = Vec::with_capacity(requested.len());
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
        Ok(parsed)
    }

    /// Build every index before adding any: all or nothing.
    fn build_indexes(&self, ns: &str, specs: Vec<IndexSpec>) -> Result<Vec<Index>> {
        specs
            .into_iter()
            .map(|spec| self.build_index(ns, spec))
            .collect()
    }
}

impl Collection {
    fn drop_indexes(&mut self, which: &Bson) -> Result<usize> {
        self.version += 1;
        let c = self;
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
}

impl Catalog {
    fn entry(&self, db: &str, coll: &str) -> Option<&Entry> {
        self.dbs.get(db)?.collections.get(coll)
    }

    /// A collection, if it exists.
    pub fn collection(&self, db: &str, coll: &str) -> Option<&Collection> {
        self.entry(db, coll).map(Entry::get)
    }

    /// A collection shared with its readers, if it exists: a cursor holds
    /// one to continue its plan over the snapshot its read took.
    pub fn collection_shared(&self, db: &str, coll: &str) -> Option<Arc<Collection>> {
        let e = self.entry(db, coll)?;
        e.get();
        e.taken.get().cloned()
    }

    /// Names of the collections of `db`.
    pub fn collection_names(&self, db: &str) -> Vec<String> {
        self.dbs
            .get(db)
            .map(|d| d.collections.keys().cloned().collect())
            .unwrap_or_default()
    }

    pub fn list_indexes(&self, db: &str, coll: &str) -> Result<Vec<Document>> {
        let c = self
            .collection(db, coll)
            .ok_or_else(|| ns_not_found(db, coll))?;
        Ok(c.indexes.iter().map(|i| i.spec.to_document()).collect())
    }

    pub fn list_collections(&self, db: &str, filter: &Document) -> Result<Vec<Document>> {
        let Some(database) = self.dbs.get(db) else {
            return Ok(Vec::new());
        };
        let filter = Filter::parse(filter, None)?;
        let mut out = Vec::new();
        for (name, entry) in &database.collections {
            let c = entry.get();
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
                    .map(|c| size_model::collection_sizes(c.get()).total_size())
                    .sum();
                doc! {"name": name.clone(), "sizeOnDisk": size as i64, "empty": d.collections.is_empty()}
            })
            .collect()
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
        for (_, raw) in c.records() {
            let doc = to_document(raw)?;
            nrecords += 1;
            for (n, index) in generated.iter_mut().zip(&c.indexes) {
                *n += index.keys_for(&doc)?.keys.len();
            }
            if let Some(v) = &c.validator
                && !v.admits(&doc)?
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
        let database = self.dbs.get(db).unwrap_or(&empty);
        Ok(size_model::db_stats(
            db,
            database.collections.values().map(Entry::get),
            scale,
        ))
    }
    /// The records each TTL index says have expired, per (db, collection).
    /// Reads only: it runs on a snapshot, without holding any lock.
    pub fn ttl_expired(&self, now: bson::DateTime) -> Vec<(String, String, Vec<RecordId>)> {
        let mut out = Vec::new();
        for (db, database) in self.dbs.iter() {
            for (name, entry) in &database.collections {
                let c = entry.get();
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
}

/// A reader's view of the collections of one database that `keep` keeps.
fn database_of(colls: &BTreeMap<String, Arc<Slot>>, keep: impl Fn(&str) -> bool) -> Database {
    let collections = colls
        .iter()
        .filter(|(name, _)| keep(name))
        .map(|(name, slot)| {
            let entry = Entry {
                slot: slot.clone(),
                taken: OnceLock::new(),
            };
            (name.clone(), entry)
        })
        .collect();
    Database { collections }
}

/// The error of a write that yielded and found its collection gone.
fn killed(db: &str, coll: &str) -> EngineError {
    EngineError::new(
        ErrorCode::QUERY_PLAN_KILLED,
        format!("collection dropped or renamed while the operation ran: {db}.{coll}"),
    )
}

/// Split a full namespace `db.coll`.
fn split_ns(ns: &str) -> Result<(String, String)> {
    ns.split_once('.')
        .map(|(d, c)| (d.to_string(), c.to_string()))
        .ok_or_else(|| {
            EngineError::new(
                ErrorCode::INVALID_NAMESPACE,
                format!("Invalid namespace specified '{ns}'"),
            )
        })
}

impl Store {
    /// What a reader runs on: the names as they are now; each collection
    /// is read from its slot the first time the reader touches it.
    pub fn snapshot(&self) -> Catalog {
        let names = self.names.read();
        Catalog {
            dbs: names
                .iter()
                .map(|(db, colls)| (db.clone(), database_of(colls, |_| true)))
                .collect(),
        }
    }

    /// [`Store::snapshot`] of one database only, for a reader that reads
    /// nothing else (every read but `listDatabases`: `$lookup`,
    /// `$unionWith` and the others read their own database).
    pub fn snapshot_db(&self, db: &str) -> Catalog {
        let names = self.names.read();
        let mut dbs = BTreeMap::new();
        if let Some(colls) = names.get(db) {
            dbs.insert(db.to_string(), database_of(colls, |_| true));
        }
        Catalog { dbs }
    }

    /// [`Store::snapshot`] of one collection only, for a reader of that
    /// collection alone (`find`, `count`, `distinct`, the statistics).
    pub fn snapshot_one(&self, db: &str, coll: &str) -> Catalog {
        let names = self.names.read();
        let mut dbs = BTreeMap::new();
        if let Some(colls) = names.get(db) {
            dbs.insert(db.to_string(), database_of(colls, |name| name == coll));
        }
        Catalog { dbs }
    }

    fn slot(&self, db: &str, coll: &str) -> Option<Arc<Slot>> {
        let slot = self.names.read().get(db)?.get(coll).cloned()?;
        slot.touch();
        Some(slot)
    }

    /// Keep the record bytes held in memory within `budget`: when they
    /// exceed it, spill the chunks of the collections not used for
    /// `cold_after`, least recently used first, until they fit again (or
    /// no cold collection is left). A collection that a reader or a cursor
    /// still holds, or that a writer has locked, is skipped: spilling never
    /// waits for a collection's lock to spill it, and never copies one.
    pub fn spill_cold(&self, budget: u64, cold_after: Duration) -> std::io::Result<SpillReport> {
        // `None` while the process is younger than `cold_after`.
        let cutoff = clock_ms().checked_sub(cold_after.as_millis() as u64);
        self.spill_used_before(budget, cutoff)
    }

    /// [`Store::spill_cold`], counting as cold the collections last used
    /// at or before `cutoff` (in [`clock_ms`]).
    fn spill_used_before(&self, budget: u64, cutoff: Option<u64>) -> std::io::Result<SpillReport> {
        // Run every second: under the budget it only counts, and names
        // nothing.
        let slots: Vec<Arc<Slot>> = self
            .names
            .read()
            .values()
            .flat_map(|c| c.values().cloned())
            .collect();
        let mut seen = HashSet::new();
        let resident: u64 = slots
            .iter()
            .map(|slot| slot.state.read().coll.records.resident(&mut seen))
            .sum();
        drop(slots);
        let mut report = SpillReport {
            resident,
            ..SpillReport::default()
        };
        if resident <= budget {
            return Ok(report);
        }
        let mut cold: Vec<(u64, String, Arc<Slot>)> = self
            .names
            .read()
            .iter()
            .flat_map(|(db, colls)| colls.iter().map(move |(name, slot)| (db, name, slot)))
            .map(|(db, name, slot)| (slot.used.load(Ordering::Relaxed), db, name, slot))
            .filter(|(used, ..)| cutoff.is_some_and(|c| *used <= c))
            .map(|(used, db, name, slot)| (used, format!("{db}.{name}"), slot.clone()))
            .collect();
        cold.sort_by_key(|(used, _, _)| *used);
        let file = {
            let mut file = self.spill_file.lock();
            match &*file {
                Some(f) => f.clone(),
                None => file.insert(SpillFile::new()?).clone(),
            }
        };
        let mut pass = Spilling::default();
        let mut left = resident;
        for (_, ns, slot) in cold {
            if left <= budget {
                break;
            }
            let Some(mut state) = slot.state.try_write() else {
                continue;
            };
            if state.gone {
                continue;
            }
            let Some(coll) = Arc::get_mut(&mut state.coll) else {
                continue;
            };
            let freed = coll.records.spill(&file, &mut pass)?;
            if freed > 0 {
                report.spilled.push(ns);
                report.freed += freed;
                left = left.saturating_sub(freed);
            }
        }
        Ok(report)
    }

    /// Whether taking a snapshot of `db.coll` would wait now: a writer
    /// holds its slot, or the names are being changed.
    pub fn is_writing(&self, db: &str, coll: &str) -> bool {
        if self.names.is_locked_exclusive() {
            return true;
        }
        self.slot(db, coll)
            .is_some_and(|s| s.state.is_locked_exclusive())
    }

    /// One collection as it is now (shared: a snapshot of it), if it exists.
    pub fn collection(&self, db: &str, coll: &str) -> Option<Arc<Collection>> {
        let slot = self.slot(db, coll)?;
        let state = slot.state.read();
        (!state.gone).then(|| state.coll.clone())
    }

    /// The slot of a collection, created (implicitly, with no options) if
    /// missing; and whether it was.
    fn slot_or_create(&self, db: &str, coll: &str) -> Result<(Arc<Slot>, bool)> {
        if let Some(slot) = self.slot(db, coll) {
            return Ok((slot, false));
        }
        check_create_ns(db, coll)?;
        let mut names = self.names.write();
        let colls = names.entry(db.to_string()).or_default();
        if let Some(slot) = colls.get(coll) {
            return Ok((slot.clone(), false));
        }
        let slot = Slot::new(Collection::plain());
        colls.insert(coll.to_string(), slot.clone());
        Ok((slot, true))
    }

    /// Run `f` on a collection for writing, holding only that collection's
    /// lock; `None` if it does not exist.
    pub fn write_existing<T>(
        &self,
        db: &str,
        coll: &str,
        f: impl FnOnce(&mut Collection) -> T,
    ) -> Option<T> {
        loop {
            let slot = self.slot(db, coll)?;
            let mut state = slot.state.write();
            if state.gone {
                // Dropped or renamed since the lookup: look again.
                drop(state);
                std::thread::yield_now();
                continue;
            }
            return Some(f(Arc::make_mut(&mut state.coll)));
        }
    }

    /// Run `f` on a collection for writing, creating it implicitly (as
    /// inserts and upserts do), holding only that collection's lock; `f`
    /// is told whether the collection was created.
    pub fn write_or_create<T>(
        &self,
        db: &str,
        coll: &str,
        f: impl FnOnce(&mut Collection, bool) -> T,
    ) -> Result<T> {
        check_create_ns(db, coll)?;
        loop {
            let (slot, created) = self.slot_or_create(db, coll)?;
            let mut state = slot.state.write();
            if state.gone {
                drop(state);
                std::thread::yield_now();
                continue;
            }
            return Ok(f(Arc::make_mut(&mut state.coll), created));
        }
    }

    /// Put the collection `f` builds (from the current one, created
    /// implicitly if missing) in place of the current one, holding only
    /// that collection's lock. Unlike the other writes this never copies
    /// the current collection when a reader still shares it: readers keep
    /// the old one, the store gets the new one.
    pub fn replace_or_create(
        &self,
        db: &str,
        coll: &str,
        f: impl FnOnce(&Collection) -> Result<Collection>,
    ) -> Result<()> {
        check_create_ns(db, coll)?;
        loop {
            let (slot, _) = self.slot_or_create(db, coll)?;
            let mut state = slot.state.write();
            if state.gone {
                drop(state);
                std::thread::yield_now();
                continue;
            }
            let fresh = f(&state.coll)?;
            state.coll = Arc::new(fresh);
            return Ok(());
        }
    }

    /// Like [`Store::write_existing`], for a write that yielded: a
    /// collection dropped or renamed under it is mongod's `QueryPlanKilled`.
    /// Also says whether the collection had to be copied first (a reader
    /// still shared it), so that the writer can take bigger chunks.
    pub fn write_again<T>(
        &self,
        db: &str,
        coll: &str,
        slot_of: &Arc<Slot>,
        f: impl FnOnce(&mut Collection) -> T,
    ) -> Result<(T, bool)> {
        let mut state = slot_of.state.write();
        if state.gone {
            return Err(killed(db, coll));
        }
        let copied = Arc::strong_count(&state.coll) > 1;
        Ok((f(Arc::make_mut(&mut state.coll)), copied))
    }

    /// The slot a yielding write keeps across its chunks, and the collection
    /// as it is now, to select on without any lock.
    pub fn slot_and_snapshot(&self, db: &str, coll: &str) -> Option<(Arc<Slot>, Arc<Collection>)> {
        loop {
            let slot = self.slot(db, coll)?;
            let state = slot.state.read();
            if state.gone {
                drop(state);
                std::thread::yield_now();
                continue;
            }
            let coll = state.coll.clone();
            drop(state);
            return Some((slot, coll));
        }
    }

    pub fn create_indexes(
        &self,
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
        check_create_ns(db, coll)?;
        let (slot, created) = self.slot_or_create(db, coll)?;
        // Build on a snapshot, holding no lock, as mongod builds in the
        // background; then install under the collection's lock if nothing
        // changed meanwhile, or build again under it if something did.
        let snapshot = {
            let state = slot.state.read();
            (!state.gone).then(|| state.coll.clone())
        };
        let prebuilt = match snapshot {
            Some(snap) => {
                let todo = snap.indexes_to_build(&requested)?;
                let built = snap.build_indexes(&ns, todo)?;
                Some((snap.version, built))
            }
            None => None,
        };
        let install = |c: &mut Collection, created: bool| -> Result<CreateIndexesOutcome> {
            let before = c.indexes.len();
            let built = match prebuilt {
                Some((version, built)) if version == c.version => built,
                _ => {
                    let todo = c.indexes_to_build(&requested)?;
                    c.build_indexes(&ns, todo)?
                }
            };
            let note = built
                .is_empty()
                .then(|| "all indexes already exist".to_string());
            c.indexes.extend(built);
            c.version += 1;
            Ok(CreateIndexesOutcome {
                indexes_before: before,
                indexes_after: c.indexes.len(),
                created_collection: created,
                note,
            })
        };
        let mut state = slot.state.write();
        if state.gone {
            drop(state);
            return self.write_or_create(db, coll, install)?;
        }
        install(Arc::make_mut(&mut state.coll), created)
    }

    pub fn drop_indexes(&self, db: &str, coll: &str, which: &Bson) -> Result<usize> {
        self.write_existing(db, coll, |c| c.drop_indexes(which))
            .ok_or_else(|| ns_not_found(db, coll))?
    }

    pub fn create_collection(&self, db: &str, coll: &str, options: &Document) -> Result<()> {
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
        // Checked before the name is looked at, as mongod parses the
        // command first.
        Validator::from_options(&opts, "create")?;
        loop {
            if let Some(slot) = self.slot(db, coll) {
                let state = slot.state.read();
                if state.gone {
                    drop(state);
                    std::thread::yield_now();
                    continue;
                }
                if state.coll.options == opts {
                    return Ok(());
                }
                return Err(EngineError::new(
                    ErrorCode::NAMESPACE_EXISTS,
                    format!("Collection {db}.{coll} already exists."),
                ));
            }
            let created = Collection::new(opts.clone())?;
            let mut names = self.names.write();
            let colls = names.entry(db.to_string()).or_default();
            if colls.contains_key(coll) {
                // Created by another client meanwhile: compare with it.
                continue;
            }
            colls.insert(coll.to_string(), Slot::new(created));
            return Ok(());
        }
    }

    /// Drop a collection; whether it existed. The name goes first (under
    /// the names lock, for a moment), then the slot is marked gone (under
    /// its own lock, once its current writer lets go).
    pub fn drop_collection(&self, db: &str, coll: &str) -> bool {
        let removed = {
            let mut names = self.names.write();
            let Some(colls) = names.get_mut(db) else {
                return false;
            };
            let removed = colls.remove(coll);
            if colls.is_empty() {
                names.remove(db);
            }
            removed
        };
        match removed {
            Some(slot) => {
                slot.mark_gone();
                true
            }
            None => false,
        }
    }

    pub fn drop_database(&self, db: &str) -> bool {
        let removed = self.names.write().remove(db);
        match removed {
            Some(colls) => {
                for slot in colls.values() {
                    slot.mark_gone();
                }
                true
            }
            None => false,
        }
    }

    pub fn rename_collection(&self, from: &str, to: &str, drop_target: bool) -> Result<()> {
        let (fdb, fcoll) = split_ns(from)?;
        let (tdb, tcoll) = split_ns(to)?;
        check_create_ns(&tdb, &tcoll)?;
        let source_missing = || {
            EngineError::new(
                ErrorCode::NAMESPACE_NOT_FOUND,
                "source namespace does not exist",
            )
        };
        let source = self.slot(&fdb, &fcoll).ok_or_else(source_missing)?;
        if from == to {
            return Err(EngineError::new(
                ErrorCode::ILLEGAL_OPERATION,
                "Can't rename a collection to itself",
            ));
        }
        let target_exists = || self.slot(&tdb, &tcoll).is_some();
        if target_exists() && !drop_target {
            return Err(EngineError::new(
                ErrorCode::NAMESPACE_EXISTS,
                "target namespace exists",
            ));
        }
        // Take the collection out of its slot (waiting only for that
        // collection's current writer), then move the names.
        let moved = {
            let mut state = source.state.write();
            if state.gone {
                return Err(source_missing());
            }
            state.gone = true;
            source.gone.store(true, Ordering::Release);
            std::mem::replace(&mut state.coll, Arc::new(Collection::plain()))
        };
        let mut dropped = None;
        {
            let mut names = self.names.write();
            if let Some(colls) = names.get_mut(&fdb) {
                if colls.get(&fcoll).is_some_and(|s| Arc::ptr_eq(s, &source)) {
                    colls.remove(&fcoll);
                }
                if colls.is_empty() {
                    names.remove(&fdb);
                }
            }
            let colls = names.entry(tdb.clone()).or_default();
            if let Some(existing) = colls.remove(&tcoll) {
                if !drop_target {
                    // Created meanwhile: put the source back and refuse.
                    colls.insert(tcoll.clone(), existing);
                    names
                        .entry(fdb.clone())
                        .or_default()
                        .entry(fcoll.clone())
                        .or_insert_with(|| Slot::holding(moved));
                    return Err(EngineError::new(
                        ErrorCode::NAMESPACE_EXISTS,
                        "target namespace exists",
                    ));
                }
                dropped = Some(existing);
            }
            colls.insert(tcoll, Slot::holding(moved));
        }
        if let Some(slot) = dropped {
            slot.mark_gone();
        }
        Ok(())
    }

    /// Remove the records [`Catalog::ttl_expired`] found (those still there).
    /// Each is checked again, since a write may have renewed its date
    /// since the scan.
    pub fn remove_expired(
        &self,
        expired: Vec<(String, String, Vec<RecordId>)>,
        now: bson::DateTime,
    ) -> u64 {
        let mut removed = 0;
        for (db, coll, rids) in expired {
            removed += self
                .write_existing(&db, &coll, |c| {
                    let ttl = ttl_paths(c);
                    let mut n = 0;
                    for rid in rids {
                        if c.raw(rid).is_some_and(|raw| is_expired(&ttl, raw, now))
                            && let Ok(Some(_)) = c.remove(rid)
                        {
                            n += 1;
                        }
                    }
                    n
                })
                .unwrap_or(0);
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
fn is_expired(ttl: &[(String, i64)], raw: &RawDocument, now: bson::DateTime) -> bool {
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
    use crate::index::default_name;

    fn raw(d: Document) -> RawDocumentBuf {
        RawDocumentBuf::from_document(&d).unwrap()
    }

    /// Every index entry of `c`, in order.
    fn index_entries(c: &Collection) -> Vec<Vec<u8>> {
        c.indexes[0]
            .entries_between(std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)
            .map(<[u8]>::to_vec)
            .collect()
    }

    #[test]
    fn a_bulk_copy_is_the_copy_record_by_record_makes() {
        // `_id`s in scrambled order, of several types, with a gap left by a
        // delete, so natural order is neither key order nor dense.
        let mut source = Collection::new(Document::new()).unwrap();
        for i in 0..500i64 {
            let id = match i % 3 {
                0 => Bson::Int64((i * 7919) % 1000),
                1 => Bson::String(format!("k{}", (i * 31) % 997)),
                _ => Bson::Double((i * 13 % 500) as f64 + 0.5),
            };
            source.insert("d.s", raw(doc! {"_id": id, "i": i})).unwrap();
        }
        let gone = source.find_by_id(&Bson::Int64(0)).unwrap();
        source.remove(gone).unwrap();

        let mut target = Collection::new(Document::new()).unwrap();
        target.insert("d.t", raw(doc! {"_id": "old"})).unwrap();
        let mut one_by_one = target.emptied();
        for (_, record) in source.shared_records() {
            one_by_one.insert_record("d.t", record).unwrap();
        }
        let mut bulk = target.emptied();
        let mut checks = 0;
        let read = bulk
            .insert_records_of("d.t", &source, &mut || {
                checks += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!((read, checks), (499, 499));
        let records = |c: &Collection| -> Vec<(RecordId, Vec<u8>)> {
            c.shared_records()
                .map(|(rid, r)| (rid, r.as_raw().as_bytes().to_vec()))
                .collect()
        };
        assert_eq!(records(&bulk), records(&one_by_one));
        assert_eq!(index_entries(&bulk), index_entries(&one_by_one));
        assert_eq!(index_entries(&bulk).len(), 499);
        // The loaded index answers lookups as an inserted one does.
        let rid = bulk.find_by_id(&Bson::String("k31".into())).unwrap();
        assert_eq!(
            Some(rid),
            one_by_one.find_by_id(&Bson::String("k31".into()))
        );
        let mut c = bulk;
        assert_eq!(
            c.insert("d.t", raw(doc! {"_id": "k31"})).unwrap_err().code,
            ErrorCode::DUPLICATE_KEY
        );
    }

    #[test]
    fn a_bulk_index_load_refuses_a_key_held_twice() {
        let empty = Collection::new(Document::new()).unwrap();
        let mut index = Index::new(empty.indexes[0].spec.clone());
        let bulk = |keys: &[(&[u8], RecordId)]| {
            let mut b = BulkKeys::default();
            for (k, rid) in keys {
                b.push(k, *rid);
            }
            b
        };
        // Two keys are held twice: the smaller one is reported, with the
        // later of its two records.
        let keys = bulk(&[(&[1, 2], 3), (&[1, 2], 5), (&[1], 9), (&[1], 7), (&[0], 1)]);
        assert_eq!(index.bulk_load(keys), Err(9));
        assert!(index.is_empty());
        // The same key twice under one record is one entry, not a conflict.
        assert!(
            index
                .bulk_load(bulk(&[(&[2], 1), (&[1], 2), (&[2], 1)]))
                .is_ok()
        );
        assert_eq!(index.len(), 2);
        assert_eq!(index.records_for_key(&[2]).collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn building_an_index_sorts_its_keys_and_names_the_smallest_duplicate() {
        let mut c = Collection::new(Document::new()).unwrap();
        for (id, k) in [
            (1, Bson::Int32(5)),
            (2, Bson::Int32(5)),
            (3, Bson::Int32(1)),
        ] {
            c.insert("d.t", raw(doc! {"_id": id, "k": k})).unwrap();
        }
        c.insert("d.t", raw(doc! {"_id": 4, "k": [1, 7]})).unwrap();
        c.insert("d.t", raw(doc! {"_id": 5, "tags": ["b", "a", "b"]}))
            .unwrap();
        let spec = |key: Document, unique: bool| {
            let mut d = doc! {"key": key.clone(), "name": default_name(&key)};
            if unique {
                d.insert("unique", true);
            }
            IndexSpec::parse(&d, None).unwrap()
        };
        // k: 5 is held twice (records 1 and 2), and so is k: 1 (records 3
        // and 4); record order meets k: 5 first, a sorted build k: 1.
        let e = c.build_index("d.t", spec(doc! {"k": 1}, true)).unwrap_err();
        assert_eq!(e.code, ErrorCode::DUPLICATE_KEY);
        assert_eq!(
            e.message,
            "E11000 duplicate key error collection: d.t index: k_1 dup key: { k: 1 }"
        );
        let index = c.build_index("d.t", spec(doc! {"k": 1}, false)).unwrap();
        assert!(index.is_multikey());
        // Every record once per distinct key, in key order; records without
        // k under null.
        let entries: Vec<RecordId> = index.entries().map(Index::entry_record_id).collect();
        let first = c.first_record;
        assert_eq!(
            entries.iter().map(|r| r - first).collect::<Vec<_>>(),
            vec![4, 2, 3, 0, 1, 3]
        );
        let tags = c.build_index("d.t", spec(doc! {"tags": 1}, false)).unwrap();
        assert_eq!(tags.len(), 6);
    }

    #[test]
    fn snapshots_are_isolated_and_writes_copy_only_their_collection() {
        let store = Store::default();
        for coll in ["a", "b"] {
            store
                .write_or_create("d", coll, |c, _| c.insert("d.x", raw(doc! {"_id": 1})))
                .unwrap()
                .unwrap();
        }
        let snapshot = store.snapshot();
        // The reader touches both collections before the writes below.
        assert_eq!(snapshot.collection("d", "a").unwrap().len(), 1);
        assert_eq!(snapshot.collection("d", "b").unwrap().len(), 1);
        store
            .write_existing("d", "a", |c| c.insert("d.a", raw(doc! {"_id": 2})))
            .unwrap()
            .unwrap();
        store.create_collection("d", "c", &Document::new()).unwrap();
        // The snapshot still sees the catalog as it was.
        assert_eq!(snapshot.collection("d", "a").unwrap().len(), 1);
        assert!(snapshot.collection("d", "c").is_none());
        let now = store.snapshot();
        assert_eq!(now.collection("d", "a").unwrap().len(), 2);
        // The untouched collection is still shared, not copied.
        assert!(std::ptr::eq(
            snapshot.collection("d", "b").unwrap(),
            now.collection("d", "b").unwrap()
        ));
        assert!(!std::ptr::eq(
            snapshot.collection("d", "a").unwrap(),
            now.collection("d", "a").unwrap()
        ));
        // Dropping in the catalog leaves the snapshot whole.
        assert!(store.drop_database("d"));
        assert_eq!(snapshot.collection_names("d"), vec!["a", "b"]);
        assert!(store.snapshot().collection("d", "a").is_none());
    }

    #[test]
    fn the_spill_pass_moves_only_cold_unheld_collections_and_changes_no_result() {
        let store = Store::default();
        let pad = "x".repeat(500);
        for coll in ["cold", "held", "hot"] {
            for i in 0..3000 {
                store
                    .write_or_create("d", coll, |c, _| {
                        c.insert("d.x", raw(doc! {"_id": i, "pad": &pad}))
                    })
                    .unwrap()
                    .unwrap();
            }
        }
        let bytes = |coll: &str| -> Vec<Vec<u8>> {
            let c = store.collection("d", coll).unwrap();
            c.records().map(|(_, r)| r.as_bytes().to_vec()).collect()
        };
        let before: Vec<_> = ["cold", "held", "hot"].map(bytes).into();
        let data = store.collection("d", "cold").unwrap().data_size();
        // A reader holds `held`; `hot` counts as used from now on.
        let reader = store.snapshot();
        assert_eq!(reader.collection("d", "held").unwrap().len(), 3000);
        let used = |coll: &str, at: u64| {
            store.names.read()["d"][coll]
                .used
                .store(at, Ordering::Relaxed)
        };
        used("cold", 10);
        used("held", 20);
        used("hot", 1000);
        let cutoff = Some(500);
        // Within the budget, nothing moves.
        let within = store.spill_used_before(u64::MAX, cutoff).unwrap();
        assert!(within.spilled.is_empty());
        assert!(within.resident >= 3 * data, "{within:?}");
        // Over it, but nothing is cold yet: nothing moves.
        assert!(
            store
                .spill_used_before(0, Some(5))
                .unwrap()
                .spilled
                .is_empty()
        );
        let pass = store.spill_used_before(0, cutoff).unwrap();
        assert_eq!(pass.spilled, vec!["d.cold".to_string()]);
        // Every chunk but the open one went.
        assert!(pass.freed + heap::CHUNK_BYTES as u64 >= data, "{pass:?}");
        let after = store.spill_used_before(u64::MAX, cutoff).unwrap();
        assert_eq!(after.resident, within.resident - pass.freed);
        // The reader lets go: the next pass takes `held` too, never `hot`.
        drop(reader);
        let pass = store.spill_used_before(0, cutoff).unwrap();
        assert_eq!(pass.spilled, vec!["d.held".to_string()]);
        // The same bytes come back, and the spilled collections still take
        // writes.
        let now: Vec<_> = ["cold", "held", "hot"].map(bytes).into();
        assert_eq!(now, before);
        store
            .write_existing("d", "cold", |c| c.remove(1))
            .unwrap()
            .unwrap();
        assert_eq!(store.collection("d", "cold").unwrap().len(), 2999);
    }

    #[test]
    fn a_writer_holds_only_its_own_collection() {
        let store = Store::default();
        store.create_collection("d", "a", &Document::new()).unwrap();
        store.create_collection("e", "b", &Document::new()).unwrap();
        store
            .write_existing("d", "a", |_| {
                // While `d.a` is being written: other collections are
                // written and read, the names are read and changed.
                store
                    .write_existing("e", "b", |c| c.insert("e.b", raw(doc! {"_id": 1})))
                    .unwrap()
                    .unwrap();
                let snap = store.snapshot();
                assert_eq!(snap.collection("e", "b").unwrap().len(), 1);
                store
                    .create_collection("d", "other", &Document::new())
                    .unwrap();
                store.rename_collection("e.b", "e.c", false).unwrap();
            })
            .unwrap();
        let snap = store.snapshot();
        assert_eq!(snap.collection_names("d"), vec!["a", "other"]);
        assert_eq!(snap.collection("e", "c").unwrap().len(), 1);
    }

    #[test]
    fn a_write_after_a_drop_sees_the_collection_gone() {
        let store = Store::default();
        store.create_collection("d", "a", &Document::new()).unwrap();
        let (slot, _) = store.slot_and_snapshot("d", "a").unwrap();
        // A chunk copies the collection only while a reader shares it.
        let reader = store.snapshot();
        assert_eq!(reader.collection("d", "a").unwrap().len(), 0);
        assert!(store.write_again("d", "a", &slot, |_| ()).unwrap().1);
        assert!(!store.write_again("d", "a", &slot, |_| ()).unwrap().1);
        drop(reader);
        assert!(store.drop_collection("d", "a"));
        let err = store.write_again("d", "a", &slot, |_| ()).unwrap_err();
        assert_eq!(err.code, ErrorCode::QUERY_PLAN_KILLED);
        // A new write by name creates the collection afresh.
        store
            .write_or_create("d", "a", |c, created| {
                assert!(created);
                c.insert("d.a", raw(doc! {"_id": 1}))
            })
            .unwrap()
            .unwrap();
    }
}
