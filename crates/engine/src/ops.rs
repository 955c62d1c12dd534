//! The CRUD and aggregation operations over the catalog.
//!
//! Each read takes a snapshot of the catalog and each write the live
//! catalog (`Store`), whose collections it locks one at a time; each
//! parses the request with the language modules, finds the matching records
//! and applies the operation. Every read goes through [`select`] (the
//! planner's candidates, the trial, the winner run by
//! [`super::exec::execute`]), and each command's read is one `*_run`
//! function that its explain calls too, asking for the explain of the stage
//! tree that ran: explaining is running, minus the write. A write reads
//! with that same function, then applies its changes itself: a
//! single-document write, an upsert or `findAndModify` reads and writes
//! under its collection's lock; a multi-document update or delete reads
//! and computes on a snapshot, then applies its changes a chunk at a time
//! under its collection's lock, checking each record again first (a write
//! that came in between wins, and the document is matched afresh), as
//! mongod's yielding writes do: each document changes atomically, the
//! statement as a whole does not.

use std::collections::HashSet;

use bson::{Bson, Document, RawDocument, RawDocumentBuf, doc, oid::ObjectId};

use super::catalog::{Catalog, Collection, Store, to_document};
use super::collation::Collation;
use super::error::{EngineError, ErrorCode, Result};
use super::exec::Mode;
use super::explain::{Explained, Verbosity};
use super::expr::Vars;
use super::filter::Filter;
use super::index::RecordId;
use super::pipeline::{Pipeline, Source};
use super::planner::Query;
use super::projection::Projection;
use super::sort::SortSpec;
use super::update::{ApplyContext, Update};
use super::*;

mod merge_spec;
use merge_spec::{MergeSpec, WhenMatched, WhenNotMatched};

/// A matched record: its id, its document and the matched array position.
pub(super) struct Hit {
    pub(super) rid: RecordId,
    pub(super) doc: Document,
    position: Option<usize>,
}

/// The collation a request runs under: its own, else the collection's.
pub(super) fn effective_collation(
    c: Option<&Collection>,
    given: Option<&Document>,
) -> Result<Option<Collation>> {
    match given {
        Some(spec) => Collation::parse(spec),
        None => Ok(c.and_then(|c| c.collation().cloned())),
    }
}

/// The variables a request runs with: `$$NOW`, its collation and its `let`.
pub(super) fn vars_for(
    now: bson::DateTime,
    let_vars: Option<&Document>,
    collation: Option<&Collation>,
) -> Result<Vars> {
    let mut vars = Vars::with_now(now);
    vars.set_collation(collation.cloned());
    if let Some(spec) = let_vars {
        vars.bind_let(spec, &Document::new())?;
    }
    Ok(vars)
}

/// The read every operation and its explain share: plan `q` over `c`, run
/// the winner as far as `mode` says, and return the matches; with a
/// verbosity, also the explain sections of the stage tree that ran (an
/// `EOF` plan when the collection does not exist).
pub(super) fn select(
    c: Option<&Collection>,
    ns: &str,
    q: &Query<'_>,
    vars: &Vars,
    mode: Mode,
    explain: Option<Verbosity>,
) -> Result<(Vec<Hit>, Option<Explained>)> {
    let mut hits = Vec::new();
    let explained = select_each(c, ns, q, vars, mode, explain, None, &mut |hit| {
        hits.push(hit);
        Ok(())
    })?;
    Ok((hits, explained))
}

