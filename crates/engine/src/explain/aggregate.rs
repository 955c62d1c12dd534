//! One plan-and-run function for `aggregate`, used both to answer the
//! command and to explain it, so what is explained is what ran.
//!
//! The pipeline is first rewritten as mongod 7.0 rewrites it
//! ([`optimize`]); its head — a `$match`, a `$sort` (top-k when a `$limit`
//! was coalesced into it), `$skip`/`$limit` and an inclusion `$project` — is
//! pushed into the query layer and planned like a `find` (the `$cursor`
//! stage), and the remaining stages run one after another, each timed and
//! counted. `$lookup` and `$graphLookup` read their foreign side through the
//! planner and report what those reads examined; `$unionWith` plans its
//! sub-pipeline as a top-level aggregation and reports its explain;
//! `$facet` reports each facet's stages.

use std::cell::RefCell;
use std::time::Instant;

use bson::{Bson, Document, doc};

use super::{Explained, Verbosity};
use crate::AggregateOptions;
use crate::catalog::{Catalog, to_document};
use crate::collation::Collation;
use crate::error::{EngineError, ErrorCode, Result};
use crate::exec;
use crate::exec::Mode;
use crate::expr::Vars;
use crate::filter::Filter;
use crate::ops;
use crate::pipeline::optimize::{Opt, optimize};
use crate::pipeline::{Nesting, Pipeline, SortStats, Source};
use crate::planner::Query;
use crate::sort::SortSpec;

/// What a foreign read (`$lookup`, `$graphLookup`) examined.
#[derive(Default, Debug, Clone)]
struct ForeignStats {
    docs: u64,
    keys: u64,
    /// BSON bytes of the documents examined.
    bytes: u64,
    collection_scans: u64,
    indexes: Vec<String>,
}

/// Reads other collections of the database through the planner, counting
/// what each read examined.
pub(crate) struct PlannedSource<'a> {
    cat: &'a Catalog,
    db: &'a str,
    now: bson::DateTime,
    verbosity: Option<Verbosity>,
    stats: RefCell<ForeignStats>,
    /// The explain of each `$unionWith` sub-pipeline run, in order.
    unions: RefCell<Vec<Vec<Bson>>>,
}

impl<'a> PlannedSource<'a> {
    pub(crate) fn new(
        cat: &'a Catalog,
        db: &'a str,
        now: bson::DateTime,
        verbosity: Option<Verbosity>,
    ) -> Self {
        PlannedSource {
            cat,
            db,
            now,
            verbosity,
            stats: RefCell::new(ForeignStats::default()),
            unions: RefCell::new(Vec::new()),
        }
    }
}

impl Source for PlannedSource<'_> {
    fn collection_docs(&self, collection: &str) -> Result<Vec<Document>> {
        match self.cat.collection(self.db, collection) {
            Some(c) => {
                let mut st = self.stats.borrow_mut();
                st.collection_scans += 1;
                st.docs += c.len() as u64;
                c.records()
                    .map(|(_, raw)| {
                        st.bytes += raw.as_bytes().len() as u64;
                        to_document(raw)
                    })
                    .collect()
            }
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
        let Some(c) = self.cat.collection(self.db, collection) else {
            return Ok(Vec::new());
        };
        let (out, read) = exec::read_matching_any(c, path, values, collation, self.now)?;
        let mut st = self.stats.borrow_mut();
        st.keys += read.keys_examined;
        st.docs += read.docs_examined;
        st.bytes += read.bytes_examined;
        match read.index {
            Some(name) => {
                if !st.indexes.contains(&name) {
                    st.indexes.push(name);
                }
            }
            None => st.collection_scans += 1,
        }
        Ok(out)
    }

    fn run_pipeline(
        &self,
        collection: &str,
        stages: &[Document],
        vars: &Vars,
    ) -> Option<Result<Vec<Document>>> {
        let verbosity = self.verbosity.map(|v| match v {
            // A sub-pipeline must run for its results even when only the
            // plan is explained.
            Verbosity::QueryPlanner => Verbosity::ExecutionStats,
            other => other,
        });
        Some(
            run_aggregate(
                self.cat, self.db, collection, stages, None, vars, verbosity, self.now, None,
            )
            .map(|out| {
                self.unions.borrow_mut().push(out.stages);
                out.docs
            }),
        )
    }
}

/// The outcome of [`run_aggregate`].
pub(crate) struct AggOutcome {
    /// The results (empty when only planning).
    pub docs: Vec<Document>,
    /// The explain body: `stages`, or (for a pipeline pushed wholly into
    /// the query layer) `queryPlanner` and `executionStats`.
    pub explain: Document,
    /// The explain as a stages array (the `$cursor` first), for nesting in
    /// `$unionWith`.
    pub stages: Vec<Bson>,
}

/// What the head of the pipeline gives the query layer.
struct Pushed {
    filter: Document,
    sort: Option<Document>,
    skip: u64,
    limit: Option<u64>,
    projection: Option<Document>,
    /// Index of the first stage left to the pipeline.
    rest: usize,
}

impl Pushed {
    /// The `$cursor`'s read: the pushed-down filter, sort, skip, limit and
    /// projection, as [`run_aggregate`] and [`open_stream`] both plan it.
    fn query<'a>(
        &'a self,
        filter: &'a Filter,
        sort: Option<&'a SortSpec>,
        hint: Option<&'a Bson>,
        collation: Option<&'a Collation>,
        count: bool,
    ) -> Query<'a> {
        Query {
            filter,
            sort: sort.filter(|s| !s.keys.is_empty()),
            projection: self.projection.as_ref(),
            skip: self.skip,
            limit: self.limit.filter(|l| *l > 0),
            hint,
            collation,
            count,
            distinct: None,
            min: None,
            max: None,
        }
    }
}

