//! The CRUD and aggregation operations over the catalog.
//!
//! Each read takes a snapshot of the catalog and each write the live
//! catalog (`Store`), whose collections it locks one at a time; each
//! parses the request with the language modules, finds the matching records
//! and applies the operation. A multi-document update or delete selects
//! and computes on a snapshot, then applies its changes a chunk at a time
//! under its collection's lock, checking each record again first (a write
//! that came in between wins, and the document is matched afresh), as
//! mongod's yielding writes do: each document changes atomically, the
//! statement as a whole does not. Record selection uses an index for an equality
//! on an indexed field and a collection scan otherwise; the full filter is
//! always re-applied to every candidate, so the index is only ever a shortcut.

use std::collections::HashSet;

use bson::{Bson, Document, RawDocumentBuf, doc, oid::ObjectId};

use super::catalog::{Catalog, Collection, Store, to_document};
use super::collation::Collation;
use super::error::{EngineError, ErrorCode, Result};
use super::expr::Vars;
use super::filter::Filter;
use super::index::RecordId;
use super::pipeline::{Pipeline, Source};
use super::projection::Projection;
use super::sort::SortSpec;
use super::update::{ApplyContext, Update};
use super::*;

/// A matched record: its id, its document and the matched array position.
struct Hit {
    rid: RecordId,
    doc: Document,
    position: Option<usize>,
}

/// The collation a request runs under: its own, else the collection's.
fn effective_collation(
    c: Option<&Collection>,
    given: Option<&Document>,
) -> Result<Option<Collation>> {
    match given {
        Some(spec) => Collation::parse(spec),
        None => Ok(c.and_then(|c| c.collation().cloned())),
    }
}

fn vars_for(
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

/// How a read orders and cuts its matches, and the index it was told to use.
#[derive(Debug, Clone, Copy, Default)]
struct Shape<'a> {
    sort: Option<&'a SortSpec>,
    skip: u64,
    limit: Option<u64>,
    hint: Option<&'a Bson>,
    /// Only the number of matches is wanted.
    count: bool,
    /// `find`'s `min`/`max` index key bounds.
    min: Option<&'a Document>,
    max: Option<&'a Document>,
}