/// [`select`], handing each result to `each` as the plan produces it
/// instead of collecting them (an aggregation's `$cursor` feeding its later
/// stages); an error from `each` stops the plan and is returned. With
/// `fields`, a document the plan did not decode is decoded with only those
/// top-level fields (what the stages after the `$cursor` depend on,
/// [`crate::pipeline::deps`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn select_each(
    c: Option<&Collection>,
    ns: &str,
    q: &Query<'_>,
    vars: &Vars,
    mode: Mode,
    explain: Option<Verbosity>,
    fields: Option<&std::collections::BTreeSet<String>>,
    each: &mut dyn FnMut(Hit) -> Result<()>,
) -> Result<Option<Explained>> {
    let Some(c) = c else {
        return Ok(explain.map(|v| super::explain::eof(ns, q, v)));
    };
    let ctx = super::exec::Ctx {
        coll: c,
        filter: q.filter,
        vars,
        collation: q.collation,
    };
    let mode = match explain {
        Some(Verbosity::QueryPlanner) => Mode::Plan,
        _ => mode,
    };
    let mut run = super::exec::execute(q, &ctx, Mode::Plan)?;
    if mode != Mode::Plan {
        let mut failed = None;
        let mut returned = 0u64;
        super::exec::drain(&mut run.root, &ctx, |m| {
            returned += 1;
            // A covered plan leaves the document out; it is read here, not
            // counted as examined (mongod would have read the index key).
            let doc = match (m.doc, fields) {
                (Some(doc), _) => Ok(Some(doc)),
                (None, Some(fields)) => c.doc_fields(m.rid, fields),
                (None, None) => c.doc(m.rid),
            };
            let step = doc.and_then(|doc| match doc {
                Some(doc) => each(Hit {
                    rid: m.rid,
                    doc,
                    position: m.position,
                }),
                None => Ok(()),
            });
            match step {
                Ok(()) => mode == Mode::All,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        run.returned = returned;
    }
    Ok(explain.map(|v| super::explain::sections(ns, q, &run, &ctx, v)))
}

fn parse_sort(sort: Option<&Document>) -> Result<Option<SortSpec>> {
    sort.map(SortSpec::parse).transpose()
}

pub(super) fn insert(
    store: &Store,
    db: &str,
    coll: &str,
    docs: Vec<RawDocumentBuf>,
    ordered: bool,
) -> Result<InsertOutcome> {
    let ns = format!("{db}.{coll}");
    // `_id`s are put first before the collection's lock is taken.
    let docs: Vec<Result<RawDocumentBuf>> = docs.into_iter().map(ensure_id_raw).collect();
    store.write_or_create(db, coll, |c, _| {
        let mut outcome = InsertOutcome::default();
        for (index, raw) in docs.into_iter().enumerate() {
            match raw.and_then(|raw| c.insert(&ns, raw)) {
                Ok(_) => outcome.inserted += 1,
                Err(error) => {
                    outcome.errors.push(WriteError { index, error });
                    if ordered {
                        break;
                    }
                }
            }
        }
        outcome
    })
}

/// Put `_id` first, generating an ObjectId when it is absent, as mongod does.
fn ensure_id_raw(raw: RawDocumentBuf) -> Result<RawDocumentBuf> {
    let first_is_id = matches!(raw.iter().next(), Some(Ok((k, _))) if k == "_id");
    if first_is_id {
        return Ok(raw);
    }
    let mut out = RawDocumentBuf::new();
    let existing = raw
        .get("_id")
        .map_err(|e| EngineError::bad_value(format!("invalid BSON: {e}")))?;
    match existing {
        Some(id) => out.append_ref("_id", id),
        None => out.append("_id", ObjectId::new()),
    }
    for element in raw.iter() {
        let (k, v) = element.map_err(|e| EngineError::bad_value(format!("invalid BSON: {e}")))?;
        if k != "_id" {
            out.append_ref(k, v);
        }
    }
    Ok(out)
}

/// `_id` first in a document, generating one when absent.
fn ensure_id(doc: Document) -> Document {
    if doc.keys().next().is_some_and(|k| k == "_id") {
        return doc;
    }
    let mut out = Document::new();
    out.insert(
        "_id",
        doc.get("_id")
            .cloned()
            .unwrap_or_else(|| Bson::ObjectId(ObjectId::new())),
    );
    for (k, v) in doc {
        if k != "_id" {
            out.insert(k, v);
        }
    }
    out
}

fn to_raw(doc: &Document) -> Result<RawDocumentBuf> {
    super::codec::encode(doc).map_err(|e| EngineError::bad_value(format!("invalid document: {e}")))
}

pub(super) fn find(
    cat: &Catalog,
    db: &str,
    coll: &str,
    req: &FindRequest,
    now: bson::DateTime,
) -> Result<Vec<Document>> {
    super::catalog::check_coll_name(db, coll)?;
    Ok(find_run(cat, db, coll, req, now, None)?.0)
}

/// `find`'s `min` and `max`, when both are given, name the same fields in
/// the same order: checked as the request is read, before the collection
/// is looked at, as mongod's `validateFindCommandRequest` does (51176).
fn check_min_max(req: &FindRequest) -> Result<()> {
    let nonempty = |d: &Option<Document>| d.as_ref().filter(|d| !d.is_empty()).cloned();
    if let (Some(lo), Some(hi)) = (nonempty(&req.min), nonempty(&req.max))
        && (lo.len() != hi.len() || lo.keys().zip(hi.keys()).any(|(a, b)| a != b))
    {
        return Err(EngineError::new(
            ErrorCode(51176),
            "min and max must have the same field names",
        ));
    }
    Ok(())
}

/// `find`, run and explained by this one function: the projected results
/// (none when explaining) and, with a verbosity, the explain of what ran.
pub(super) fn find_run(
    cat: &Catalog,
    db: &str,
    coll: &str,
    req: &FindRequest,
    now: bson::DateTime,
    explain: Option<Verbosity>,
) -> Result<(Vec<Document>, Option<Explained>)> {
    check_min_max(req)?;
    let c = cat.collection(db, coll);
    let collation = effective_collation(c, req.collation.as_ref())?;
    let filter = Filter::parse(&req.filter, collation.as_ref())?;
    let sort = parse_sort(req.sort.as_ref())?;
    let projection = req.projection.as_ref().map(Projection::parse).transpose()?;
    let vars = vars_for(now, req.let_vars.as_ref(), collation.as_ref())?;
    let q = find_query(req, &filter, sort.as_ref(), collation.as_ref());
    let (hits, explained) = select(c, &format!("{db}.{coll}"), &q, &vars, Mode::All, explain)?;
    if explained.is_some() {
        return Ok((Vec::new(), explained));
    }
    let docs = hits
        .into_iter()
        .map(|h| match &projection {
            Some(p) => p.apply(&h.doc, h.position, &vars),
            None => Ok(h.doc),
        })
        .collect::<Result<_>>()?;
    Ok((docs, None))
}

/// The read a `find` plans: its filter, sort, projection, skip, limit,
/// hint, collation and bounds, as [`find_run`] and [`find_open`] both plan it.
fn find_query<'a>(
    req: &'a FindRequest,
    filter: &'a Filter,
    sort: Option<&'a SortSpec>,
    collation: Option<&'a Collation>,
) -> Query<'a> {
    Query {
        sort: sort.filter(|s| !s.keys.is_empty()),
        projection: req.projection.as_ref(),
        skip: req.skip,
        limit: req.limit.filter(|l| *l > 0),
        hint: req.hint.as_ref(),
        collation,
        min: req.min.as_ref(),
        max: req.max.as_ref(),
        ..Query::new(filter)
    }
}

/// `find` as a stream: planned over the snapshot `cat`, the winner built
/// but not run; the cursor that holds it runs it one batch at a time
/// ([`super::exec::FindStream`]). Explain goes through [`find_run`], which
/// runs the same plan to the end.
pub(super) fn find_open(
    cat: &Catalog,
    db: &str,
    coll: &str,
    req: &FindRequest,
    now: bson::DateTime,
) -> Result<super::exec::FindStream> {
    super::catalog::check_coll_name(db, coll)?;
    check_min_max(req)?;
    let shared = cat.collection_shared(db, coll);
    let c = shared.as_deref();
    let collation = effective_collation(c, req.collation.as_ref())?;
    let filter = Filter::parse(&req.filter, collation.as_ref())?;
    let sort = parse_sort(req.sort.as_ref())?;
    let projection = req.projection.as_ref().map(Projection::parse).transpose()?;
    let vars = vars_for(now, req.let_vars.as_ref(), collation.as_ref())?;
    let root = match c {
        None => None,
        Some(c) => {
            let q = find_query(req, &filter, sort.as_ref(), collation.as_ref());
            let ctx = super::exec::Ctx {
                coll: c,
                filter: &filter,
                vars: &vars,
                collation: collation.as_ref(),
            };
            Some(super::exec::execute(&q, &ctx, Mode::Plan)?.root)
        }
    };
    Ok(super::exec::FindStream::new(super::exec::StreamParts {
        coll: shared,
        filter,
        vars,
        collation,
        projection,
        root,
    }))
}

/// Apply one parsed update to a matched document; returns the new document
/// if it changed.
fn apply_update(
    update: &Update,
    hit: &Hit,
    now: bson::DateTime,
    vars: &Vars,
) -> Result<Option<Document>> {
    let mut new = hit.doc.clone();
    let ctx = ApplyContext {
        array_position: hit.position,
        is_insert: false,
        now,
        vars,
    };
    let changed = update.apply(&mut new, &ctx)?;
    let old_id = hit.doc.get("_id").cloned().unwrap_or(Bson::Null);
    match new.get("_id") {
        // Operators that remove `_id` ($unset, $rename away) are refused
        // before anything is written, as mongod refuses them.
        None if !update.is_replacement() && !update.is_pipeline() => {
            return Err(EngineError::new(
                ErrorCode::IMMUTABLE_FIELD,
                "Performing an update on the path '_id' would modify the immutable field '_id'",
            ));
        }
        None => new = with_id(new, old_id),
        Some(id)
            if !value::values_equal(id, &old_id, None)
                || id.element_type() != old_id.element_type() =>
        {
            return Err(EngineError::new(
                ErrorCode::IMMUTABLE_FIELD,
                format!(
                    "Plan executor error during update :: caused by :: After applying the update, the (immutable) field '_id' was found to have been altered to _id: {}",
                    super::catalog::shell_repr(id)
                ),
            ));
        }
        Some(_) => {}
    }
    Ok(changed.then_some(new))
}

fn with_id(doc: Document, id: Bson) -> Document {
    let mut out = doc! {"_id": id};
    for (k, v) in doc {
        if k != "_id" {
            out.insert(k, v);
        }
    }
    out
}

/// Build and insert the document of an upsert; returns it.
fn upsert_insert(
    c: &mut Collection,
    ns: &str,
    filter_doc: &Document,
    update: &Update,
    now: bson::DateTime,
    vars: &Vars,
) -> Result<Document> {
    let seed = update.upsert_seed(filter_doc)?;
    let mut new = seed.clone();
    let ctx = ApplyContext {
        array_position: None,
        is_insert: true,
        now,
        vars,
    };
    update.apply(&mut new, &ctx)?;
    if let (Some(seed_id), Some(new_id)) = (seed.get("_id"), new.get("_id"))
        && !value::values_equal(seed_id, new_id, None)
    {
        return Err(EngineError::new(
            ErrorCode::IMMUTABLE_FIELD,
            "After applying the update, the (immutable) field '_id' was found to have been altered",
        ));
    }
    if new.get("_id").is_none()
        && let Some(id) = seed.get("_id")
    {
        new = with_id(new, id.clone());
    }
    let new = ensure_id(new);
    c.insert(ns, to_raw(&new)?)?;
    Ok(new)
}

pub(super) fn update(
    store: &Store,
    db: &str,
    coll: &str,
    statements: &[UpdateStatement],
    ordered: bool,
    now: bson::DateTime,
) -> Result<UpdateOutcome> {
    super::catalog::check_coll_name(db, coll)?;
    let ns = format!("{db}.{coll}");
    let mut outcome = UpdateOutcome::default();
    for (index, st) in statements.iter().enumerate() {
        if let Err(error) = update_one_statement(store, db, coll, &ns, index, st, now, &mut outcome)
        {
            outcome.errors.push(WriteError { index, error });
            if ordered {
                break;
            }
        }
    }
    Ok(outcome)
}

/// How many of `hits` an update would change: explain's `nWouldModify`.
fn would_modify<'h>(
    update: &Update,
    hits: impl IntoIterator<Item = &'h Hit>,
    now: bson::DateTime,
    vars: &Vars,
) -> Result<i64> {
    let mut n = 0;
    for hit in hits {
        let mut new = hit.doc.clone();
        let ctx = ApplyContext {
            array_position: hit.position,
            is_insert: false,
            now,
            vars,
        };
        if update.apply(&mut new, &ctx)? {
            n += 1;
        }
    }
    Ok(n)
}