fn count_of(v: &Bson) -> Option<u64> {
    match v {
        Bson::Int32(n) if *n >= 0 => Some(*n as u64),
        Bson::Int64(n) if *n >= 0 => Some(*n as u64),
        Bson::Double(d) if *d >= 0.0 && d.fract() == 0.0 => Some(*d as u64),
        _ => None,
    }
}

/// An inclusion-only `$project` of plain fields, which the query layer can
/// apply (mongod pushes these into the `$cursor`).
fn pushable_projection(spec: &Bson) -> Option<Document> {
    let d = spec.as_document()?;
    let mut any = false;
    for (k, v) in d {
        if k.starts_with('$') {
            return None;
        }
        let on = match v {
            Bson::Boolean(b) => *b,
            Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) => {
                crate::value::as_f64(v).is_some_and(|n| n != 0.0)
            }
            _ => return None,
        };
        if k == "_id" {
            continue;
        }
        if !on {
            return None;
        }
        any = true;
    }
    any.then(|| d.clone())
}

/// A stage's spec as mongod's explain prints it (its serialised, parsed
/// form), for the stages whose form differs from what was written:
/// `$sort` under `sortKey`, `$match` as its parsed query (`$eq` made
/// explicit, conditions under one `$and`), `$unwind` of a path string as
/// `{path}`, `$limit` and `$skip` as 64-bit integers. Other stages are
/// echoed as written.
/// A stage of the rewritten pipeline as explain prints it: a stage as
/// written, normalised; a coalesced or absorbed one in its own form.
fn shown(o: &Opt) -> Document {
    match o {
        Opt::Plain(d) => normalised(d.clone()),
        other => other.shown(),
    }
}

fn normalised(stage: Document) -> Document {
    let mut entries = stage.iter();
    let (Some((name, spec)), None) = (entries.next(), entries.next()) else {
        return stage;
    };
    match (name.as_str(), spec) {
        ("$sort", Bson::Document(keys)) => doc! {"$sort": {"sortKey": keys.clone()}},
        ("$match", Bson::Document(filter)) => {
            doc! {"$match": super::parsed_query(filter)}
        }
        ("$unwind", Bson::String(path)) => doc! {"$unwind": {"path": path.clone()}},
        ("$limit" | "$skip", n) => match count_of(n).and_then(|n| i64::try_from(n).ok()) {
            Some(n) => doc! {name.clone(): n},
            None => stage.clone(),
        },
        _ => stage.clone(),
    }
}

fn single<'a>(o: &'a Opt, name: &str) -> Option<&'a Bson> {
    match o {
        Opt::Plain(d) if d.len() == 1 => d.get(name),
        _ => None,
    }
}

/// Whether the stages after the `$cursor` read no field of its documents
/// (a `$count`, or a `$group` on a constant that only counts, as
/// `countDocuments` sends): mongod then plans the query as a count.
fn needs_no_fields(rest: &[Opt]) -> bool {
    let Some(first) = rest.first() else {
        return false;
    };
    if single(first, "$count").is_some() {
        return true;
    }
    let Some(Bson::Document(group)) = single(first, "$group") else {
        return false;
    };
    let constant = |v: &Bson| match v {
        Bson::String(s) => !s.starts_with('$'),
        Bson::Document(_) | Bson::Array(_) => false,
        _ => true,
    };
    group.iter().all(|(k, v)| {
        if k == "_id" {
            return constant(v);
        }
        match v {
            Bson::Document(acc) if acc.len() == 1 => match acc.iter().next() {
                Some((op, arg)) if op == "$sum" => {
                    matches!(arg, Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_))
                }
                Some((op, Bson::Document(arg))) if op == "$count" => arg.is_empty(),
                _ => false,
            },
            _ => false,
        }
    })
}

fn push_down(opts: &[Opt]) -> Pushed {
    let mut p = Pushed {
        filter: Document::new(),
        sort: None,
        skip: 0,
        limit: None,
        projection: None,
        rest: 0,
    };
    let mut i = 0;
    if let Some(Bson::Document(m)) = opts.first().and_then(|o| single(o, "$match")) {
        p.filter = m.clone();
        i = 1;
    }
    match opts.get(i) {
        Some(Opt::SortLimit(spec, n)) => {
            p.sort = Some(spec.clone());
            p.limit = Some(*n);
            i += 1;
        }
        Some(o) => {
            if let Some(Bson::Document(spec)) = single(o, "$sort") {
                p.sort = Some(spec.clone());
                i += 1;
            }
        }
        None => {}
    }
    while let Some(o) = opts.get(i) {
        if let Some(n) = single(o, "$limit").and_then(count_of) {
            p.limit = Some(p.limit.map_or(n, |l| l.min(n)));
        } else if let Some(n) = single(o, "$skip").and_then(count_of) {
            match p.limit {
                Some(l) if n >= l => break,
                Some(l) => p.limit = Some(l - n),
                None => {}
            }
            p.skip += n;
        } else {
            break;
        }
        i += 1;
    }
    if let Some(proj) = opts
        .get(i)
        .and_then(|o| single(o, "$project"))
        .and_then(pushable_projection)
    {
        p.projection = Some(proj);
        i += 1;
    }
    p.rest = i;
    p
}