/// Every match, sorted when a sort is given, then skipped and limited.
fn select(
    c: &Collection,
    filter: &Filter,
    shape: Shape<'_>,
    collation: Option<&Collation>,
    vars: &Vars,
) -> Result<Vec<Hit>> {
    let Shape {
        sort,
        skip,
        limit,
        hint,
        count,
        min,
        max,
    } = shape;
    // Planned and executed as a stage tree: the winning plan's SORT, SKIP
    // and LIMIT stages do what the query asks, in mongod's order.
    let q = super::planner::Query {
        filter: filter.source(),
        sort: sort.filter(|s| !s.keys.is_empty()),
        skip,
        limit: limit.filter(|l| *l > 0),
        hint,
        collation,
        count,
        min,
        max,
        ..super::planner::Query::new(filter.source())
    };
    let ctx = super::exec::Ctx {
        coll: c,
        filter,
        vars,
        collation,
    };
    let mut hits = Vec::new();
    let mut failed = None;
    super::exec::run(&q, &ctx, |m| match m.doc {
        Some(doc) => {
            hits.push(Hit {
                rid: m.rid,
                doc,
                position: m.position,
            });
            true
        }
        None => match c.doc(m.rid) {
            Ok(Some(doc)) => {
                hits.push(Hit {
                    rid: m.rid,
                    doc,
                    position: m.position,
                });
                true
            }
            Ok(None) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        },
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(hits),
    }
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
    RawDocumentBuf::from_document(doc)
        .map_err(|e| EngineError::bad_value(format!("invalid document: {e}")))
}

pub(super) fn find(
    cat: &Catalog,
    db: &str,
    coll: &str,
    req: &FindRequest,
    now: bson::DateTime,
) -> Result<Vec<Document>> {
    super::catalog::check_coll_name(db, coll)?;
    let c = cat.collection(db, coll);
    let collation = effective_collation(c, req.collation.as_ref())?;
    let filter = Filter::parse(&req.filter, collation.as_ref())?;
    let sort = parse_sort(req.sort.as_ref())?;
    let projection = req.projection.as_ref().map(Projection::parse).transpose()?;
    let vars = vars_for(now, req.let_vars.as_ref(), collation.as_ref())?;
    let Some(c) = c else {
        return Ok(Vec::new());
    };
    let hits = select(
        c,
        &filter,
        Shape {
            sort: sort.as_ref(),
            skip: req.skip,
            limit: req.limit,
            hint: req.hint.as_ref(),
            count: false,
            min: req.min.as_ref(),
            max: req.max.as_ref(),
        },
        collation.as_ref(),
        &vars,
    )?;
    hits.into_iter()
        .map(|h| match &projection {
            Some(p) => p.apply(&h.doc, h.position, &vars),
            None => Ok(h.doc),
        })
        .collect()
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

/// One update statement, parsed.
struct ParsedUpdate {
    filter: Filter,
    update: Update,
    sort: Option<SortSpec>,
    collation: Option<Collation>,
    vars: Vars,
}

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
    let current = store.slot_and_snapshot(db, coll);
    let collation = effective_collation(
        current.as_ref().map(|(_, c)| c.as_ref()),
        st.collation.as_ref(),
    )?;
    let filter = Filter::parse(&st.filter, collation.as_ref())?;
    let update = Update::parse(&st.update, &st.array_filters, collation.as_ref())?;
    if !st.multi && st.update.as_document().is_some() && !update.is_replacement() {
        // fine: operator update of one document
    } else if st.multi && update.is_replacement() {
        return Err(EngineError::failed_to_parse(
            "multi update is not supported for replacement-style update",
        ));
    }
    let sort = parse_sort(st.sort.as_ref())?;
    let vars = vars_for(now, st.let_vars.as_ref(), collation.as_ref())?;
    let p = ParsedUpdate {
        filter,
        update,
        sort,
        collation,
        vars,
    };
    let multi = if st.multi {
        current
    } else {
        drop(current);
        None
    };
    let Some((slot, snapshot)) = multi else {
        // One document, or a collection that does not exist (an upsert
        // creates it): selected and changed under the collection's lock.
        return update_locked(store, db, coll, ns, index, st, &p, now, outcome);
    };
    // Many documents: select on the snapshot, holding no lock.
    let hits = select(
        &snapshot,
        &p.filter,
        Shape {
            sort: p.sort.as_ref(),
            hint: st.hint.as_ref(),
            ..Shape::default()
        },
        p.collation.as_ref(),
        &p.vars,
    )?;
    drop(snapshot);
    if hits.is_empty() {
        if st.upsert {
            return update_locked(store, db, coll, ns, index, st, &p, now, outcome);
        }
        return Ok(());
    }
    let mut hits = hits.into_iter().peekable();
    let mut chunk = WRITE_CHUNK;
    while hits.peek().is_some() {
        // Compute the chunk's new documents without any lock.
        let mut computed = Vec::with_capacity(chunk);
        let mut failed = None;
        for hit in hits.by_ref().take(chunk) {
            slot.check_live(db, coll)?;
            let before = to_raw(&hit.doc)?;
            match apply_update(&p.update, &hit, now, &p.vars) {
                Ok(new) => computed.push((hit, before, new)),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        // Apply them under the collection's lock.
        let (applied, copied) = store.write_again(db, coll, &slot, |c| -> Result<()> {
            for (hit, before, new) in computed {
                let Some(raw) = c.raw(hit.rid) else {
                    // Deleted since the snapshot.
                    continue;
                };
                let new = if raw.as_bytes() == before.as_bytes() {
                    new
                } else {
                    // Changed since the snapshot: match and update it afresh.
                    let doc = to_document(raw)?;
                    let details = p.filter.match_details(&doc, &p.vars)?;
                    if !details.matched {
                        continue;
                    }
                    let fresh = Hit {
                        rid: hit.rid,
                        doc,
                        position: details.array_position,
                    };
                    apply_update(&p.update, &fresh, now, &p.vars)?
                };
                outcome.matched += 1;
                if let Some(new) = new {
                    c.replace(ns, hit.rid, &new)?;
                    outcome.modified += 1;
                }
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

/// An update statement selected and applied under its collection's lock:
/// one document, or an upsert's check and insert.
#[allow(clippy::too_many_arguments)]
fn update_locked(
    store: &Store,
    db: &str,
    coll: &str,
    ns: &str,
    index: usize,
    st: &UpdateStatement,
    p: &ParsedUpdate,
    now: bson::DateTime,
    outcome: &mut UpdateOutcome,
) -> Result<()> {
    let mut run = |c: &mut Collection| -> Result<()> {
        let limit = if st.multi { None } else { Some(1) };
        let hits = select(
            c,
            &p.filter,
            Shape {
                sort: p.sort.as_ref(),
                limit,
                hint: st.hint.as_ref(),
                ..Shape::default()
            },
            p.collation.as_ref(),
            &p.vars,
        )?;
        if hits.is_empty() {
            if st.upsert {
                let new = upsert_insert(c, ns, &st.filter, &p.update, now, &p.vars)?;
                outcome.matched += 1;
                outcome
                    .upserted
                    .push((index, new.get("_id").cloned().unwrap_or(Bson::Null)));
            }
            return Ok(());
        }
        for hit in hits {
            outcome.matched += 1;
            if let Some(new) = apply_update(&p.update, &hit, now, &p.vars)? {
                c.replace(ns, hit.rid, &new)?;
                outcome.modified += 1;
            }
        }
        Ok(())
    };
    if st.upsert {
        store.write_or_create(db, coll, |c, _| run(c))?
    } else {
        store.write_existing(db, coll, run).unwrap_or(Ok(()))
    }
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

fn delete_one_statement(
    store: &Store,
    db: &str,
    coll: &str,
    st: &DeleteStatement,
    now: bson::DateTime,
    deleted: &mut u64,
) -> Result<()> {
    let Some((slot, snapshot)) = store.slot_and_snapshot(db, coll) else {
        return Ok(());
    };
    let collation = effective_collation(Some(&snapshot), st.collation.as_ref())?;
    let vars = vars_for(now, st.let_vars.as_ref(), collation.as_ref())?;
    let filter = Filter::parse(&st.filter, collation.as_ref())?;
    let shape = Shape {
        limit: (st.limit == 1).then_some(1),
        hint: st.hint.as_ref(),
        ..Shape::default()
    };
    if st.limit == 1 {
        // One document: selected and removed under the collection's lock.
        drop((slot, snapshot));
        return store
            .write_existing(db, coll, |c| -> Result<()> {
                let hits = select(c, &filter, shape, collation.as_ref(), &vars)?;
                for hit in hits {
                    if c.remove(hit.rid)?.is_some() {
                        *deleted += 1;
                    }
                }
                Ok(())
            })
            .unwrap_or(Ok(()));
    }
    // Many documents: select on the snapshot, holding no lock, then remove
    // them a chunk at a time.
    let hits = select(&snapshot, &filter, shape, collation.as_ref(), &vars)?;
    drop(snapshot);
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
    let current = store.collection(db, coll);
    let collation = effective_collation(current.as_deref(), req.collation.as_ref())?;
    drop(current);
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
    let project = |d: Document, pos: Option<usize>| -> Result<Document> {
        match &projection {
            Some(p) => p.apply(&d, pos, &vars),
            None => Ok(d),
        }
    };
    // One document: selected and changed under the collection's lock.
    let run = |c: &mut Collection| -> Result<FindAndModifyOutcome> {
        let hit = select(
            c,
            &filter,
            Shape {
                sort: sort.as_ref(),
                skip: 0,
                limit: Some(1),
                hint: req.hint.as_ref(),
                count: false,
                ..Shape::default()
            },
            collation.as_ref(),
            &vars,
        )?
        .into_iter()
        .next();
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
    if req.upsert {
        store.write_or_create(db, coll, |c, _| run(c))?
    } else {
        store
            .write_existing(db, coll, run)
            .unwrap_or_else(|| Ok(FindAndModifyOutcome::default()))
    }
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

/// The read part of a pipeline ending in `$out`/`$merge`: every stage but
/// the last, which may run on a snapshot without the write lock.
pub(super) fn aggregate_write_input(
    cat: &Catalog,
    db: &str,
    coll: Option<&str>,
    pipeline: &[Document],
    opts: &AggregateOptions,
    now: bson::DateTime,
) -> Result<Vec<Document>> {
    let Some((_, body)) = pipeline.split_last() else {
        return Ok(Vec::new());
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
    aggregate(cat, db, coll, body, opts, now)
}

/// The write part: apply the last stage (`$out`/`$merge`) to `docs`.
pub(super) fn aggregate_write_output(
    store: &Store,
    db: &str,
    pipeline: &[Document],
    docs: Vec<Document>,
    now: bson::DateTime,
) -> Result<Vec<Document>> {
    let Some(last) = pipeline.last() else {
        return Ok(Vec::new());
    };
    write_last_stage(store, db, last, docs, now)
}

fn write_last_stage(
    store: &Store,
    db: &str,
    last: &Document,
    docs: Vec<Document>,
    now: bson::DateTime,
) -> Result<Vec<Document>> {
    if let Some(target) = last.get("$out") {
        let (tdb, tcoll) = match target {
            Bson::String(s) => (db.to_string(), s.clone()),
            Bson::Document(d) => (
                d.get_str("db").unwrap_or(db).to_string(),
                d.get_str("coll")
                    .map_err(|_| EngineError::failed_to_parse("$out requires 'coll'"))?
                    .to_string(),
            ),
            _ => {
                return Err(EngineError::failed_to_parse(
                    "$out only supports a string or object argument",
                ));
            }
        };
        write_out(store, &tdb, &tcoll, docs)?;
    } else if let Some(spec) = last.get("$merge") {
        merge(store, db, spec, docs, now)?;
    }
    Ok(Vec::new())
}

/// `$out`: replace the target's documents (keeping its indexes) with the
/// results, all or nothing, under the target's lock only.
fn write_out(store: &Store, db: &str, coll: &str, docs: Vec<Document>) -> Result<()> {
    let ns = format!("{db}.{coll}");
    let raws = docs
        .into_iter()
        .map(|d| to_raw(&ensure_id(d)))
        .collect::<Result<Vec<_>>>()?;
    store.write_or_create(db, coll, |c, _| -> Result<()> {
        // Check the new contents against a scratch copy of the index
        // definitions first, so a failure leaves the target untouched.
        let specs: Vec<Document> = c
            .indexes()
            .iter()
            .skip(1)
            .map(|i| i.spec.to_document())
            .collect();
        let scratch = Store::default();
        scratch.create_collection("scratch", "out", &Document::new())?;
        if !specs.is_empty() {
            scratch.create_indexes("scratch", "out", &specs)?;
        }
        scratch
            .write_existing("scratch", "out", |s| -> Result<()> {
                for raw in &raws {
                    s.insert(&ns, raw.clone())?;
                }
                Ok(())
            })
            .unwrap_or(Ok(()))?;
        c.clear();
        for raw in raws {
            c.insert(&ns, raw)?;
        }
        Ok(())
    })?
}

fn merge(
    store: &Store,
    db: &str,
    spec: &Bson,
    docs: Vec<Document>,
    now: bson::DateTime,
) -> Result<()> {
    let spec = match spec {
        Bson::String(s) => doc! {"into": s.clone()},
        Bson::Document(d) => d.clone(),
        _ => {
            return Err(EngineError::failed_to_parse(
                "$merge requires a string or object argument",
            ));
        }
    };
    let (tdb, tcoll) = match spec.get("into") {
        Some(Bson::String(s)) => (db.to_string(), s.clone()),
        Some(Bson::Document(d)) => (
            d.get_str("db").unwrap_or(db).to_string(),
            d.get_str("coll")
                .map_err(|_| EngineError::failed_to_parse("$merge 'into' requires 'coll'"))?
                .to_string(),
        ),
        _ => return Err(EngineError::failed_to_parse("$merge requires 'into'")),
    };
    let on: Vec<String> = match spec.get("on") {
        None => vec!["_id".into()],
        Some(Bson::String(s)) => vec![s.clone()],
        Some(Bson::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        Some(_) => {
            return Err(EngineError::failed_to_parse(
                "$merge 'on' must be a string or array",
            ));
        }
    };
    let when_matched = spec
        .get("whenMatched")
        .cloned()
        .unwrap_or(Bson::String("merge".into()));
    let when_not_matched = spec
        .get_str("whenNotMatched")
        .unwrap_or("insert")
        .to_string();
    let ns = format!("{tdb}.{tcoll}");
    let vars = Vars::with_now(now);
    store.write_or_create(&tdb, &tcoll, |c, _| {
        merge_into(
            c,
            &ns,
            &spec,
            &on,
            &when_matched,
            &when_not_matched,
            docs,
            &vars,
            now,
        )
    })?
}

/// `$merge`'s writes into its target, under the target's lock.
#[allow(clippy::too_many_arguments)]
fn merge_into(
    c: &mut Collection,
    ns: &str,
    spec: &Document,
    on: &[String],
    when_matched: &Bson,
    when_not_matched: &str,
    docs: Vec<Document>,
    vars: &Vars,
    now: bson::DateTime,
) -> Result<()> {
    let ns = ns.to_string();
    for d in docs {
        let mut key = Document::new();
        for field in on {
            match d.get(field) {
                Some(v) => {
                    key.insert(field.clone(), v.clone());
                }
                None if field == "_id" => {}
                None => {
                    return Err(EngineError::new(
                        ErrorCode(51132),
                        format!(
                            "$merge write error: 'on' field '{field}' cannot be missing, null, undefined or an array"
                        ),
                    ));
                }
            }
        }
        let filter = Filter::parse(&key, None)?;
        let existing = if key.is_empty() {
            None
        } else {
            select(
                c,
                &filter,
                Shape {
                    limit: Some(1),
                    ..Shape::default()
                },
                None,
                vars,
            )?
            .into_iter()
            .next()
        };
        match existing {
            Some(hit) => match &when_matched {
                Bson::String(mode) => match mode.as_str() {
                    "replace" => c.replace(
                        &ns,
                        hit.rid,
                        &with_id(d, hit.doc.get("_id").cloned().unwrap_or(Bson::Null)),
                    )?,
                    "keepExisting" => {}
                    "merge" => {
                        let mut merged = hit.doc.clone();
                        for (k, v) in d {
                            merged.insert(k, v);
                        }
                        c.replace(&ns, hit.rid, &merged)?;
                    }
                    "fail" => {
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
                    other => {
                        return Err(EngineError::bad_value(format!(
                            "Enumeration value '{other}' for field 'whenMatched' is not a valid value."
                        )));
                    }
                },
                Bson::Array(stages) => {
                    let stages: Vec<Document> = stages
                        .iter()
                        .filter_map(|s| s.as_document().cloned())
                        .collect();
                    let update = Update::parse(
                        &Bson::Array(stages.into_iter().map(Bson::Document).collect()),
                        &[],
                        None,
                    )?;
                    let mut mvars = vars.clone();
                    mvars.set("new", Bson::Document(d.clone()));
                    if let Some(Bson::Document(l)) = spec.get("let") {
                        mvars.bind_let(l, &d)?;
                    }
                    if let Some(new) = apply_update(&update, &hit, now, &mvars)? {
                        c.replace(&ns, hit.rid, &new)?;
                    }
                }
                _ => {
                    return Err(EngineError::failed_to_parse(
                        "$merge 'whenMatched' must be a string or pipeline",
                    ));
                }
            },
            None => match when_not_matched {
                "insert" => {
                    c.insert(&ns, to_raw(&ensure_id(d))?)?;
                }
                "discard" => {}
                "fail" => {
                    return Err(EngineError::new(
                        ErrorCode(13113),
                        "$merge could not find a matching document in the target collection for at least one document in the source collection",
                    ));
                }
                other => {
                    return Err(EngineError::bad_value(format!(
                        "Enumeration value '{other}' for field 'whenNotMatched' is not a valid value."
                    )));
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
    let c = cat.collection(db, coll);
    let collation = effective_collation(c, req.collation.as_ref())?;
    let filter = Filter::parse(&req.filter, collation.as_ref())?;
    let Some(c) = c else {
        return Ok(0);
    };
    // Without a filter the record count answers, unless a hint names an
    // index: then the index is counted, as mongod does (a sparse or partial
    // index counts only the documents it holds).
    let hinted_index = match &req.hint {
        Some(h) => super::planner::hinted_index(c, h)?.is_some(),
        None => false,
    };
    if filter.is_empty() && !hinted_index {
        let n = (c.len() as u64).saturating_sub(req.skip);
        return Ok(req.limit.filter(|l| *l > 0).map_or(n, |l| n.min(l)));
    }
    let vars = Vars::with_now(now);
    Ok(select(
        c,
        &filter,
        Shape {
            sort: None,
            skip: req.skip,
            limit: req.limit,
            hint: req.hint.as_ref(),
            count: true,
            ..Shape::default()
        },
        collation.as_ref(),
        &vars,
    )?
    .len() as u64)
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

#[allow(clippy::too_many_arguments)]
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
    let c = cat.collection(db, coll);
    let collation = effective_collation(c, collation)?;
    let filter = Filter::parse(filter, collation.as_ref())?;
    let Some(c) = c else {
        return Ok(Vec::new());
    };
    let vars = Vars::with_now(now);
    let parts: Vec<&str> = key.split('.').collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    // Planned like explain plans it: a DISTINCT_SCAN when an index is led by
    // the key, otherwise the query's plan.
    let q = super::planner::Query {
        collation: collation.as_ref(),
        distinct: Some(key),
        ..super::planner::Query::new(filter.source())
    };
    let ctx = super::exec::Ctx {
        coll: c,
        filter: &filter,
        vars: &vars,
        collation: collation.as_ref(),
    };
    let mut failed = None;
    super::exec::run(&q, &ctx, |m| {
        let doc = match m.doc {
            Some(d) => d,
            None => match c.doc(m.rid) {
                Ok(Some(d)) => d,
                Ok(None) => return true,
                Err(e) => {
                    failed = Some(e);
                    return false;
                }
            },
        };
        let mut values = Vec::new();
        values_at(&Bson::Document(doc), &parts, &mut values);
        for v in values {
            if seen.insert(keystring::encode_single(&v, collation.as_ref())) {
                out.push(v);
            }
        }
        true
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