/// The matches of one update statement, and what it needs to apply them
/// (the filter too: a yielding update matches a record that changed under
/// it afresh).
pub(super) struct UpdateMatches {
    filter: Filter,
    update: Update,
    vars: Vars,
    hits: Vec<Hit>,
}

/// One update statement's read, run and explained by this one function:
/// its matches (the first only, unless `multi`) and, with a verbosity, the
/// explain of what ran with the UPDATE stage's figures (what the write would
/// do; nothing is written here). `c` is the collection as the caller holds
/// it (`None` if it does not exist): a snapshot for explain and for a
/// multi-document update, the locked collection for the others. `lean`
/// keeps only each match's record id and position (its document left
/// empty), for a caller that reads the documents again from the collection
/// it passed, a chunk at a time.
pub(super) fn update_run(
    c: Option<&Collection>,
    db: &str,
    coll: &str,
    st: &UpdateStatement,
    now: bson::DateTime,
    explain: Option<Verbosity>,
    lean: bool,
) -> Result<(UpdateMatches, Option<Explained>)> {
    let collation = effective_collation(c, st.collation.as_ref())?;
    let filter = Filter::parse(&st.filter, collation.as_ref())?;
    let update = Update::parse(&st.update, &st.array_filters, collation.as_ref())?;
    if st.multi && update.is_replacement() {
        return Err(EngineError::failed_to_parse(
            "multi update is not supported for replacement-style update",
        ));
    }
    let sort = parse_sort(st.sort.as_ref())?;
    let vars = vars_for(now, st.let_vars.as_ref(), collation.as_ref())?;
    let q = Query {
        sort: sort.as_ref().filter(|s| !s.keys.is_empty()),
        hint: st.hint.as_ref(),
        collation: collation.as_ref(),
        ..Query::new(&filter)
    };
    let mode = if st.multi { Mode::All } else { Mode::First };
    let mut hits = Vec::new();
    // A lean caller drops the documents: a plan that did not read one for
    // its filter (a scan with `{}`) is not made to decode it either.
    let nothing = std::collections::BTreeSet::new();
    let mut explained = select_each(
        c,
        &format!("{db}.{coll}"),
        &q,
        &vars,
        mode,
        explain,
        lean.then_some(&nothing),
        &mut |hit| {
            hits.push(if lean {
                Hit {
                    doc: Document::new(),
                    ..hit
                }
            } else {
                hit
            });
            Ok(())
        },
    )?;
    if let Some(e) = &mut explained {
        let figures = doc! {
            "nMatched": hits.len() as i64,
            "nWouldModify": would_modify(&update, &hits, now, &vars)?,
            "nWouldUpsert": i64::from(st.upsert && hits.is_empty()),
        };
        super::explain::wrap_write(e, "UPDATE", figures, c.is_some());
    }
    let matches = UpdateMatches {
        filter,
        update,
        vars,
        hits,
    };
    Ok((matches, explained))
}