/// What [`stream_cursor`] did: the documents for the stages after it, the
/// `$cursor`'s explain and counts, and the entries of the stages it ran.
struct Streamed {
    docs: Vec<Document>,
    cursor: Option<Explained>,
    n_cursor: i64,
    cursor_millis: i64,
    /// How many stages of `rest` ran (and have entries).
    consumed: usize,
    entries: Vec<Bson>,
}

/// Time spent in a stage run once per document, sampled as the plan
/// stages sample theirs ([`exec::Timer::sampled`]).
#[derive(Default)]
struct Sampled {
    calls: u64,
    nanos: u64,
}

impl Sampled {
    fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let timer = exec::Timer::sampled(self.calls);
        self.calls += 1;
        let out = f();
        self.nanos += timer.elapsed_nanos() as u64;
        out
    }

    fn millis(&self) -> i64 {
        (self.nanos / 1_000_000) as i64
    }
}

/// One stage of a chain run per document: a stage that passes documents on
/// one at a time and reads no other collection ([`Pipeline::streams`]), or
/// a `$unionWith`, which passes its input on and, once the input is
/// exhausted, its sub-pipeline's results, as mongod's does.
enum Link {
    Run(Pipeline),
    Union {
        coll: String,
        stages: Vec<Document>,
        /// The sub-pipeline's explain, once it has run.
        explain: Vec<Bson>,
    },
}

/// The stages at the head of `rest` that can run per document ([`Link`]).
fn chain_prefix(rest: &[Opt]) -> Result<Vec<Link>> {
    let mut links = Vec::new();
    for o in rest {
        if !matches!(o, Opt::Plain(_)) {
            break;
        }
        let p = Pipeline::parse(&o.runnable())?;
        if p.streams() {
            links.push(Link::Run(p));
            continue;
        }
        match p.union_with() {
            // A collection-less sub-pipeline (`$documents`) runs whole.
            Some((coll, stages)) if !coll.is_empty() => links.push(Link::Union {
                coll: coll.to_string(),
                stages: stages.to_vec(),
                explain: Vec::new(),
            }),
            _ => break,
        }
    }
    Ok(links)
}

/// Links run per document, each counted and timed.
struct Chain {
    links: Vec<Link>,
    returned: Vec<i64>,
    clocks: Vec<Sampled>,
}

impl Chain {
    fn new(links: Vec<Link>) -> Chain {
        let n = links.len();
        Chain {
            links,
            returned: vec![0; n],
            clocks: (0..n).map(|_| Sampled::default()).collect(),
        }
    }

    fn len(&self) -> usize {
        self.links.len()
    }

    /// Pass `docs` through the links from `from` on, then each to `out`.
    fn feed(
        &mut self,
        from: usize,
        mut docs: Vec<Document>,
        source: &dyn Source,
        vars: &Vars,
        out: &mut dyn FnMut(Document) -> Result<()>,
    ) -> Result<()> {
        for i in from..self.links.len() {
            if docs.is_empty() {
                return Ok(());
            }
            if let Link::Run(p) = &self.links[i] {
                docs = self.clocks[i].time(|| p.run_streaming(docs, source, vars))?;
            }
            self.returned[i] += docs.len() as i64;
        }
        for d in docs {
            out(d)?;
        }
        Ok(())
    }

    /// Once the input is exhausted: run each `$unionWith`'s sub-pipeline in
    /// order, its results passed through the links after it and to `out`.
    #[allow(clippy::too_many_arguments)]
    fn drain(
        &mut self,
        cat: &Catalog,
        db: &str,
        vars: &Vars,
        verbosity: Option<Verbosity>,
        now: bson::DateTime,
        source: &dyn Source,
        out: &mut dyn FnMut(Document) -> Result<()>,
    ) -> Result<()> {
        for k in 0..self.links.len() {
            let Link::Union { coll, stages, .. } = &self.links[k] else {
                continue;
            };
            let (coll, stages) = (coll.clone(), stages.clone());
            let started = Instant::now();
            let downstream = |c: &Chain| c.clocks[k + 1..].iter().map(|c| c.nanos).sum::<u64>();
            let before = downstream(self);
            let outcome = run_aggregate(
                cat,
                db,
                &coll,
                &stages,
                None,
                vars,
                verbosity,
                now,
                Some(&mut |d| {
                    self.returned[k] += 1;
                    self.feed(k + 1, vec![d], source, vars, out)
                }),
            )?;
            let after = downstream(self);
            let own = (started.elapsed().as_nanos() as u64).saturating_sub(after - before);
            self.clocks[k].nanos += own;
            if let Link::Union { explain, .. } = &mut self.links[k] {
                *explain = outcome.stages;
            }
        }
        Ok(())
    }

    /// Each link's explain entry, `rest` being the stages the links came
    /// from.
    fn entries(&self, rest: &[Opt]) -> Vec<Bson> {
        let mut entries = Vec::with_capacity(self.links.len());
        for (((o, link), n), clock) in rest
            .iter()
            .zip(&self.links)
            .zip(&self.returned)
            .zip(&self.clocks)
        {
            let mut entry = shown(o);
            if let Link::Union { explain, .. } = link {
                let mut spec = match entry.get("$unionWith") {
                    Some(Bson::String(s)) => doc! {"coll": s.clone()},
                    Some(Bson::Document(d)) => d.clone(),
                    _ => Document::new(),
                };
                spec.insert("pipeline", explain.clone());
                entry = doc! {"$unionWith": spec};
            }
            entry.insert("nReturned", *n);
            entry.insert("executionTimeMillisEstimate", clock.millis());
            entries.push(Bson::Document(entry));
        }
        entries
    }
}