/// One update statement. A multi-document update that is not an upsert
/// selects (with [`update_run`]) on a snapshot of the collection and
/// computes each chunk on a view taken for it, holding no lock, then
/// applies its changes [`WRITE_CHUNK`]
/// documents at a time under the collection's lock, yielding between
/// chunks (a chunk that had to copy the collection doubles the next),
/// and checks each record again first: one deleted meanwhile is skipped,
/// one changed meanwhile is matched and updated afresh. A drop or rename
/// of the collection ends it with `QueryPlanKilled`. Every other statement
/// is read and written under the collection's lock ([`update_locked`]).
#[allow(clippy::too_many_arguments)]
fn update_one_statement(
    store: &Store,
    db: &str,
    coll: &str,
    ns: &str,
    index: usize,
    st: &UpdateStatement,
    now: bson::DateTime,
    outcome: &mut UpdateOutcome,
) -> Result<()> {
    let yielding = if st.multi && !st.upsert {
        store.slot_and_snapshot(db, coll)
    } else {
        None
    };
    let Some((slot, snapshot)) = yielding else {
        return update_locked(store, db, coll, ns, index, st, now, outcome);
    };
    // Many documents: matched on the snapshot, holding no lock. The
    // matches keep only their record ids; each chunk reads its documents
    // from the collection as it is then, and lets go of that view before
    // it writes, so the matches are never all decoded at once, and no
    // view keeps the records the update replaces alive: the collection's
    // old versions are released as it goes (its chunks are no longer
    // shared), as mongod's multi-update keeps no old version of what it
    // already wrote.
    let (matches, _) = update_run(Some(&snapshot), db, coll, st, now, None, true)?;
    drop(snapshot);
    let UpdateMatches {
        filter,
        update,
        vars,
        hits,
    } = matches;
    // An update that only removes top-level fields is applied to the
    // records' bytes, which are never decoded.
    let unset = update.unset_only();
    let mut hits = hits.into_iter().peekable();
    let mut chunk = WRITE_CHUNK;
    while hits.peek().is_some() {
        // Compute the chunk's new documents without any lock.
        let mut computed = Vec::with_capacity(chunk);
        let mut failed = None;
        let view = slot.current(db, coll)?;
        for hit in hits.by_ref().take(chunk) {
            slot.check_live(db, coll)?;
            let Some(before) = view.raw(hit.rid) else {
                continue;
            };
            let rid = hit.rid;
            let new = match &unset {
                Some(names) => codec::without_fields(before, names)
                    .map(|new| new.map(NewVersion::Raw))
                    .map_err(|e| {
                        EngineError::new(ErrorCode::INTERNAL_ERROR, format!("corrupt record: {e}"))
                    }),
                None => to_document(before).and_then(|doc| {
                    let hit = Hit { doc, ..hit };
                    apply_update(&update, &hit, now, &vars).map(|new| new.map(NewVersion::Doc))
                }),
            };
            match new {
                Ok(new) => computed.push((rid, Box::<[u8]>::from(before.as_bytes()), new)),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        drop(view);
        // Apply them under the collection's lock.
        let (applied, copied) = store.write_again(db, coll, &slot, |c| -> Result<()> {
            for (rid, before, new) in computed {
                let Some(raw) = c.raw(rid) else {
                    // Deleted since the snapshot.
                    continue;
                };
                let new = if raw.as_bytes() == &*before {
                    new
                } else {
                    // Changed since the snapshot: match and update it afresh.
                    let doc = to_document(raw)?;
                    let details = filter.match_details(&doc, &vars)?;
                    if !details.matched {
                        continue;
                    }
                    let fresh = Hit {
                        rid,
                        doc,
                        position: details.array_position,
                    };
                    apply_update(&update, &fresh, now, &vars)?.map(NewVersion::Doc)
                };
                outcome.matched += 1;
                match new {
                    Some(NewVersion::Doc(new)) => c.replace(ns, rid, &new)?,
                    Some(NewVersion::Raw(new)) => c.replace_raw(ns, rid, new)?,
                    None => continue,
                }
                outcome.modified += 1;
            }
            Ok(())
        })?;
        applied?;
        if copied {
            chunk = chunk.saturating_mul(2);
        }
        if let Some(e) = failed {
            return Err(e);
        }
    }
    Ok(())
}

/// A record's next version, as a multi-update computed it.
enum NewVersion {
    Doc(Document),
    Raw(RawDocumentBuf),
}

/// An update statement read (with [`update_run`]) and applied under its
/// collection's lock: one document, or an upsert's check and insert. When
/// the collection does not exist the statement is still read, so that a
/// malformed one fails (and an upsert creates nothing) as it would on an
/// existing collection.
#[allow(clippy::too_many_arguments)]
fn update_locked(
    store: &Store,
    db: &str,
    coll: &str,
    ns: &str,
    index: usize,
    st: &UpdateStatement,
    now: bson::DateTime,
    outcome: &mut UpdateOutcome,
) -> Result<()> {
    let mut apply = |c: &mut Collection, matches: UpdateMatches| -> Result<()> {
        let UpdateMatches {
            update, vars, hits, ..
        } = matches;
        if hits.is_empty() {
            if st.upsert {
                let new = upsert_insert(c, ns, &st.filter, &update, now, &vars)?;
                outcome.matched += 1;
                outcome
                    .upserted
                    .push((index, new.get("_id").cloned().unwrap_or(Bson::Null)));
            }
            return Ok(());
        }
        // As mongod's, a statement that fails (a duplicate key, a document
        // the validator rejects) counts nothing in `n`/`nModified`.
        let (mut matched, mut modified) = (0, 0);
        for hit in hits {
            matched += 1;
            if let Some(new) = apply_update(&update, &hit, now, &vars)? {
                c.replace(ns, hit.rid, &new)?;
                modified += 1;
            }
        }
        outcome.matched += matched;
        outcome.modified += modified;
        Ok(())
    };
    let existing = store.write_existing(db, coll, |c| {
        let (matches, _) = update_run(Some(c), db, coll, st, now, None, false)?;
        apply(c, matches)
    });
    if let Some(done) = existing {
        return done;
    }
    let (matches, _) = update_run(None, db, coll, st, now, None, false)?;
    if !st.upsert {
        return Ok(());
    }
    store.write_or_create(db, coll, |c, created| {
        if created && c.is_empty() {
            // Just created: nothing to read, the read of no collection holds.
            return apply(c, matches);
        }
        let (matches, _) = update_run(Some(c), db, coll, st, now, None, false)?;
        apply(c, matches)
    })?
}

/// The matches of one delete statement, and what a yielding delete needs
/// to check a record that changed under it.
pub(super) struct DeleteMatches {
    filter: Filter,
    vars: Vars,
    hits: Vec<Hit>,
}

/// One delete statement's read, run and explained by this one function:
/// its matches (the first only with `limit: 1`) and, with a verbosity, the
/// explain of what ran under a DELETE stage (nothing is deleted here). `c`
/// is the collection as the caller holds it (`None` if it does not
/// exist): a snapshot for explain and for a multi-document delete, the
/// locked collection for a delete of one document.
pub(super) fn delete_run(
    c: Option<&Collection>,
    db: &str,
    coll: &str,
    st: &DeleteStatement,
    now: bson::DateTime,
    explain: Option<Verbosity>,
) -> Result<(DeleteMatches, Option<Explained>)> {
    let collation = effective_collation(c, st.collation.as_ref())?;
    let vars = vars_for(now, st.let_vars.as_ref(), collation.as_ref())?;
    let filter = Filter::parse(&st.filter, collation.as_ref())?;
    let q = Query {
        hint: st.hint.as_ref(),
        collation: collation.as_ref(),
        ..Query::new(&filter)
    };
    let mode = if st.limit == 1 {
        Mode::First
    } else {
        Mode::All
    };
    let (hits, mut explained) = select(c, &format!("{db}.{coll}"), &q, &vars, mode, explain)?;
    if let Some(e) = &mut explained {
        let figures = doc! {"nWouldDelete": hits.len() as i64};
        super::explain::wrap_write(e, "DELETE", figures, c.is_some());
    }
    Ok((DeleteMatches { filter, vars, hits }, explained))
}

pub(super) fn delete(
    store: &Store,
    db: &str,
    coll: &str,
    statements: &[DeleteStatement],
    ordered: bool,
    now: bson::DateTime,
) -> Result<DeleteOutcome> {
    super::catalog::check_coll_name(db, coll)?;
    let mut outcome = DeleteOutcome::default();
    for (index, st) in statements.iter().enumerate() {
        let mut deleted = 0;
        let result = delete_one_statement(store, db, coll, st, now, &mut deleted);
        // What a failed statement deleted before failing stays deleted.
        outcome.deleted += deleted;
        if let Err(error) = result {
            outcome.errors.push(WriteError { index, error });
            if ordered {
                break;
            }
        }
    }
    Ok(outcome)
}

/// One delete statement. A multi-document delete reads (with
/// [`delete_run`]) on a snapshot of the collection, holding no lock, then
/// removes its matches [`WRITE_CHUNK`] at a time under the collection's
/// lock, yielding between chunks (a chunk that had to copy the collection
/// doubles the next); a record changed meanwhile is removed only if it
/// still matches, one already gone is skipped, and a drop or rename of the
/// collection ends it with `QueryPlanKilled`. A delete of one document is
/// read and removed under the collection's lock.
fn delete_one_statement(
    store: &Store,
    db: &str,
    coll: &str,
    st: &DeleteStatement,
    now: bson::DateTime,
    deleted: &mut u64,
) -> Result<()> {
    let yielding = if st.limit == 1 {
        None
    } else {
        store.slot_and_snapshot(db, coll)
    };
    let Some((slot, snapshot)) = yielding else {
        // One document: read and removed under the collection's lock.
        let removed = store.write_existing(db, coll, |c| -> Result<()> {
            let (matches, _) = delete_run(Some(c), db, coll, st, now, None)?;
            for hit in matches.hits {
                if c.remove(hit.rid)?.is_some() {
                    *deleted += 1;
                }
            }
            Ok(())
        });
        return match removed {
            Some(done) => done,
            // No such collection: the statement is still read, so that a
            // malformed one fails.
            None => delete_run(None, db, coll, st, now, None).map(|_| ()),
        };
    };
    // Many documents: read on the snapshot, holding no lock, then remove
    // them a chunk at a time.
    let (matches, _) = delete_run(Some(&snapshot), db, coll, st, now, None)?;
    drop(snapshot);
    let DeleteMatches { filter, vars, hits } = matches;
    let mut hits = hits.into_iter().peekable();
    let mut size = WRITE_CHUNK;
    while hits.peek().is_some() {
        let chunk = hits
            .by_ref()
            .take(size)
            .map(|hit| Ok((to_raw(&hit.doc)?, hit)))
            .collect::<Result<Vec<_>>>()?;
        let (applied, copied) = store.write_again(db, coll, &slot, |c| -> Result<()> {
            for (before, hit) in chunk {
                let Some(raw) = c.raw(hit.rid) else {
                    continue;
                };
                // Changed since the snapshot: removed only if it still matches.
                if raw.as_bytes() != before.as_bytes()
                    && !filter.matches(&to_document(raw)?, &vars)?
                {
                    continue;
                }
                if c.remove(hit.rid)?.is_some() {
                    *deleted += 1;
                }
            }
            Ok(())
        })?;
        applied?;
        if copied {
            size = size.saturating_mul(2);
        }
    }
    Ok(())
}

/// The match of a `findAndModify`, and what it needs to apply to it.
pub(super) struct FindAndModifyMatch {
    hit: Option<Hit>,
    update: Option<Update>,
    vars: Vars,
    projection: Option<Projection>,
}

/// `findAndModify`'s read, run and explained by this one function: its
/// first match and, with a verbosity, the explain of what ran under an
/// UPDATE (or, with `remove`, DELETE) stage; nothing is written here. `c`
/// is the collection as the caller holds it (`None` if it does not
/// exist): a snapshot for explain, the locked collection for the command.
pub(super) fn find_and_modify_run(
    c: Option<&Collection>,
    db: &str,
    coll: &str,
    req: &FindAndModifyRequest,
    now: bson::DateTime,
    explain: Option<Verbosity>,
) -> Result<(FindAndModifyMatch, Option<Explained>)> {
    let collation = effective_collation(c, req.collation.as_ref())?;
    let filter = Filter::parse(&req.query, collation.as_ref())?;
    let sort = parse_sort(req.sort.as_ref())?;
    let projection = req
        .fields
        .as_ref()
        .filter(|f| !f.is_empty())
        .map(Projection::parse)
        .transpose()?;
    let update = req
        .update
        .as_ref()
        .map(|u| Update::parse(u, &req.array_filters, collation.as_ref()))
        .transpose()?;
    let vars = vars_for(now, req.let_vars.as_ref(), collation.as_ref())?;
    let q = Query {
        sort: sort.as_ref().filter(|s| !s.keys.is_empty()),
        hint: req.hint.as_ref(),
        collation: collation.as_ref(),
        ..Query::new(&filter)
    };
    let (hits, mut explained) =
        select(c, &format!("{db}.{coll}"), &q, &vars, Mode::First, explain)?;
    let hit = hits.into_iter().next();
    if let Some(e) = &mut explained {
        let figures = match (&update, req.remove) {
            (Some(u), false) => {
                doc! {
                    "nMatched": i64::from(hit.is_some()),
                    "nWouldModify": would_modify(u, hit.iter(), now, &vars)?,
                    "nWouldUpsert": i64::from(req.upsert && hit.is_none()),
                }
            }
            _ => doc! {"nWouldDelete": i64::from(hit.is_some())},
        };
        let stage = if req.remove { "DELETE" } else { "UPDATE" };
        super::explain::wrap_write(e, stage, figures, c.is_some());
    }
    let matched = FindAndModifyMatch {
        hit,
        update,
        vars,
        projection,
    };
    Ok((matched, explained))
}

/// `findAndModify`: one document, read (with [`find_and_modify_run`]) and
/// changed under the collection's lock. When the collection does not
/// exist the request is still read, so that a malformed one fails (and an
/// upsert creates nothing) as it would on an existing collection.
pub(super) fn find_and_modify(
    store: &Store,
    db: &str,
    coll: &str,
    req: &FindAndModifyRequest,
    now: bson::DateTime,
) -> Result<FindAndModifyOutcome> {
    super::catalog::check_coll_name(db, coll)?;
    let ns = format!("{db}.{coll}");
    if req.remove && req.update.is_some() {
        return Err(EngineError::failed_to_parse(
            "Cannot specify both an update and remove=true",
        ));
    }
    if !req.remove && req.update.is_none() {
        return Err(EngineError::failed_to_parse(
            "Either an update or remove=true must be specified",
        ));
    }
    if req.remove && req.upsert {
        return Err(EngineError::failed_to_parse(
            "Cannot specify both upsert=true and remove=true",
        ));
    }
    let apply = |c: &mut Collection, matched: FindAndModifyMatch| {
        let FindAndModifyMatch {
            hit,
            update,
            vars,
            projection,
        } = matched;
        let project = |d: Document, pos: Option<usize>| -> Result<Document> {
            match &projection {
                Some(p) => p.apply(&d, pos, &vars),
                None => Ok(d),
            }
        };
        let mut outcome = FindAndModifyOutcome::default();
        match (hit, update) {
            (Some(hit), None) => {
                c.remove(hit.rid)?;
                outcome.matched = 1;
                outcome.value = Some(project(hit.doc, hit.position)?);
            }
            (Some(hit), Some(update)) => {
                let new = apply_update(&update, &hit, now, &vars)?;
                if let Some(new) = &new {
                    c.replace(&ns, hit.rid, new)?;
                }
                outcome.matched = 1;
                outcome.updated_existing = true;
                let shown = if req.new {
                    new.unwrap_or_else(|| hit.doc.clone())
                } else {
                    hit.doc
                };
                outcome.value = Some(project(shown, hit.position)?);
            }
            (None, Some(update)) if req.upsert => {
                let new = upsert_insert(c, &ns, &req.query, &update, now, &vars)?;
                outcome.matched = 1;
                outcome.upserted = new.get("_id").cloned();
                if req.new {
                    outcome.value = Some(project(new, None)?);
                }
            }
            (None, _) => {}
        }
        Ok(outcome)
    };
    let existing = store.write_existing(db, coll, |c| {
        let (matched, _) = find_and_modify_run(Some(c), db, coll, req, now, None)?;
        apply(c, matched)
    });
    if let Some(done) = existing {
        return done;
    }
    let (matched, _) = find_and_modify_run(None, db, coll, req, now, None)?;
    if !req.upsert {
        return Ok(FindAndModifyOutcome::default());
    }
    store.write_or_create(db, coll, |c, created| {
        if created && c.is_empty() {
            // Just created: nothing to read, the read of no collection holds.
            return apply(c, matched);
        }
        let (matched, _) = find_and_modify_run(Some(c), db, coll, req, now, None)?;
        apply(c, matched)
    })?
}

pub(super) fn pipeline_writes(pipeline: &[Document]) -> bool {
    pipeline
        .last()
        .and_then(|s| s.keys().next())
        .is_some_and(|k| k == "$out" || k == "$merge")
}

/// Reads other collections of one database for `$lookup` and friends.
struct CatalogSource<'a> {
    cat: &'a Catalog,
    db: &'a str,
    now: bson::DateTime,
}

impl Source for CatalogSource<'_> {
    fn collection_docs(&self, collection: &str) -> Result<Vec<Document>> {
        match self.cat.collection(self.db, collection) {
            Some(c) => c.records().map(|(_, raw)| to_document(raw)).collect(),
            None => Ok(Vec::new()),
        }
    }

    fn docs_matching_any(
        &self,
        collection: &str,
        path: &str,
        values: &[Bson],
        collation: Option<&Collation>,
    ) -> Result<Vec<Document>> {
        match self.cat.collection(self.db, collection) {
            Some(c) => Ok(super::exec::read_matching_any(c, path, values, collation, self.now)?.0),
            None => Ok(Vec::new()),
        }
    }
}