/// mongod 7.0's figures for a `$sort` stage, after its specification.
fn sort_stats(entry: &mut Document, stats: SortStats) {
    entry.insert(
        "totalDataSizeSortedBytesEstimate",
        stats.sorted_bytes as i64,
    );
    entry.insert("usedDisk", stats.spills > 0);
    entry.insert("spills", stats.spills as i64);
    entry.insert("spilledDataStorageSize", stats.spilled_bytes as i64);
}

/// Run the `$cursor` and pull each document it produces through the stages
/// right after it that pass documents on one at a time (`$match`,
/// `$project`, `$addFields`, `$unwind`, …, and `$unionWith`, whose
/// sub-pipeline's results follow) and into a `$group` that follows them,
/// as mongod's pipeline pulls from its `$cursor`: neither the cursor's
/// results nor a streaming stage's output is ever held whole. What comes
/// out (the groups, or the last streaming stage's documents) is handed to
/// the stages after; each stage run here is counted and timed as
/// [`run_stages`] counts and times it.
#[allow(clippy::too_many_arguments)]
fn stream_cursor(
    cat: &Catalog,
    db: &str,
    coll: &str,
    c: Option<&crate::catalog::Collection>,
    q: &Query<'_>,
    pushed: &Pushed,
    rest: &[Opt],
    vars: &Vars,
    verbosity: Option<Verbosity>,
    now: bson::DateTime,
    mut emit: Option<&mut dyn FnMut(Document) -> Result<()>>,
) -> Result<Streamed> {
    let projection = pushed
        .projection
        .as_ref()
        .map(|p| Pipeline::parse(&[doc! {"$project": p.clone()}]))
        .transpose()?;
    let mut chain = Chain::new(chain_prefix(rest)?);
    // A `$sort` right after the streaming stages takes their documents one
    // at a time and holds them encoded; a `$group` after the sort (or
    // after the streaming stages) is fed one document at a time.
    let sorting = match rest.get(chain.len()) {
        Some(o @ Opt::Plain(_)) if o.name() == "$sort" => Some(Pipeline::parse(&o.runnable())?),
        _ => None,
    };
    let sort_buffer = RefCell::new(sorting.as_ref().and_then(Pipeline::sort_buffer));
    let group_at = chain.len() + usize::from(sort_buffer.borrow().is_some());
    let group = match rest.get(group_at) {
        Some(o @ Opt::Plain(_)) if o.name() == "$group" => Some(Pipeline::parse(&o.runnable())?),
        _ => None,
    };
    let source = PlannedSource::new(cat, db, now, None);
    let ctx = crate::pipeline::Ctx {
        source: &source,
        vars,
    };
    let mut sink = group.as_ref().and_then(Pipeline::group_sink);
    // With `emit`, results are handed over as they are produced wherever
    // nothing after them blocks: straight from the streaming stages, or,
    // after a `$group`, each group through the streaming stages that
    // follow it as it is finished. Otherwise they are held and returned.
    let mut tail = match (&sink, &emit) {
        (Some(_), Some(_)) => {
            let after = &rest[group_at + 1..];
            let tail = chain_prefix(after)?;
            (tail.len() == after.len()).then(|| Chain::new(tail))
        }
        _ => None,
    };
    let direct = sink.is_none() && group_at == rest.len();
    if !direct && tail.is_none() {
        emit = None;
    }
    // Shared with `deliver`, so that the cursor's own time can be read
    // between the cursor and the `$unionWith` sub-pipelines.
    let group_clock = RefCell::new(Sampled::default());
    let sort_clock = RefCell::new(Sampled::default());
    let mut projection_clock = Sampled::default();
    let mut held = Vec::new();
    let mut n_cursor = 0i64;
    // What the streaming stages produce goes to the sort when there is
    // one (`sorted` false), and what leaves the sort (or the streaming
    // stages, without one) to the group, the writer or the held results.
    let mut deliver = |d: Document, sorted: bool| -> Result<()> {
        if !sorted && let Some(buffer) = sort_buffer.borrow_mut().as_mut() {
            return sort_clock.borrow_mut().time(|| buffer.add(&d, &ctx));
        }
        match (&mut sink, &mut emit) {
            (Some(sink), _) => group_clock.borrow_mut().time(|| sink.add(&d, &ctx)),
            (None, Some(emit)) => emit(d),
            (None, None) => {
                held.push(d);
                Ok(())
            }
        }
    };
    // Only the fields the stages depend on are decoded, as mongod hands
    // its pipeline only those.
    let leading = pushed
        .projection
        .as_ref()
        .map(|p| doc! {"$project": p.clone()});
    let later: Vec<Document> = rest.iter().flat_map(Opt::runnable).collect();
    // A first stage that is a `$project` of top-level fields, constants
    // and the document's size is answered from each record's bytes: the
    // cursor then decodes nothing, and the stage is counted and timed
    // where it runs, as the first link. (At the top of a pipeline
    // `$$ROOT` is the stored document: `CURRENT` is rebound only inside
    // `$let`, and no user variable may be named `ROOT`.)
    let raw_first = match (&projection, chain.links.first()) {
        (None, Some(Link::Run(p))) => p.raw_projection(),
        _ => None,
    };
    let fields = match raw_first {
        Some(_) => Some(std::collections::BTreeSet::new()),
        None => crate::pipeline::deps::top_level_fields(leading.iter().chain(&later)),
    };
    let started = Instant::now();
    let cursor = ops::select_each(
        c,
        &format!("{db}.{coll}"),
        q,
        vars,
        Mode::All,
        verbosity,
        fields.as_ref(),
        &mut |hit| {
            if let Some(raw_project) = &raw_first {
                let raw = c.and_then(|c| c.raw(hit.rid)).ok_or_else(|| {
                    EngineError::new(ErrorCode::INTERNAL_ERROR, "a selected record vanished")
                })?;
                n_cursor += 1;
                let d = chain.clocks[0].time(|| raw_project.apply(raw))?;
                chain.returned[0] += 1;
                return chain.feed(1, vec![d], &source, vars, &mut |d| deliver(d, false));
            }
            let mut docs = vec![hit.doc];
            if let Some(p) = &projection {
                docs = projection_clock.time(|| p.run_streaming(docs, &source, vars))?;
            }
            n_cursor += 1;
            chain.feed(0, docs, &source, vars, &mut |d| deliver(d, false))
        },
    )?;
    let elapsed = started.elapsed().as_nanos() as u64;
    let downstream: u64 = chain.clocks.iter().map(|c| c.nanos).sum::<u64>()
        + group_clock.borrow().nanos
        + sort_clock.borrow().nanos;
    let cursor_millis = (elapsed.saturating_sub(downstream) / 1_000_000) as i64;
    chain.drain(cat, db, vars, verbosity, now, &source, &mut |d| {
        deliver(d, false)
    })?;
    let mut entries = chain.entries(rest);
    let mut consumed = chain.len();
    let buffered = sort_buffer.borrow_mut().take();
    if let Some(buffer) = buffered {
        let sorted = buffer.len();
        let started = Instant::now();
        let before = group_clock.borrow().nanos;
        let stats = buffer.finish_each(&mut |d| deliver(d, true))?;
        // The sort's own time: its buffering, and its sorting and decoding
        // less what the stages it fed took meanwhile.
        let fed = group_clock.borrow().nanos - before;
        let own =
            (started.elapsed().as_nanos() as u64).saturating_sub(fed) + sort_clock.borrow().nanos;
        let mut entry = shown(&rest[consumed]);
        sort_stats(&mut entry, stats);
        entry.insert("nReturned", sorted as i64);
        entry.insert("executionTimeMillisEstimate", (own / 1_000_000) as i64);
        entries.push(Bson::Document(entry));
        consumed += 1;
    }
    if let (Some(emit), Some(tail)) = (emit.as_mut(), tail.as_mut())
        && let Some(sink) = sink.take()
    {
        sink.finish_each(&ctx, &mut |g| {
            crate::limits::check_output_depth(&g)?;
            tail.feed(0, vec![g], &source, vars, &mut **emit)
        })?;
        tail.drain(cat, db, vars, verbosity, now, &source, &mut **emit)?;
        consumed = rest.len();
    }
    let docs = match sink {
        Some(sink) => {
            let finished = Instant::now();
            let groups = sink.finish(&ctx)?;
            let mut entry = shown(&rest[consumed]);
            entry.insert("nReturned", groups.len() as i64);
            entry.insert(
                "executionTimeMillisEstimate",
                ((group_clock.borrow().nanos + finished.elapsed().as_nanos() as u64) / 1_000_000)
                    as i64,
            );
            entries.push(Bson::Document(entry));
            consumed += 1;
            groups
        }
        None => held,
    };
    Ok(Streamed {
        docs,
        cursor,
        n_cursor,
        cursor_millis,
        consumed,
        entries,
    })
}