pub(super) fn aggregate(
    cat: &Catalog,
    db: &str,
    coll: Option<&str>,
    pipeline: &[Document],
    opts: &AggregateOptions,
    now: bson::DateTime,
) -> Result<Vec<Document>> {
    super::catalog::check_db_name(db)?;
    let c = coll.and_then(|name| cat.collection(db, name));
    let collation = effective_collation(c, opts.collation.as_ref())?;
    let vars = vars_for(now, opts.let_vars.as_ref(), collation.as_ref())?;
    let (input, rest) = match (pipeline.first(), coll) {
        (Some(stage), Some(name)) if stage.contains_key("$collStats") => {
            let spec = stage.get_document("$collStats").map_err(|_| {
                EngineError::failed_to_parse("$collStats must take a nested object")
            })?;
            (
                vec![coll_stats_stage(cat, db, name, spec, now)?],
                &pipeline[1..],
            )
        }
        (_, Some(name)) => {
            // Planned and run by the function explain uses too.
            return Ok(super::explain::aggregate::run_aggregate(
                cat,
                db,
                name,
                pipeline,
                opts.hint.as_ref(),
                &vars,
                None,
                now,
                None,
            )?
            .docs);
        }
        (_, None) => {
            return Ok(super::explain::aggregate::run_collectionless(
                cat, db, pipeline, &vars, None, now,
            )?
            .docs);
        }
    };
    let parsed = Pipeline::parse(rest)?;
    parsed.run(input, &CatalogSource { cat, db, now }, &vars)
}

/// `aggregate` as a stream over the snapshot `cat`, when its pipeline
/// streams (see `explain::aggregate::open_stream`); `None` otherwise, and
/// [`aggregate`] runs it whole.
pub(super) fn aggregate_open(
    cat: &Catalog,
    db: &str,
    coll: &str,
    pipeline: &[Document],
    opts: &AggregateOptions,
    now: bson::DateTime,
) -> Result<Option<super::exec::AggStream>> {
    super::catalog::check_db_name(db)?;
    if pipeline_writes(pipeline)
        || pipeline
            .first()
            .is_some_and(|s| s.contains_key("$collStats"))
    {
        return Ok(None);
    }
    let c = cat.collection(db, coll);
    let collation = effective_collation(c, opts.collation.as_ref())?;
    let vars = vars_for(now, opts.let_vars.as_ref(), collation.as_ref())?;
    super::explain::aggregate::open_stream(cat, db, coll, pipeline, opts.hint.as_ref(), vars)
}

fn coll_stats_stage(
    cat: &Catalog,
    db: &str,
    coll: &str,
    spec: &Document,
    now: bson::DateTime,
) -> Result<Document> {
    let mut out = doc! {"ns": format!("{db}.{coll}"), "host": "127.0.0.1", "localTime": now};
    // mongod's wording for a stat asked of a collection that does not exist.
    let missing = |what: &str| {
        EngineError::new(
            ErrorCode::NAMESPACE_NOT_FOUND,
            format!(
                "PlanExecutor error during aggregation :: caused by :: Unable to retrieve {what} in $collStats stage :: caused by :: Collection [{db}.{coll}] not found."
            ),
        )
    };
    if let Some(storage) = spec.get("storageStats") {
        if cat.collection(db, coll).is_none() {
            return Err(missing("storageStats"));
        }
        let scale = storage
            .as_document()
            .and_then(|d| d.get("scale"))
            .and_then(value::as_i64)
            .unwrap_or(1);
        if scale < 1 {
            return Err(EngineError::bad_value("scale has to be > 0"));
        }
        let mut stats = cat.coll_stats(db, coll, scale)?;
        stats.remove("ns");
        out.insert("storageStats", stats);
    }
    if spec.contains_key("count") {
        let count = cat
            .collection(db, coll)
            .ok_or_else(|| missing("count"))?
            .len() as i64;
        out.insert("count", count);
    }
    if spec.contains_key("latencyStats") || spec.contains_key("queryExecStats") {
        return Err(EngineError::not_implemented(
            "$collStats latencyStats/queryExecStats",
        ));
    }
    Ok(out)
}

/// What the read part of a writing pipeline hands to the write part.
pub(super) enum WriteInput {
    /// `$merge`'s input: the results, encoded.
    Docs(Vec<RawDocumentBuf>),
    /// `$out`'s: the new contents, built as the results were produced.
    Out {
        db: String,
        coll: String,
        /// The target's shape when the build began (`None`: it did not
        /// exist): the new contents replace the target only if it still
        /// has that shape.
        template: Option<Box<Collection>>,
        fresh: Box<Collection>,
    },
}

/// The read part of a pipeline ending in `$out`/`$merge`: every stage but
/// the last, which may run on a snapshot without the write lock.
///
/// Each result is handed over as it is produced where the stages before
/// the write stream: `$out` inserts it into the new contents at once
/// (beside the target, which stays as it is until the write part), and
/// `$merge`'s input is held encoded, at its BSON size.
pub(super) fn aggregate_write_input(
    store: &Store,
    cat: &Catalog,
    db: &str,
    coll: Option<&str>,
    pipeline: &[Document],
    opts: &AggregateOptions,
    now: bson::DateTime,
) -> Result<WriteInput> {
    let Some((last, body)) = pipeline.split_last() else {
        return Ok(WriteInput::Docs(Vec::new()));
    };
    for stage in body {
        if stage.contains_key("$out") || stage.contains_key("$merge") {
            let name = stage.keys().next().cloned().unwrap_or_default();
            return Err(EngineError::new(
                ErrorCode(40601),
                format!("{name} can only be the final stage in the pipeline"),
            ));
        }
    }
    let mut input = match last.get("$out") {
        Some(target) => {
            let (tdb, tcoll) = out_target(db, target)?;
            super::catalog::check_create_ns(&tdb, &tcoll)?;
            let now_there = store.collection(&tdb, &tcoll);
            let fresh = Box::new(Collection::fresh_for(now_there.as_deref()));
            WriteInput::Out {
                template: now_there.as_deref().map(|c| Box::new(c.emptied())),
                db: tdb,
                coll: tcoll,
                fresh,
            }
        }
        None => WriteInput::Docs(Vec::new()),
    };
    // The target's namespace, named by a failed insert, built once.
    let ns = match &input {
        WriteInput::Out { db, coll, .. } => format!("{db}.{coll}"),
        WriteInput::Docs(_) => String::new(),
    };
    let mut take = |d: &Document| -> Result<()> {
        match &mut input {
            WriteInput::Docs(out) => out.push(to_raw(d)?),
            WriteInput::Out { fresh, .. } => {
                fresh.insert(&ns, ensure_id_raw(to_raw(d)?)?)?;
            }
        }
        Ok(())
    };
    let streamable = body.first().is_none_or(|s| !s.contains_key("$collStats"));
    match coll {
        Some(name) if streamable => {
            super::catalog::check_db_name(db)?;
            let c = cat.collection(db, name);
            let collation = effective_collation(c, opts.collation.as_ref())?;
            let vars = vars_for(now, opts.let_vars.as_ref(), collation.as_ref())?;
            super::explain::aggregate::run_aggregate(
                cat,
                db,
                name,
                body,
                opts.hint.as_ref(),
                &vars,
                None,
                now,
                Some(&mut |d| take(&d)),
            )?;
        }
        _ => {
            for d in aggregate(cat, db, coll, body, opts, now)? {
                take(&d)?;
            }
        }
    }
    Ok(input)
}

/// The write part: apply the last stage (`$out`/`$merge`) to what the read
/// part produced.
pub(super) fn aggregate_write_output(
    store: &Store,
    db: &str,
    pipeline: &[Document],
    input: WriteInput,
    now: bson::DateTime,
) -> Result<Vec<Document>> {
    match input {
        WriteInput::Out {
            db,
            coll,
            template,
            fresh,
        } => {
            install_out(store, &db, &coll, template, fresh)?;
        }
        WriteInput::Docs(docs) => {
            if let Some(spec) = pipeline.last().and_then(|last| last.get("$merge")) {
                merge(store, db, spec, docs, now)?;
            }
        }
    }
    Ok(Vec::new())
}

/// `$out`: put the new contents (built beside the old ones, all or nothing)
/// in place of the target's, keeping its indexes, under the target's lock
/// only. If the target changed shape while they were built (created,
/// dropped, re-created, given other options or indexes), the records are
/// copied into its current shape instead, so that its indexes hold.
fn install_out(
    store: &Store,
    db: &str,
    coll: &str,
    template: Option<Box<Collection>>,
    fresh: Box<Collection>,
) -> Result<()> {
    let ns = format!("{db}.{coll}");
    store.replace_or_create(db, coll, |now| {
        if Collection::fits(template.as_deref(), now) {
            return Ok(fresh.succeeding(now));
        }
        let mut rebuilt = now.emptied();
        for (_, record) in fresh.shared_records() {
            rebuilt.insert_record(&ns, record)?;
        }
        Ok(rebuilt)
    })
}

/// The database and collection a `$out` writes to.
fn out_target(db: &str, target: &Bson) -> Result<(String, String)> {
    match target {
        Bson::String(s) => Ok((db.to_string(), s.clone())),
        Bson::Document(d) => Ok((
            d.get_str("db").unwrap_or(db).to_string(),
            d.get_str("coll")
                .map_err(|_| EngineError::failed_to_parse("$out requires 'coll'"))?
                .to_string(),
        )),
        _ => Err(EngineError::failed_to_parse(
            "$out only supports a string or object argument",
        )),
    }
}

/// A pipeline that is only `[{$out: …}]` over `coll`: the stored records
/// copied as they are (a collection scan that examines every document, as
/// mongod's), never decoded; `None` for any other pipeline.
pub(super) fn copy_out(
    store: &Store,
    db: &str,
    coll: &str,
    pipeline: &[Document],
) -> Option<Result<()>> {
    let [only] = pipeline else {
        return None;
    };
    if only.len() != 1 {
        return None;
    }
    let target = only.get("$out")?;
    Some((|| {
        let (tdb, tcoll) = out_target(db, target)?;
        super::catalog::check_coll_name(db, coll)?;
        let source = store.collection(db, coll);
        let ns = format!("{tdb}.{tcoll}");
        super::metrics::plan_summary(|| "COLLSCAN".to_string());
        store.replace_or_create(&tdb, &tcoll, |c| {
            let mut fresh = c.emptied();
            // The records are shared, not copied: a copy costs its index.
            let examined = match &source {
                Some(source) => {
                    fresh.insert_records_of(&ns, source, &mut super::limits::checkpoint)?
                }
                None => 0,
            };
            super::metrics::examined(0, examined);
            Ok(fresh)
        })
    })())
}

fn merge(
    store: &Store,
    db: &str,
    spec: &Bson,
    docs: Vec<RawDocumentBuf>,
    now: bson::DateTime,
) -> Result<()> {
    let spec = MergeSpec::parse(db, spec)?;
    // Checked before the target is created, as mongod checks it when it
    // parses the stage.
    spec.check_unique_on(store.collection(&spec.db, &spec.coll).as_deref())?;
    let ns = format!("{}.{}", spec.db, spec.coll);
    let vars = Vars::with_now(now);
    store.write_or_create(&spec.db, &spec.coll, |c, _| {
        merge_into(c, &ns, &spec, docs, &vars, now)
    })?
}

/// The target document a `$merge` input matched.
enum Existing {
    /// Found through the `_id` index: only its record id, decoded when
    /// needed.
    Found(RecordId),
    /// Found by a planned query, decoded.
    Selected(Hit),
}

impl Existing {
    fn rid(&self) -> RecordId {
        match self {
            Existing::Found(rid) => *rid,
            Existing::Selected(hit) => hit.rid,
        }
    }