/// Plan and run an aggregation over `coll` (or, with `verbosity` at
/// `queryPlanner`, only plan it). `verbosity` `None` runs without
/// explaining (the explain parts are then left empty). With `emit`, each
/// result is handed to it in order instead of being returned, as it is
/// produced where the last stages stream (a `$out` or `$merge` writer
/// stores each one as it comes).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_aggregate(
    cat: &Catalog,
    db: &str,
    coll: &str,
    pipeline: &[Document],
    hint: Option<&Bson>,
    vars: &Vars,
    verbosity: Option<Verbosity>,
    now: bson::DateTime,
    mut emit: Option<&mut dyn FnMut(Document) -> Result<()>>,
) -> Result<AggOutcome> {
    // Validate every stage as written before rewriting anything.
    Pipeline::parse(pipeline)?;
    let opts = optimize(pipeline);
    let pushed = push_down(&opts);
    let c = cat.collection(db, coll);
    let collation = vars.collation().cloned();
    let filter = Filter::parse(&pushed.filter, collation.as_ref())?;
    let sort = pushed.sort.as_ref().map(SortSpec::parse).transpose()?;
    let q = pushed.query(
        &filter,
        sort.as_ref(),
        hint,
        collation.as_ref(),
        needs_no_fields(&opts[pushed.rest..]),
    );
    let plan_only = verbosity == Some(Verbosity::QueryPlanner);
    let rest = &opts[pushed.rest..];
    let (docs, cursor, n_cursor, cursor_millis, mut entries) = if plan_only {
        let (_, cursor) = ops::select(c, &format!("{db}.{coll}"), &q, vars, Mode::Plan, verbosity)?;
        let entries = rest.iter().map(|o| Bson::Document(shown(o))).collect();
        (Vec::new(), cursor, 0, 0, entries)
    } else {
        let streamed = stream_cursor(
            cat,
            db,
            coll,
            c,
            &q,
            &pushed,
            rest,
            vars,
            verbosity,
            now,
            emit.as_mut()
                .map(|e| &mut **e as &mut dyn FnMut(Document) -> Result<()>),
        )?;
        let (mut docs, later) = run_stages(
            cat,
            db,
            &rest[streamed.consumed..],
            streamed.docs,
            vars,
            verbosity,
            now,
        )?;
        if let Some(emit) = emit {
            for d in std::mem::take(&mut docs) {
                emit(d)?;
            }
        }
        let mut entries = streamed.entries;
        entries.extend(later);
        (
            docs,
            streamed.cursor,
            streamed.n_cursor,
            streamed.cursor_millis,
            entries,
        )
    };
    let Some(Explained {
        query_planner,
        execution_stats,
    }) = cursor
    else {
        return Ok(AggOutcome {
            docs,
            explain: Document::new(),
            stages: Vec::new(),
        });
    };
    let mut cursor_doc = doc! {"queryPlanner": query_planner.clone()};
    if let Some(s) = &execution_stats {
        cursor_doc.insert("executionStats", s.clone());
    }
    let mut first = doc! {"$cursor": cursor_doc};
    if !plan_only {
        first.insert("nReturned", n_cursor);
        first.insert("executionTimeMillisEstimate", cursor_millis);
    }
    entries.insert(0, Bson::Document(first));
    let explain = if rest.is_empty() {
        let mut qp = query_planner;
        qp.insert("optimizedPipeline", true);
        let mut out = doc! {"queryPlanner": qp};
        if let Some(s) = execution_stats {
            out.insert("executionStats", s);
        }
        out
    } else {
        doc! {"stages": entries.clone()}
    };
    Ok(AggOutcome {
        docs,
        explain,
        stages: entries,
    })
}

/// `aggregate` over `coll` as a stream, when every stage left after the
/// `$cursor` passes documents on one at a time (`$match`, `$project`,
/// `$addFields`/`$set`, `$unset`, `$unwind`, `$replaceRoot`/`$replaceWith`,
/// `$skip`, `$limit`); `None` when one holds data or reads another
/// collection, and the pipeline runs whole ([`run_aggregate`]). The
/// `$cursor` is planned exactly as [`run_aggregate`] plans it.
pub(crate) fn open_stream(
    cat: &Catalog,
    db: &str,
    coll: &str,
    pipeline: &[Document],
    hint: Option<&Bson>,
    vars: Vars,
) -> Result<Option<crate::exec::AggStream>> {
    use crate::exec::{FindStream, StreamParts, StreamStage};
    Pipeline::parse(pipeline)?;
    let opts = optimize(pipeline);
    let pushed = push_down(&opts);
    let rest = &opts[pushed.rest..];
    if needs_no_fields(rest) {
        return Ok(None);
    }
    let mut stages = Vec::with_capacity(rest.len() + 1);
    if let Some(proj) = &pushed.projection {
        stages.push(StreamStage::Run(Pipeline::parse(&[
            doc! {"$project": proj.clone()},
        ])?));
    }
    for o in rest {
        if !matches!(o, Opt::Plain(_)) {
            return Ok(None);
        }
        let stage = match o.name() {
            "$skip" => match single(o, "$skip").and_then(count_of) {
                Some(n) => StreamStage::Skip(n),
                None => return Ok(None),
            },
            "$limit" => match single(o, "$limit").and_then(count_of) {
                Some(n) => StreamStage::Limit(n),
                None => return Ok(None),
            },
            "$match" | "$project" | "$addFields" | "$set" | "$unset" | "$unwind"
            | "$replaceRoot" | "$replaceWith" => StreamStage::Run(Pipeline::parse(&o.runnable())?),
            _ => return Ok(None),
        };
        stages.push(stage);
    }
    let shared = cat.collection_shared(db, coll);
    let collation = vars.collation().cloned();
    let filter = Filter::parse(&pushed.filter, collation.as_ref())?;
    let sort = pushed.sort.as_ref().map(SortSpec::parse).transpose()?;
    let root = match shared.as_deref() {
        None => None,
        Some(c) => {
            let q = pushed.query(&filter, sort.as_ref(), hint, collation.as_ref(), false);
            let ctx = crate::exec::Ctx {
                coll: c,
                filter: &filter,
                vars: &vars,
                collation: collation.as_ref(),
            };
            Some(crate::exec::execute(&q, &ctx, Mode::Plan)?.root)
        }
    };
    let find = FindStream::new(StreamParts {
        coll: shared,
        filter,
        vars,
        collation,
        projection: None,
        root,
    });
    Ok(Some(crate::exec::AggStream::new(find, stages)))
}