    /// Its stored bytes.
    fn raw<'c>(&self, c: &'c Collection) -> Result<&'c RawDocument> {
        c.raw(self.rid())
            .ok_or_else(|| EngineError::new(ErrorCode::INTERNAL_ERROR, "record vanished"))
    }

    /// It decoded.
    fn hit(self, c: &Collection) -> Result<Hit> {
        match self {
            Existing::Selected(hit) => Ok(hit),
            Existing::Found(rid) => Ok(Hit {
                rid,
                doc: to_document(self.raw(c)?)?,
                position: None,
            }),
        }
    }
}

/// An `_id` whose equality query gets the IDHACK plan (the planner's own
/// test: not an operator document, an array, a regular expression, null,
/// NaN or a min/max key, which match more than themselves or plan
/// otherwise).
fn is_plain_id(id: &Bson) -> bool {
    super::planner::index_friendly(id)
        && !matches!(id, Bson::Document(d) if d.keys().any(|k| k.starts_with('$')))
}

/// `$merge`'s writes into its target, under the target's lock.
fn merge_into(
    c: &mut Collection,
    ns: &str,
    spec: &MergeSpec,
    docs: Vec<RawDocumentBuf>,
    vars: &Vars,
    now: bson::DateTime,
) -> Result<()> {
    let ns = ns.to_string();
    let on = spec.on.as_slice();
    for raw in docs {
        // On `_id` alone, a plain `_id` is read from the bytes and the
        // `_id` index probed directly, as the IDHACK plan a query on it
        // would get probes it (and counts).
        let plain_id = match on {
            [only] if only == "_id" => codec::walk::Doc::from_raw(&raw)
                .get_last("_id")
                .ok()
                .flatten()
                .and_then(|v| v.decode().ok())
                .filter(is_plain_id),
            _ => None,
        };
        if let Some(id) = &plain_id {
            let rid = c.find_by_id(id);
            let n = u64::from(rid.is_some());
            super::metrics::examined(n, n);
            // Merged in its bytes: neither document is decoded.
            if let Some(rid) = rid
                && spec.when_matched == WhenMatched::Merge
            {
                let target = c.raw(rid).ok_or_else(|| {
                    EngineError::new(ErrorCode::INTERNAL_ERROR, "record vanished")
                })?;
                let merged = codec::merge_fields(target, &raw)
                    .map_err(|e| EngineError::bad_value(format!("invalid document: {e}")))?;
                c.replace_raw(&ns, rid, merged)?;
                continue;
            }
        }
        // Decoded one at a time: the input stays at its BSON size.
        let d = to_document(&raw)?;
        let key = merge_spec::on_key(&d, on)?;
        let existing = match key.get("_id") {
            _ if key.is_empty() => None,
            // Probed above.
            Some(id) if plain_id.is_some() => c.find_by_id(id).map(Existing::Found),
            _ => {
                let filter = Filter::parse(&key, None)?;
                let q = Query {
                    limit: Some(1),
                    ..Query::new(&filter)
                };
                select(Some(&*c), &ns, &q, vars, Mode::All, None)?
                    .0
                    .into_iter()
                    .next()
                    .map(Existing::Selected)
            }
        };
        match existing {
            // Merged in its bytes: the fields the target keeps are copied,
            // not decoded and encoded again.
            Some(found) => match &spec.when_matched {
                WhenMatched::Merge => {
                    let merged = codec::merge_fields(found.raw(c)?, &raw)
                        .map_err(|e| EngineError::bad_value(format!("invalid document: {e}")))?;
                    c.replace_raw(&ns, found.rid(), merged)?;
                }
                WhenMatched::Replace => {
                    let hit = found.hit(c)?;
                    c.replace(
                        &ns,
                        hit.rid,
                        &with_id(d, hit.doc.get("_id").cloned().unwrap_or(Bson::Null)),
                    )?
                }
                WhenMatched::KeepExisting => {}
                WhenMatched::Fail => {
                    // mongod reports this as the duplicate key it is,
                    // with the `on` fields as pattern and value.
                    let pattern: Document =
                        key.keys().map(|k| (k.clone(), Bson::Int32(1))).collect();
                    return Err(EngineError::new(
                        ErrorCode::DUPLICATE_KEY,
                        format!(
                            "$merge with whenMatched: fail found an existing document with the same values for the 'on' fields: {key}"
                        ),
                    )
                    .with_info(doc! {"keyPattern": pattern, "keyValue": key.clone()}));
                }
                WhenMatched::Pipeline(stages) => {
                    let update = Update::parse(
                        &Bson::Array(stages.iter().cloned().map(Bson::Document).collect()),
                        &[],
                        None,
                    )?;
                    let mut mvars = vars.clone();
                    mvars.set("new", Bson::Document(d.clone()));
                    if let Some(l) = &spec.let_vars {
                        mvars.bind_let(l, &d)?;
                    }
                    let hit = found.hit(c)?;
                    if let Some(new) = apply_update(&update, &hit, now, &mvars)? {
                        c.replace(&ns, hit.rid, &new)?;
                    }
                }
            },
            None => match spec.when_not_matched {
                WhenNotMatched::Insert => {
                    c.insert(&ns, to_raw(&ensure_id(d))?)?;
                }
                WhenNotMatched::Discard => {}
                WhenNotMatched::Fail => {
                    return Err(EngineError::new(
                        ErrorCode::MERGE_STAGE_NO_MATCHING_DOCUMENT,
                        "$merge could not find a matching document in the target collection for at least one document in the source collection",
                    ));
                }
            },
        }
    }
    Ok(())
}

pub(super) fn count(
    cat: &Catalog,
    db: &str,
    coll: &str,
    req: &CountRequest,
    now: bson::DateTime,
) -> Result<u64> {
    super::catalog::check_coll_name(db, coll)?;
    Ok(count_run(cat, db, coll, req, now, None)?.0)
}

/// `count`, run and explained by this one function: the count and, with a
/// verbosity, the explain of what ran under a COUNT stage.
pub(super) fn count_run(
    cat: &Catalog,
    db: &str,
    coll: &str,
    req: &CountRequest,
    now: bson::DateTime,
    explain: Option<Verbosity>,
) -> Result<(u64, Option<Explained>)> {
    let c = cat.collection(db, coll);
    let collation = effective_collation(c, req.collation.as_ref())?;
    let filter = Filter::parse(&req.filter, collation.as_ref())?;
    let ns = format!("{db}.{coll}");
    let limit = req.limit.filter(|l| *l > 0);
    // Without a filter or a hint the record count answers. A hint is
    // planned: a hinted index is counted, as mongod does (a sparse or
    // partial index counts only the documents it holds).
    if filter.is_empty() && req.hint.is_none() {
        let n = c.map_or(0, |c| c.len() as u64).saturating_sub(req.skip);
        let n = limit.map_or(n, |l| n.min(l));
        let explained = explain.map(|v| super::explain::fast_count(&ns, n, req.skip, v));
        return Ok((n, explained));
    }
    let vars = vars_for(now, None, collation.as_ref())?;
    let q = Query {
        skip: req.skip,
        limit,
        hint: req.hint.as_ref(),
        collation: collation.as_ref(),
        count: true,
        ..Query::new(&filter)
    };
    let (hits, mut explained) = select(c, &ns, &q, &vars, Mode::All, explain)?;
    if let Some(e) = &mut explained {
        super::explain::wrap_count(e);
    }
    Ok((hits.len() as u64, explained))
}

/// Values at a dotted path for `distinct`: arrays are unwound one level.
fn values_at(v: &Bson, parts: &[&str], out: &mut Vec<Bson>) {
    match (parts.split_first(), v) {
        (None, Bson::Array(items)) => out.extend(items.iter().cloned()),
        (None, other) => out.push(other.clone()),
        (Some((first, rest)), Bson::Document(d)) => {
            if let Some(child) = d.get(*first) {
                values_at(child, rest, out);
            }
        }
        (Some((first, rest)), Bson::Array(items)) => {
            if let Ok(i) = first.parse::<usize>()
                && let Some(child) = items.get(i)
            {
                values_at(child, rest, out);
                return;
            }
            for item in items {
                if item.as_document().is_some() {
                    values_at(item, parts, out);
                }
            }
        }
        _ => {}
    }
}