/// Run stages after the `$cursor` (or at the top of a collection-less or
/// nested pipeline), each timed and counted; returns the results and each
/// stage's explain entry.
pub(crate) fn run_stages(
    cat: &Catalog,
    db: &str,
    opts: &[Opt],
    mut docs: Vec<Document>,
    vars: &Vars,
    verbosity: Option<Verbosity>,
    now: bson::DateTime,
) -> Result<(Vec<Document>, Vec<Bson>)> {
    let mut entries = Vec::with_capacity(opts.len());
    for o in opts {
        let started = Instant::now();
        let mut entry = shown(o);
        if let Some(Bson::Document(facets)) = single(o, "$facet") {
            let mut out = Document::new();
            let mut shown = Document::new();
            // The facets' outputs, against the operation's memory budget.
            let mut held = crate::limits::Held::new();
            for (name, stages) in facets {
                let stages: Vec<Document> = match stages {
                    Bson::Array(a) => a.iter().filter_map(|s| s.as_document().cloned()).collect(),
                    _ => Vec::new(),
                };
                Pipeline::parse_nested(&stages, Nesting::Facet)?;
                let (r, sub) = run_stages(
                    cat,
                    db,
                    &optimize(&stages),
                    docs.clone(),
                    vars,
                    verbosity,
                    now,
                )?;
                held.add(r.iter().map(crate::limits::approx_doc_size).sum())?;
                out.insert(
                    name.clone(),
                    r.into_iter().map(Bson::Document).collect::<Vec<_>>(),
                );
                shown.insert(name.clone(), sub);
            }
            docs = vec![out];
            entry = doc! {"$facet": shown};
        } else {
            let source = PlannedSource::new(cat, db, now, verbosity);
            let p = Pipeline::parse(&o.runnable())?;
            // A `$sort` here sorts what it holds in memory.
            let sorted = (o.name() == "$sort").then(|| SortStats::in_memory(&docs));
            docs = p.run(docs, &source, vars)?;
            if let Some(stats) = sorted {
                sort_stats(&mut entry, stats);
            }
            if matches!(o.name(), "$lookup" | "$graphLookup") {
                let st = source.stats.into_inner();
                entry.insert("totalDocsExamined", st.docs as i64);
                entry.insert("totalKeysExamined", st.keys as i64);
                entry.insert("totalDocBytesExamined", st.bytes as i64);
                entry.insert("collectionScans", st.collection_scans as i64);
                entry.insert("indexesUsed", st.indexes);
            } else if o.name() == "$unionWith"
                && let Some(sub) = source.unions.into_inner().into_iter().next()
            {
                let mut spec = match entry.get("$unionWith") {
                    Some(Bson::String(s)) => doc! {"coll": s.clone()},
                    Some(Bson::Document(d)) => d.clone(),
                    _ => Document::new(),
                };
                spec.insert("pipeline", sub);
                entry = doc! {"$unionWith": spec};
            }
        }
        entry.insert("nReturned", docs.len() as i64);
        entry.insert(
            "executionTimeMillisEstimate",
            started.elapsed().as_millis() as i64,
        );
        entries.push(Bson::Document(entry));
    }
    Ok((docs, entries))
}

/// A collection-less pipeline (`aggregate: 1`): no `$cursor`, every stage
/// run and counted.
pub(crate) fn run_collectionless(
    cat: &Catalog,
    db: &str,
    pipeline: &[Document],
    vars: &Vars,
    verbosity: Option<Verbosity>,
    now: bson::DateTime,
) -> Result<AggOutcome> {
    Pipeline::parse(pipeline)?;
    if verbosity == Some(Verbosity::QueryPlanner) {
        let entries: Vec<Bson> = pipeline
            .iter()
            .map(|s| Bson::Document(normalised(s.clone())))
            .collect();
        return Ok(AggOutcome {
            docs: Vec::new(),
            explain: doc! {"stages": entries.clone()},
            stages: entries,
        });
    }
    // The collection-less stages ($documents, …) run as written.
    let opts: Vec<Opt> = pipeline.iter().cloned().map(Opt::Plain).collect();
    let (docs, entries) = run_stages(cat, db, &opts, Vec::new(), vars, verbosity, now)?;
    Ok(AggOutcome {
        docs,
        explain: doc! {"stages": entries.clone()},
        stages: entries,
    })
}

/// The explain of an aggregation: planned and run by [`run_aggregate`]
/// (or [`run_collectionless`]), the functions that answer it.
pub(crate) fn explain(
    cat: &Catalog,
    db: &str,
    coll: Option<&str>,
    pipeline: &[Document],
    options: &AggregateOptions,
    verbosity: Verbosity,
    now: bson::DateTime,
) -> Result<Document> {
    let c = coll.and_then(|n| cat.collection(db, n));
    let collation = ops::effective_collation(c, options.collation.as_ref())?;
    let vars = ops::vars_for(now, options.let_vars.as_ref(), collation.as_ref())?;
    let out = match coll {
        Some(name) => run_aggregate(
            cat,
            db,
            name,
            pipeline,
            options.hint.as_ref(),
            &vars,
            Some(verbosity),
            now,
            None,
        )?,
        None => run_collectionless(cat, db, pipeline, &vars, Some(verbosity), now)?,
    };
    Ok(out.explain)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use bson::{RawDocumentBuf, doc};

    use super::*;
    use crate::Engine;

    /// `pipeline` over `t.c` through [`stream_cursor`], explained: how many
    /// stages were left after the `$cursor`, and what it streamed.
    fn streamed(
        cat: &Catalog,
        pipeline: &[Document],
        vars: &Vars,
        now: bson::DateTime,
    ) -> (usize, Streamed) {
        let opts = optimize(pipeline);
        let pushed = push_down(&opts);
        let filter = Filter::parse(&pushed.filter, None).unwrap();
        let q = Query::new(&filter);
        let rest = &opts[pushed.rest..];
        let s = stream_cursor(
            cat,
            "t",
            "c",
            cat.collection("t", "c"),
            &q,
            &pushed,
            rest,
            vars,
            Some(Verbosity::ExecutionStats),
            now,
            None,
        )
        .unwrap();
        (rest.len(), s)
    }

    /// Each explain entry's `nReturned`.
    fn returned(s: &Streamed) -> Vec<i64> {
        s.entries
            .iter()
            .map(|e| e.as_document().unwrap().get_i64("nReturned").unwrap())
            .collect()
    }

    /// The `$cursor` streams through `$match` and `$unwind` into the
    /// `$group`: what reaches the stages after is the groups, never the
    /// cursor's results or the unwound documents, and the counts of the
    /// stages that streamed are what running them whole gives.
    #[test]
    fn cursor_streams_into_group() {
        let e = Engine::new();
        let docs: Vec<RawDocumentBuf> = (0..200)
            .map(|i| {
                RawDocumentBuf::from_document(&doc! {"_id": i, "k": i % 4, "tags": [1, 2, 3]})
                    .unwrap()
            })
            .collect();
        e.insert("t", "c", docs, true).unwrap();
        let cat = e.snapshot();
        let pipeline = [
            doc! {"$match": {"_id": {"$gte": 0}}},
            doc! {"$addFields": {"x": 1}},
            doc! {"$unwind": "$tags"},
            doc! {"$group": {"_id": "$k", "n": {"$sum": 1}}},
            doc! {"$sort": {"_id": 1}},
        ];
        let vars = Vars::default();
        let now = bson::DateTime::now();
        let (rest_len, s) = streamed(&cat, &pipeline, &vars, now);
        assert_eq!(s.n_cursor, 200);
        // `$addFields`, `$unwind` and `$group` ran here; `$sort` is left.
        assert_eq!(rest_len - s.consumed, 1);
        assert_eq!(s.docs.len(), 4);
        let returned = returned(&s);
        assert_eq!(returned, [200, 600, 4]);
        let whole = run_aggregate(
            &cat,
            "t",
            "c",
            &pipeline,
            None,
            &vars,
            Some(Verbosity::ExecutionStats),
            now,
            None,
        )
        .unwrap();
        let ns: Vec<i64> = whole
            .docs
            .iter()
            .map(|d| d.get_i32("n").unwrap().into())
            .collect();
        assert_eq!(ns, [150, 150, 150, 150]);
    }

    /// `$unionWith` streams too: its input passes on first, then its
    /// sub-pipeline's results, through the stages after it and into the
    /// `$group`; counts are those of running the stages whole, and the
    /// sub-pipeline's explain is nested as before.
    #[test]
    fn union_with_streams_into_group_and_after_it() {
        let e = Engine::new();
        let docs: Vec<RawDocumentBuf> = (0..200)
            .map(|i| RawDocumentBuf::from_document(&doc! {"_id": i, "k": i % 4}).unwrap())
            .collect();
        e.insert("t", "c", docs, true).unwrap();
        let other: Vec<RawDocumentBuf> = (0..10)
            .map(|i| RawDocumentBuf::from_document(&doc! {"_id": i}).unwrap())
            .collect();
        e.insert("t", "d", other, true).unwrap();
        let cat = e.snapshot();
        let pipeline = [
            doc! {"$project": {"_id": 0, "k": 1, "child": "$$ROOT"}},
            doc! {"$unionWith": {"coll": "d", "pipeline": [{"$project": {"_id": 0, "k": "$_id"}}]}},
            doc! {"$group": {"_id": "$k", "n": {"$sum": 1}}},
            doc! {"$sort": {"_id": 1}},
        ];
        let vars = Vars::default();
        let now = bson::DateTime::now();
        let (rest_len, s) = streamed(&cat, &pipeline, &vars, now);
        // `$project`, `$unionWith` and `$group` ran here; `$sort` is left.
        assert_eq!(rest_len - s.consumed, 1);
        assert_eq!(s.docs.len(), 10);
        let returned = returned(&s);
        assert_eq!(returned, [200, 210, 10]);
        let union = s.entries[1].as_document().unwrap();
        let sub = union
            .get_document("$unionWith")
            .unwrap()
            .get_array("pipeline")
            .unwrap();
        let cursor = sub[0].as_document().unwrap();
        assert_eq!(cursor.get_i64("nReturned").unwrap(), 10);
        let whole = run_aggregate(&cat, "t", "c", &pipeline, None, &vars, None, now, None).unwrap();
        let ns: Vec<(i32, i32)> = whole
            .docs
            .iter()
            .map(|d| (d.get_i32("_id").unwrap(), d.get_i32("n").unwrap()))
            .collect();
        let mut expected: Vec<(i32, i32)> = (0..4).map(|k| (k, 51)).collect();
        expected.extend((4..10).map(|k| (k, 1)));
        assert_eq!(ns, expected);

        // After a `$group`, with a writer: the groups first, then the
        // sub-pipeline's documents, each handed over as it comes.
        let pipeline = [
            doc! {"$group": {"_id": "$k"}},
            doc! {"$unionWith": "d"},
            doc! {"$set": {"seen": true}},
        ];
        let mut emitted = Vec::new();
        let out = run_aggregate(
            &cat,
            "t",
            "c",
            &pipeline,
            None,
            &vars,
            None,
            now,
            Some(&mut |d| {
                emitted.push(d);
                Ok(())
            }),
        )
        .unwrap();
        assert!(out.docs.is_empty());
        assert_eq!(emitted.len(), 14);
        let mut groups: Vec<i32> = emitted[..4]
            .iter()
            .map(|d| d.get_i32("_id").unwrap())
            .collect();
        groups.sort();
        assert_eq!(groups, [0, 1, 2, 3]);
        let tail: Vec<i32> = emitted[4..]
            .iter()
            .map(|d| d.get_i32("_id").unwrap())
            .collect();
        assert_eq!(tail, (0..10).collect::<Vec<_>>());
        assert!(emitted.iter().all(|d| d.get_bool("seen").unwrap()));
    }
}