pub(super) fn distinct(
    cat: &Catalog,
    db: &str,
    coll: &str,
    key: &str,
    filter: &Document,
    collation: Option<&Document>,
    now: bson::DateTime,
) -> Result<Vec<Bson>> {
    super::catalog::check_coll_name(db, coll)?;
    Ok(distinct_run(cat, db, coll, key, filter, collation, now, None)?.0)
}

/// `distinct`, run and explained by this one function: planned with the
/// key (a DISTINCT_SCAN when an index is led by it, otherwise the query's
/// plan); the values and, with a verbosity, the explain of what ran.
#[allow(clippy::too_many_arguments)]
pub(super) fn distinct_run(
    cat: &Catalog,
    db: &str,
    coll: &str,
    key: &str,
    filter: &Document,
    collation: Option<&Document>,
    now: bson::DateTime,
    explain: Option<Verbosity>,
) -> Result<(Vec<Bson>, Option<Explained>)> {
    let c = cat.collection(db, coll);
    let collation = effective_collation(c, collation)?;
    let filter = Filter::parse(filter, collation.as_ref())?;
    let vars = vars_for(now, None, collation.as_ref())?;
    let q = Query {
        collation: collation.as_ref(),
        distinct: Some(key),
        ..Query::new(&filter)
    };
    let (hits, explained) = select(c, &format!("{db}.{coll}"), &q, &vars, Mode::All, explain)?;
    let parts: Vec<&str> = key.split('.').collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for hit in hits {
        let mut values = Vec::new();
        values_at(&Bson::Document(hit.doc), &parts, &mut values);
        for v in values {
            if seen.insert(keystring::encode_single(&v, collation.as_ref())) {
                out.push(v);
            }
        }
    }
    Ok((out, explained))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use bson::{Bson, RawDocumentBuf, doc};

    use crate::exec::EXECUTIONS;
    use crate::{
        DeleteStatement, Engine, FindAndModifyRequest, FindRequest, UpdateStatement, WRITE_CHUNK,
    };

    fn executions() -> u64 {
        EXECUTIONS.with(std::cell::Cell::get)
    }

    fn statement(filter: bson::Document, multi: bool, upsert: bool) -> UpdateStatement {
        UpdateStatement {
            filter,
            update: Bson::Document(doc! {"$inc": {"n": 1}}),
            upsert,
            multi,
            array_filters: Vec::new(),
            collation: None,
            hint: None,
            sort: None,
            let_vars: None,
        }
    }

    /// Every write reads through the planner, once: a multi-document
    /// write on its snapshot (however many chunks it then applies), a
    /// single-document write and `findAndModify` under the lock; an upsert
    /// into a collection it creates reads nothing, as its explain says.
    #[test]
    fn each_write_plans_and_runs_its_read_once() {
        let e = Engine::new();
        e.create_indexes("t", "c", &[doc! {"key": {"a": 1}, "name": "a_1"}])
            .unwrap();
        let total = 3 * WRITE_CHUNK as i32;
        let docs: Vec<RawDocumentBuf> = (0..total)
            .map(|i| RawDocumentBuf::from_document(&doc! {"_id": i, "a": i % 2}).unwrap())
            .collect();
        e.insert("t", "c", docs, true).unwrap();
        let once = |what: &str, f: &dyn Fn(), runs: u64| {
            let before = executions();
            f();
            assert_eq!(executions() - before, runs, "{what}");
        };
        once(
            "updateMany",
            &|| {
                let out = e
                    .update("t", "c", &[statement(doc! {"a": 0}, true, false)], true)
                    .unwrap();
                assert_eq!(out.modified, u64::try_from(total / 2).unwrap());
            },
            1,
        );
        once(
            "updateOne",
            &|| {
                let out = e
                    .update("t", "c", &[statement(doc! {"a": 1}, false, false)], true)
                    .unwrap();
                assert_eq!(out.modified, 1);
            },
            1,
        );
        once(
            "upsert into a new collection",
            &|| {
                let out = e
                    .update("t", "new", &[statement(doc! {"a": 7}, true, true)], true)
                    .unwrap();
                assert_eq!(out.upserted.len(), 1);
            },
            0,
        );
        once(
            "findAndModify",
            &|| {
                let req = FindAndModifyRequest {
                    query: doc! {"a": 1},
                    remove: true,
                    ..FindAndModifyRequest::default()
                };
                assert_eq!(e.find_and_modify("t", "c", &req).unwrap().matched, 1);
            },
            1,
        );
        let delete = |limit| DeleteStatement {
            filter: doc! {"a": 0},
            limit,
            collation: None,
            hint: None,
            let_vars: None,
        };
        once(
            "deleteOne",
            &|| assert_eq!(e.delete("t", "c", &[delete(1)], true).unwrap().deleted, 1),
            1,
        );
        once(
            "deleteMany",
            &|| {
                let out = e.delete("t", "c", &[delete(0)], true).unwrap();
                assert_eq!(out.deleted, u64::try_from(total / 2 - 1).unwrap());
            },
            1,
        );
        let left = e.find("t", "c", &FindRequest::default()).unwrap();
        assert_eq!(left.len(), usize::try_from(total / 2 - 1).unwrap());
        assert!(left.iter().all(|d| d.get_i32("a").unwrap() == 1));
    }

    /// `$out` builds the new contents while it reads, beside the target,
    /// and puts them in place as they are when the target kept its shape;
    /// when the target gained an index (or documents) meanwhile, the
    /// records are copied into its current shape, so the new index holds
    /// every new document and nothing of the old contents survives.
    #[test]
    fn out_built_while_reading_fits_the_target_as_it_is_when_written() {
        use super::{WriteInput, aggregate_write_input, aggregate_write_output};
        let e = Engine::new();
        let src: Vec<RawDocumentBuf> = (0..50)
            .map(|i| RawDocumentBuf::from_document(&doc! {"_id": i, "a": i % 5}).unwrap())
            .collect();
        e.insert("t", "src", src, true).unwrap();
        let old = vec![RawDocumentBuf::from_document(&doc! {"_id": "old", "a": 99}).unwrap()];
        e.insert("t", "dst", old, true).unwrap();
        let pipeline = [doc! {"$match": {"a": {"$lt": 2}}}, doc! {"$out": "dst"}];
        let opts = crate::AggregateOptions::default();
        let now = bson::DateTime::now();
        let read = |e: &Engine| {
            aggregate_write_input(
                &e.store,
                &e.store.snapshot_db("t"),
                "t",
                Some("src"),
                &pipeline,
                &opts,
                now,
            )
            .unwrap()
        };
        let count = |e: &Engine, filter: bson::Document| {
            let req = FindRequest {
                filter,
                ..FindRequest::default()
            };
            e.find("t", "dst", &req).unwrap().len()
        };

        // Unchanged target: the contents built while reading go in as they are.
        let input = read(&e);
        let WriteInput::Out { fresh, .. } = &input else {
            panic!("$out builds its contents");
        };
        assert_eq!(fresh.len(), 20);
        aggregate_write_output(&e.store, "t", &pipeline, input, now).unwrap();
        assert_eq!(count(&e, doc! {}), 20);
        assert_eq!(count(&e, doc! {"_id": "old"}), 0);

        // An index created between the read and the write: it must hold
        // every new document.
        let input = read(&e);
        e.create_indexes("t", "dst", &[doc! {"key": {"a": 1}, "name": "a_1"}])
            .unwrap();
        aggregate_write_output(&e.store, "t", &pipeline, input, now).unwrap();
        let cat = e.store.snapshot_db("t");
        let dst = cat.collection("t", "dst").unwrap();
        assert_eq!(dst.len(), 20);
        assert_eq!(dst.index("a_1").unwrap().len(), 20);

        // Documents inserted meanwhile are replaced too.
        let input = read(&e);
        let late = vec![RawDocumentBuf::from_document(&doc! {"_id": "late", "a": 0}).unwrap()];
        e.insert("t", "dst", late, true).unwrap();
        aggregate_write_output(&e.store, "t", &pipeline, input, now).unwrap();
        assert_eq!(count(&e, doc! {}), 20);
        assert_eq!(count(&e, doc! {"_id": "late"}), 0);
        let cat = e.store.snapshot_db("t");
        assert_eq!(
            cat.collection("t", "dst")
                .unwrap()
                .index("a_1")
                .unwrap()
                .len(),
            20
        );
    }
}
