//! The course layer end to end: the miniature course in
//! `tests/fixtures/course` runs on the embedded engine and its claims
//! evaluate; the claims language; lint on a broken course; and a run
//! leaves every non-schemalab database untouched.

use std::path::PathBuf;

use bson::{Document, doc};
use futures_util::TryStreamExt;
use futures_util::future::BoxFuture;
use mongodb::Client;
use schemalab::course::claims::{
    Check, Metric, MetricSource, Val, parse_expr, placeholders, render_prose,
};
use schemalab::course::runner::{ClaimResult, LessonMetrics};
use schemalab::course::{
    CancelFlag, CatalogLoader, Course, CourseError, DatasetLoader, Format, LessonReport, OpKind,
    Progress, RunOptions, RunStatus, Scale, lint, prepare_lesson, render, run_lesson,
};
use schemalab::locale::Message;
use schemalab_engine::Engine;
use schemalab_wire::{BackgroundServer, spawn_background};

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/course")
        .join(rel)
}

/// The fixture course's one dataset: ten customers, a hundred orders.
struct Shop;

impl DatasetLoader for Shop {
    fn load<'a>(
        &'a self,
        client: &'a Client,
        db: &'a str,
        dataset: &'a str,
        _scale: Scale,
        seed: u64,
    ) -> BoxFuture<'a, Result<(), Message>> {
        Box::pin(async move {
            if dataset != "shop" {
                return Err(Message::verbatim(format!("unknown dataset {dataset}")));
            }
            let d = client.database(db);
            let customers: Vec<Document> = (0..10)
                .map(|i| doc! {"_id": i, "name": format!("customer {i}")})
                .collect();
            let orders: Vec<Document> = (0..100)
                .map(|i| doc! {"_id": i, "customer_id": i % 10, "total": ((i * 7 + seed as i32) % 50) as f64})
                .collect();
            d.collection("customers")
                .insert_many(customers)
                .await
                .map_err(Message::verbatim)?;
            d.collection("orders")
                .insert_many(orders)
                .await
                .map_err(Message::verbatim)?;
            Ok(())
        })
    }
}

async fn server() -> (BackgroundServer, Client) {
    let server = spawn_background(Engine::new()).unwrap();
    let client = Client::with_uri_str(server.uri()).await.unwrap();
    (server, client)
}

async fn run(client: &Client, root: &str, lesson: &str) -> LessonReport {
    let course = Course::load(fixture(root), schemalab::locale::Lang::En).unwrap();
    let lesson = course.lesson(lesson).unwrap();
    let opts = RunOptions {
        names: Default::default(),
        scale: Scale::Tiny,
        loader: &Shop,
        cancel: CancelFlag::new(),
        progress: None,
    };
    run_lesson(client, &lesson, &opts).await.unwrap()
}

fn claim<'a>(report: &'a LessonReport, check: &str) -> &'a ClaimResult {
    report.experiments[0]
        .claims
        .iter()
        .find(|c| c.check == check)
        .unwrap_or_else(|| panic!("no claim {check}"))
}

#[tokio::test]
async fn mini_course_runs_and_claims_evaluate() {
    let (_server, client) = server().await;
    let report = run(&client, "", "embed").await;

    assert!(report.engine.modelled);
    assert_eq!(
        report.engine.name,
        "schemalab embedded engine (sizes modelled)"
    );
    let exp = &report.experiments[0];
    let refs = &exp.variants[0];
    let embed = &exp.variants[1];
    assert_eq!(refs.database, "schemalab_embed_refs");
    assert_eq!(refs.setup_error, None);
    assert_eq!(embed.setup_error, None);
    let names: Vec<&str> = embed.collections.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["customers_embedded"]);
    let orders = refs
        .collections
        .iter()
        .find(|c| c.name == "orders")
        .unwrap();
    assert_eq!(orders.count, 101);
    assert!(orders.modelled);
    assert!(orders.max_obj_size > 0 && orders.max_obj_size as f64 >= orders.avg_obj_size);
    assert!(orders.indexes.iter().any(|i| i.name == "customer_id_1"));

    // Writes: the duplicate key is reported with its codeName, the upsert counted.
    let dup = refs.operations.iter().find(|o| o.id == "dup").unwrap();
    assert_eq!(dup.error.as_ref().unwrap().code_name, "DuplicateKey");
    assert_eq!(dup.error.as_ref().unwrap().code, Some(11000));
    let up = embed.operations.iter().find(|o| o.id == "dup").unwrap();
    assert_eq!(up.write.as_ref().unwrap().n_upserted, 1);

    for check in [
        "refs.coll.orders.count == 101",
        "refs.coll.orders.count >= 5 * embed.coll.customers_embedded.count",
        "embed.coll.customers_embedded.maxObjSize > refs.coll.orders.maxObjSize",
        "refs.coll.orders.index.customer_id_1 > 0",
        "refs.op.dup.error == 'DuplicateKey'",
        "embed.op.dup.nUpserted == 1",
        "embed.op.add_order.nModified == 1",
        "refs.op.add_order.n == 1",
    ] {
        let c = claim(&report, check);
        assert!(c.verdict.passed, "{check}: {}", c.verdict.reason);
    }
    let missing = claim(&report, "refs.coll.nosuch.count > 0");
    assert!(!missing.verdict.passed);
    assert!(
        missing
            .verdict
            .reason
            .to_string()
            .contains("no collection 'nosuch'"),
        "{}",
        missing.verdict.reason
    );

    // Reads are explained; until the engine explains, the metric is
    // unavailable with the server's reason and the claim fails, not the run.
    let read = claim(&report, "embed.op.customer_orders.docsExamined <= 1");
    let op = embed
        .operations
        .iter()
        .find(|o| o.id == "customer_orders")
        .unwrap();
    match &op.read {
        Some(m) => {
            assert!(read.verdict.passed, "{}", read.verdict.reason);
            assert_eq!(m.n_returned, 1);
        }
        None => {
            assert!(op.error.is_some());
            assert!(!read.verdict.passed);
            assert!(
                read.verdict.reason.to_string().contains("unavailable"),
                "{}",
                read.verdict.reason
            );
        }
    }

    // Every read form is sent to the server as an explain: it either
    // answers or refuses with its own error, never a shell error.
    for v in [refs, embed] {
        for op in v.operations.iter().filter(|o| o.kind == OpKind::Read) {
            match (&op.read, &op.error) {
                (Some(_), None) => {}
                (None, Some(e)) => assert_eq!(
                    e.code_name, "NotImplemented",
                    "{}: {}",
                    op.statement, e.message
                ),
                other => panic!("{}: {other:?}", op.statement),
            }
        }
    }

    // Every format renders the figures.
    let table = render(&report, Format::Table);
    assert!(table.contains("schemalab_embed_refs"), "{table}");
    assert!(table.contains("(modelled)"));
    assert!(table.contains('★'));
    assert!(table.contains("✗ A collection that does not exist"));
    let md = render(&report, Format::Markdown);
    assert!(md.contains("| **documents** |"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&render(&report, Format::Json)).unwrap();
    assert_eq!(
        json["experiments"][0]["variants"][0]["collections"][1]["count"],
        101
    );
    assert_eq!(json["engine"]["modelled"], true);

    // Prose placeholders take measured values (101 orders / 11 customers).
    let prose = course_prose();
    let rendered = render_prose(&prose, Some(&LessonMetrics(&report)));
    assert!(rendered.contains("about 9.18 orders"), "{rendered}");
    assert!(render_prose(&prose, None).contains("about … orders"));
}

fn course_prose() -> String {
    let course = Course::load(fixture(""), schemalab::locale::Lang::En).unwrap();
    course
        .lesson("embed")
        .unwrap()
        .prose_text()
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn run_reports_progress_and_cancels() {
    let (_server, client) = server().await;
    let course = Course::load(fixture(""), schemalab::locale::Lang::En).unwrap();
    let lesson = course.lesson("embed").unwrap();
    let cancel = CancelFlag::new();
    let steps = std::sync::Mutex::new(Vec::new());
    let c2 = cancel.clone();
    let progress = |p: &Progress| {
        steps.lock().unwrap().push(p.step.clone());
        // Cancel once the first variant starts running operations.
        if p.step.starts_with("op ") {
            c2.cancel();
        }
    };
    let opts = RunOptions {
        names: Default::default(),
        scale: Scale::Tiny,
        loader: &Shop,
        cancel,
        progress: Some(&progress),
    };
    let err = run_lesson(&client, &lesson, &opts).await.unwrap_err();
    assert!(matches!(err, CourseError::Cancelled));
    assert_eq!(
        *steps.lock().unwrap(),
        ["drop", "load", "setup", "op customer_orders"]
    );
}

async fn dump(client: &Client, db: &str) -> Vec<(String, Vec<Document>, Vec<Document>)> {
    let d = client.database(db);
    let mut names = d.list_collection_names().await.unwrap();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        let c = d.collection::<Document>(&n);
        let docs: Vec<Document> = c
            .find(doc! {})
            .sort(doc! {"_id": 1})
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        let mut idx: Vec<Document> = d
            .run_cursor_command(doc! {"listIndexes": &n})
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        idx.sort_by_key(|i| i.get_str("name").unwrap_or("").to_string());
        out.push((n, docs, idx));
    }
    out
}

#[tokio::test]
async fn other_databases_are_left_untouched() {
    let (_server, client) = server().await;
    let other = client.database("other");
    other
        .collection::<Document>("db")
        .insert_many(vec![
            doc! {"_id": 1, "a": "x"},
            doc! {"_id": 2, "a": "y", "n": 2.5},
        ])
        .await
        .unwrap();
    other
        .collection::<Document>("db")
        .create_index(mongodb::IndexModel::builder().keys(doc! {"a": 1}).build())
        .await
        .unwrap();
    // A database whose name shares the prefix but is not a variant's.
    client
        .database("schemalab_embed_refs_keep")
        .collection::<Document>("k")
        .insert_one(doc! {"_id": 1})
        .await
        .unwrap();
    let before = (
        dump(&client, "other").await,
        dump(&client, "schemalab_embed_refs_keep").await,
    );

    let report = run(&client, "", "embed").await;
    assert_eq!(report.experiments[0].variants.len(), 2);
    // A setup that reaches for `other` is refused before it runs.
    let escape = run(&client, "broken", "escape").await;
    let err = escape.experiments[0].variants[0]
        .setup_error
        .clone()
        .unwrap()
        .to_string();
    assert!(
        err.contains("getSiblingDB(…) leaves this variant's database"),
        "{err}"
    );

    let after = (
        dump(&client, "other").await,
        dump(&client, "schemalab_embed_refs_keep").await,
    );
    assert_eq!(before, after);
    assert_eq!(before.0[0].1.len(), 2);
    assert_eq!(before.0[0].2.len(), 2);
    let mut dbs = client.list_database_names().await.unwrap();
    dbs.retain(|d| !["admin", "config", "local"].contains(&d.as_str()));
    dbs.sort();
    assert_eq!(
        dbs,
        [
            "other",
            "schemalab_embed_embed",
            "schemalab_embed_refs",
            "schemalab_embed_refs_keep",
            "schemalab_escape_sneaky"
        ]
    );
}

#[tokio::test]
async fn joins_are_summed_and_multi_statement_writes_add_up() {
    let (_server, client) = server().await;
    let report = run(&client, "", "embed").await;
    let exp = &report.experiments[0];
    let op = |v: usize, id: &str| {
        exp.variants[v]
            .operations
            .iter()
            .find(|o| o.id == id)
            .unwrap()
            .clone()
    };
    // The $lookup's work is in the totals: the join reads customers, so the
    // pipeline examined more documents than its $cursor stage alone.
    let joined = op(0, "orders_with_customer");
    assert!(joined.prepare.is_some());
    let r = joined.read.as_ref().unwrap_or_else(|| panic!("{joined:?}"));
    let cursor = &r.pipeline[0];
    assert_eq!(cursor.stage, "$cursor");
    let lookup = r.pipeline.iter().find(|f| f.stage == "$lookup").unwrap();
    let joined_docs = lookup.docs_examined.unwrap();
    assert!(joined_docs > 0, "{r:?}");
    assert_eq!(
        r.docs_examined,
        cursor.docs_examined.unwrap() + joined_docs,
        "{r:?}"
    );
    assert_eq!(
        r.keys_examined,
        r.pipeline
            .iter()
            .filter_map(|f| f.keys_examined)
            .sum::<i64>()
    );
    // Bytes returned: ten orders of the first customer, each with its customer.
    assert_eq!(r.n_returned, 10);
    let bytes = r.bytes_returned.unwrap();
    let embedded = op(1, "orders_with_customer");
    let e = embedded.read.as_ref().unwrap();
    assert_eq!(e.n_returned, 1);
    assert!(bytes > 10 * 40 && e.bytes_returned.unwrap() > 0, "{bytes}");
    // The table shows the totals and names the join.
    let table = render(&report, Format::Table);
    assert!(table.contains("+ $lookup"), "{table}");
    assert!(table.contains(&format!("{}", r.docs_examined)));
    // Two measured statements: both counted, the preparation is not timed.
    let two = op(0, "two_orders");
    assert_eq!(two.write.as_ref().unwrap().n, 2, "{two:?}");
    let two = op(1, "two_orders");
    assert_eq!(two.write.as_ref().unwrap().n_modified, 2, "{two:?}");
    // The weighted rows exist (several operations with weights) and an
    // incomplete read total would leave a variant out rather than win.
    assert!(
        table.contains("per 100 requests: docs examined (weighted)"),
        "{table}"
    );
    // The expected duplicate key does not fail the variant; the lesson's
    // failing claim makes the run exit 1.
    assert!(exp.variants.iter().all(|v| v.failure.is_none()));
    assert!(op(0, "dup").expected_error);
    let status = RunStatus::of(&report);
    assert_eq!(
        status.exit_code(),
        1,
        "{}",
        status.message(schemalab::locale::Lang::En)
    );
}

#[tokio::test]
async fn a_failed_variant_is_loud_and_wins_nothing() {
    let (_server, client) = server().await;
    let report = run(&client, "", "broken").await;
    let exp = &report.experiments[0];
    let bad = &exp.variants[1];
    let failure = bad
        .failure
        .as_ref()
        .expect("the broken setup fails")
        .to_string();
    assert!(failure.starts_with("setup failed"), "{failure}");
    // The claim reading its figures fails with the reason; the other holds.
    let c = &exp.claims[0];
    assert!(!c.verdict.passed);
    assert!(
        c.verdict
            .reason
            .to_string()
            .contains("variant 'bad' failed"),
        "{}",
        c.verdict.reason
    );
    assert!(
        exp.claims[1].verdict.passed,
        "{}",
        exp.claims[1].verdict.reason
    );
    let status = RunStatus::of(&report);
    assert_eq!(
        status.exit_code(),
        2,
        "{}",
        status.message(schemalab::locale::Lang::En)
    );
    assert!(status.message(schemalab::locale::Lang::En).contains("bad"));
    for format in [Format::Table, Format::Markdown] {
        let out = render(&report, format);
        assert!(out.contains("✗ FAILED bad: setup failed"), "{out}");
        assert!(out.contains("✗ failed"), "{out}");
        // No star anywhere in the failed variant's column, nor against it
        // (the legend line names the symbol).
        assert!(
            !out.lines()
                .any(|l| l.contains('★') && !l.starts_with("★ =")),
            "{out}"
        );
    }
    let json: serde_json::Value = serde_json::from_str(&render(&report, Format::Json)).unwrap();
    assert!(
        json["experiments"][0]["variants"][1]["failure"]
            .as_str()
            .unwrap()
            .contains("setup failed")
    );
    assert!(json["experiments"][0]["variants"][0]["failure"].is_null());
}

#[tokio::test]
async fn shell_side_errors_have_a_code_name() {
    let (_server, client) = server().await;
    let report = run(&client, "", "embed").await;
    let mut exp = report.experiments[0].clone();
    // Re-evaluate `error == ""` against an operation that failed on the
    // shell side: it must not pass.
    let v = &mut exp.variants[1];
    let op = v
        .operations
        .iter_mut()
        .find(|o| o.id == "add_order")
        .unwrap();
    op.write = None;
    op.error = Some(schemalab::measure::OpError {
        code: None,
        code_name: schemalab::measure::SHELL_ERROR.into(),
        message: Message::verbatim("TypeError: x is undefined"),
        pos: None,
    });
    op.expected_error = true;
    let check = Check::parse("embed.op.add_order.error == \"\"").unwrap();
    let verdict = check.evaluate(&schemalab::course::runner::ExperimentMetrics {
        variants: &exp.variants,
    });
    assert!(!verdict.passed, "{}", verdict.reason);
}

#[test]
fn mini_course_lints_clean() {
    let errors = lint(fixture(""));
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn lint_finds_each_mistake_where_it_is() {
    let root = fixture("broken");
    let got: Vec<String> = lint(&root)
        .iter()
        .map(|e| {
            let rel = e.file.strip_prefix(&root).unwrap().display().to_string();
            format!("{rel}:{}:{}: {}", e.line, e.col, e.message)
        })
        .collect();
    let has = |prefix: &str, needle: &str| {
        assert!(
            got.iter()
                .any(|g| g.starts_with(prefix) && g.contains(needle)),
            "no {prefix} … {needle} in\n{}",
            got.join("\n")
        );
    };
    has(
        "lessons/10-bad/lesson.toml:6:11:",
        "unknown dataset 'nosuchdata'",
    );
    has("lessons/10-bad/lesson.toml:14:11:", "missing.setup.js");
    has("lessons/10-bad/a.setup.js:2:", "SyntaxError");
    has("lessons/10-bad/lesson.toml:20:22:", "SyntaxError");
    has(
        "lessons/10-bad/lesson.toml:21:12:",
        "insertOne() is not a read",
    );
    has(
        "lessons/10-bad/lesson.toml:25:28:",
        "check: expected a number",
    );
    has(
        "lessons/10-bad/lesson.toml:29:12:",
        "'zz' is not a declared variant",
    );
    has("lessons/10-bad/lesson.md:4:", "{{ }}");
    has(
        "lessons/10-bad/lesson.md:6:1:",
        "code block (js) is never closed",
    );
    has(
        "lessons/20-escape/sneaky.setup.js:2:3:",
        "getSiblingDB(…) leaves",
    );
    has("lessons/manifest.toml:14:7:", "30-missing");
    has("lessons/40-syntax/lesson.toml:3:16:", "unclosed array");
    assert_eq!(got.len(), 12, "{}", got.join("\n"));
}

struct Fixed;

impl MetricSource for Fixed {
    fn metric(&self, m: &Metric) -> Result<Val, Message> {
        match m.to_string().as_str() {
            "a.coll.r.count" => Ok(Val::Num(12000.0)),
            "b.coll.k.count" => Ok(Val::Num(60.0)),
            "a.op.q.stages" => Ok(Val::Str("FETCH<-IXSCAN".into())),
            other => Err(Message::verbatim(format!("{other} was not measured"))),
        }
    }
}

#[test]
fn claims_evaluate() {
    let pass = Check::parse("a.coll.r.count >= 100 * b.coll.k.count")
        .unwrap()
        .evaluate(&Fixed);
    assert!(pass.passed);
    assert_eq!(pass.reason.to_string(), "12000 >= 6000");
    let fail = Check::parse("a.coll.r.count / b.coll.k.count < 200")
        .unwrap()
        .evaluate(&Fixed);
    assert!(!fail.passed);
    assert_eq!(fail.reason.to_string(), "not 200 < 200");
    let s = Check::parse("a.op.q.stages == \"FETCH<-IXSCAN\"")
        .unwrap()
        .evaluate(&Fixed);
    assert!(s.passed, "{}", s.reason);
    let ord = Check::parse("a.op.q.stages < 'x'")
        .unwrap()
        .evaluate(&Fixed);
    assert!(!ord.passed && ord.reason.to_string().contains("only with == and !="));
    let missing = Check::parse("a.op.zz.millis > 1").unwrap().evaluate(&Fixed);
    assert!(!missing.passed);
    assert_eq!(
        missing.reason.to_string(),
        "a.op.zz.millis: a.op.zz.millis was not measured"
    );
    let div = Check::parse("a.coll.r.count / (b.coll.k.count - 60) > 1")
        .unwrap()
        .evaluate(&Fixed);
    assert!(!div.passed && div.reason.to_string().contains("division by zero"));
}

#[test]
fn claim_parse_errors_have_columns() {
    let cases = [
        ("a.coll.r.count", 15, "expected a comparison"),
        ("a.coll.r.count > ", 18, "expected a number"),
        ("a.coll.r.cnt > 1", 1, "unknown collection metric 'cnt'"),
        ("1 > a.op.q.speed", 5, "unknown operation metric 'speed'"),
        ("a.b > 1", 1, "is not a metric"),
        ("(1 + 2 > 3", 8, "expected ')'"),
        ("1 = 1", 3, "did you mean =="),
        ("1 > 'open", 5, "unterminated string"),
        ("1 > 2 3", 7, "unexpected text"),
        ("1 > 2 # x", 7, "unexpected character '#'"),
    ];
    for (src, col, msg) in cases {
        let e = Check::parse(src).unwrap_err();
        assert_eq!(e.col, col, "{src}: {e}");
        assert!(e.message.to_string().contains(msg), "{src}: {e}");
    }
    assert!(parse_expr("a.coll.r.count / 2").is_ok());
}

#[test]
fn placeholders_report_line_and_column() {
    let (ok, errs) = placeholders("x\n{{ 1 + }} and {{ a.coll.b.count }}\n{{ oops");
    assert_eq!(ok.len(), 1);
    assert_eq!(errs.len(), 2);
    assert_eq!((errs[0].line, errs[0].col), (2, 8));
    assert_eq!((errs[1].line, errs[1].col), (3, 1));
}

#[tokio::test]
async fn catalog_loader_loads_the_seeded_generators() {
    let (_server, client) = server().await;
    let loader = CatalogLoader {
        catalog: schemalab::datasets::Catalog::builtin().unwrap(),
    };
    loader
        .load(&client, "schemalab_t_v", "community", Scale::Tiny, 42)
        .await
        .unwrap();
    let users = client
        .database("schemalab_t_v")
        .collection::<Document>("users")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(users, 60);
    let err = loader
        .load(&client, "schemalab_t_v", "nosuch", Scale::Tiny, 42)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("nosuch"), "{err}");
}

/// The explain parser reads the engine's own explain replies (asked of the
/// engine directly, so this holds whether or not the wire routes explain).
#[tokio::test]
async fn explain_parser_reads_engine_explains() {
    use schemalab::measure::figures::parse_explain;
    let engine = Engine::new();
    let server = spawn_background(engine.clone()).unwrap();
    let client = Client::with_uri_str(server.uri()).await.unwrap();
    run(&client, "", "embed").await;
    let db = "schemalab_embed_refs";

    let find = engine
        .explain_doc(
            db,
            &doc! {"find": "orders", "filter": {"customer_id": 7}},
            "executionStats",
        )
        .unwrap();
    let (m, _) = parse_explain(&find).unwrap();
    assert_eq!(m.stages, "FETCH<-IXSCAN", "{find}");
    assert_eq!(m.index, "customer_id_1");
    assert_eq!(m.n_returned, 11);
    assert_eq!(m.keys_examined, 11);
    assert_eq!(m.ratio, 1.0);

    let scan = engine
        .explain_doc(
            db,
            &doc! {"find": "orders", "filter": {"total": 3.0}},
            "executionStats",
        )
        .unwrap();
    let (m, _) = parse_explain(&scan).unwrap();
    assert_eq!(m.stages, "COLLSCAN");
    assert_eq!(m.index, "");
    assert_eq!(m.docs_examined, 101);

    // countDocuments is explained as the pipeline the shell runs for it.
    let agg = engine
        .explain_doc(
            db,
            &doc! {"aggregate": "orders", "pipeline": [
                {"$match": {"customer_id": 7}},
                {"$group": {"_id": null, "n": {"$sum": 1}}},
            ], "cursor": {}},
            "executionStats",
        )
        .unwrap();
    let (m, _) = parse_explain(&agg).unwrap();
    // mongod plans a pipeline that reads no field as a count: COUNT_SCAN.
    assert_eq!(m.stages, "COUNT_SCAN", "{agg}");
    assert_eq!(m.index, "customer_id_1");
    assert_eq!(m.docs_examined, 0);
    assert_eq!(m.keys_examined, 11);
    assert_eq!(m.n_returned, 1, "{agg}");
}

/// Issue 13: the report keeps the raw explain each read was measured
/// with, so a plan view shows exactly what was measured: parsing that
/// stored explain gives back the report's own figures, for a find and for
/// a pipeline with a join. The JSON report carries it too, and the sample
/// documents read when the collections were measured.
#[tokio::test]
async fn the_report_keeps_the_explain_each_read_was_measured_with() {
    let (_server, client) = server().await;
    let report = run(&client, "", "embed").await;
    let exp = &report.experiments[0];
    let mut reads = 0;
    for v in &exp.variants {
        for op in v.operations.iter().filter(|o| o.kind == OpKind::Read) {
            let Some(m) = &op.read else { continue };
            let explain = m
                .explain
                .as_ref()
                .unwrap_or_else(|| panic!("{}/{}: no stored explain", v.id, op.id));
            let (again, _) = schemalab::measure::figures::parse_explain(explain).unwrap();
            assert_eq!(
                (
                    again.n_returned,
                    again.keys_examined,
                    again.docs_examined,
                    &again.stages,
                    &again.index,
                    &again.pipeline
                ),
                (
                    m.n_returned,
                    m.keys_examined,
                    m.docs_examined,
                    &m.stages,
                    &m.index,
                    &m.pipeline
                ),
                "{}/{}",
                v.id,
                op.id
            );
            reads += 1;
        }
        for c in &v.collections {
            let sample = v
                .samples
                .iter()
                .find(|s| s.collection == c.name)
                .unwrap_or_else(|| panic!("{}: no sample of {}", v.id, c.name));
            assert_eq!(
                sample.documents.len() as i64,
                c.count
                    .min(schemalab::course::runner::SAMPLES_PER_COLLECTION)
            );
        }
    }
    assert!(reads >= 2, "{reads}");
    let json: serde_json::Value = serde_json::from_str(&render(&report, Format::Json)).unwrap();
    let first = &json["experiments"][0]["variants"][0];
    let read = first["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "read")
        .unwrap();
    assert!(
        read["read"]["explain"]["executionStats"].is_object()
            || read["read"]["explain"]["stages"].is_array(),
        "{read}"
    );
    assert!(first["samples"][0]["documents"].is_array(), "{first}");
}

/// `explain` of a command document, parsed as the wire layer parses it.
trait ExplainDoc {
    fn explain_doc(
        &self,
        db: &str,
        command: &Document,
        verbosity: &str,
    ) -> schemalab_engine::Result<Document>;
}

impl ExplainDoc for Engine {
    fn explain_doc(
        &self,
        db: &str,
        command: &Document,
        verbosity: &str,
    ) -> schemalab_engine::Result<Document> {
        schemalab_wire::cmd::explain::explain_document(self, db, command, verbosity)
    }
}

// ----- one load per dataset and seed, copied to the other variants -----

/// A loader that records every load it is asked for, then does what
/// `inner` does (and, with `index`, adds an index a copy must not drop).
struct Recording<'a> {
    inner: &'a (dyn DatasetLoader + 'a),
    loads: std::sync::Mutex<Vec<String>>,
    index: bool,
}

impl<'a> Recording<'a> {
    fn new(inner: &'a (dyn DatasetLoader + 'a)) -> Self {
        Recording {
            inner,
            loads: std::sync::Mutex::new(Vec::new()),
            index: false,
        }
    }

    fn loads(&self) -> Vec<String> {
        std::mem::take(&mut *self.loads.lock().unwrap())
    }
}

impl DatasetLoader for Recording<'_> {
    fn load<'b>(
        &'b self,
        client: &'b Client,
        db: &'b str,
        dataset: &'b str,
        scale: Scale,
        seed: u64,
    ) -> BoxFuture<'b, Result<(), Message>> {
        self.loads.lock().unwrap().push(db.to_string());
        Box::pin(async move {
            self.inner.load(client, db, dataset, scale, seed).await?;
            if self.index {
                let d = client.database(db);
                let mut names = d.list_collection_names().await.unwrap();
                names.sort();
                let first = names.remove(0);
                d.collection::<Document>(&first)
                    .create_index(mongodb::IndexModel::builder().keys(doc! {"x": 1}).build())
                    .await
                    .map_err(Message::verbatim)?;
            }
            Ok(())
        })
    }
}

/// A course of one lesson with four experiments and no setup scripts, so
/// each variant's database is exactly what preparing it loaded: community
/// (three variants), sensors with no readings (an empty collection, two
/// variants), community again with the same seed (one variant, a copy of
/// the first experiment's load) and with another seed (one variant, a
/// load of its own); from the built-in catalog with the one edit.
fn copy_course() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let lessons = dir.path().join("lessons");
    std::fs::create_dir_all(lessons.join("10-copies")).unwrap();
    std::fs::create_dir_all(dir.path().join("datasets")).unwrap();
    std::fs::write(
        lessons.join("manifest.toml"),
        "format_version = 1\ntitle = \"Copies\"\n\n[[lessons]]\nid = \"copies\"\ndir = \"10-copies\"\n",
    )
    .unwrap();
    let mut lesson = String::from("title = \"Copies\"\n");
    for (exp, dataset, seed, coll, variants) in [
        (
            "talk",
            "community",
            5,
            "users",
            &["one", "two", "three"][..],
        ),
        ("meters", "sensors", 5, "sensors", &["four", "five"][..]),
        ("again", "community", 5, "posts", &["six"][..]),
        ("reseeded", "community", 6, "posts", &["seven"][..]),
    ] {
        lesson +=
            &format!("\n[[experiments]]\nid = \"{exp}\"\ndataset = \"{dataset}\"\nseed = {seed}\n");
        for v in variants {
            lesson += &format!("\n  [[experiments.variants]]\n  id = \"{v}\"\n");
        }
        lesson += "\n  [[experiments.operations]]\n  id = \"all\"\n  kind = \"read\"\n  [experiments.operations.run]\n";
        for v in variants {
            lesson += &format!("  {v} = \"db.{coll}.find({{}})\"\n");
        }
    }
    std::fs::write(lessons.join("10-copies/lesson.toml"), lesson).unwrap();
    let catalog = schemalab::datasets::BUILTIN_CATALOG.replacen("minutes = 240", "minutes = 0", 1);
    assert_ne!(catalog, schemalab::datasets::BUILTIN_CATALOG);
    std::fs::write(dir.path().join("datasets/catalog.toml"), catalog).unwrap();
    dir
}

/// Everything a reader can see of a database, as bytes where the server
/// gives bytes: each collection's listCollections entry (its uuid aside),
/// its documents in natural order, its index specs, and its measured
/// figures.
type DbState = Vec<(Document, Vec<Vec<u8>>, Vec<Document>)>;

async fn db_state(client: &Client, db: &str) -> (DbState, Vec<schemalab::course::CollStats>) {
    let d = client.database(db);
    let mut specs: Vec<Document> = d
        .run_cursor_command(doc! {"listCollections": 1})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    specs.sort_by_key(|s| s.get_str("name").unwrap().to_string());
    let mut out = Vec::new();
    for mut spec in specs {
        spec.remove("info");
        let name = spec.get_str("name").unwrap().to_string();
        let docs: Vec<bson::RawDocumentBuf> = d
            .collection::<bson::RawDocumentBuf>(&name)
            .find(doc! {})
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        let indexes: Vec<Document> = d
            .run_cursor_command(doc! {"listIndexes": &name})
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        out.push((
            spec,
            docs.iter().map(|r| r.as_bytes().to_vec()).collect(),
            indexes,
        ));
    }
    let stats = schemalab::measure::figures::measure_db(client, db)
        .await
        .unwrap();
    (out, stats)
}

/// Preparing a lesson loads each dataset once per seed, whichever
/// experiments use it; every other variant's database, copied on the
/// server, is indistinguishable from a fresh load: the same collections (the empty one too) with the same
/// options, every document byte for byte in the same natural order, only
/// the `_id` index, the same measured sizes.
#[tokio::test]
async fn copied_variant_databases_are_identical_to_fresh_loads() {
    let (_server, client) = server().await;
    let dir = copy_course();
    let catalog = CatalogLoader::for_course(dir.path()).unwrap();
    let loader = Recording::new(&catalog);
    let course = Course::load(dir.path(), schemalab::locale::Lang::En).unwrap();
    let lesson = course.lesson("copies").unwrap();
    let opts = RunOptions {
        names: Default::default(),
        scale: Scale::Tiny,
        loader: &loader,
        cancel: CancelFlag::new(),
        progress: None,
    };
    let prepared = prepare_lesson(&client, &lesson, None, &opts).await.unwrap();
    let loads = [
        "schemalab_copies_one",
        "schemalab_copies_four",
        "schemalab_copies_seven",
    ];
    assert_eq!(loader.loads(), loads);
    for (dataset, seed, fresh, variants) in [
        (
            "community",
            5,
            "schemalab_fresh_talk",
            &["one", "two", "three", "six"][..],
        ),
        (
            "sensors",
            5,
            "schemalab_fresh_meters",
            &["four", "five"][..],
        ),
        ("community", 6, "schemalab_fresh_reseeded", &["seven"][..]),
    ] {
        schemalab::datasets::load_with(
            &catalog.catalog,
            &client,
            fresh,
            dataset,
            schemalab::datasets::Scale::Tiny,
            seed,
            |_| {},
        )
        .await
        .unwrap();
        let want = db_state(&client, fresh).await;
        assert!(want.0.iter().all(|(_, _, idx)| idx.len() == 1));
        assert!(want.0.iter().any(|(_, docs, _)| !docs.is_empty()));
        if dataset == "sensors" {
            let readings = want
                .0
                .iter()
                .find(|(s, _, _)| s.get_str("name") == Ok("readings"));
            assert!(readings.unwrap().1.is_empty(), "readings is there, empty");
        }
        for v in variants {
            let db = format!("schemalab_copies_{v}");
            assert!(
                prepared
                    .variants
                    .iter()
                    .any(|p| p.database == db && p.load_error.is_none())
            );
            assert_eq!(db_state(&client, &db).await, want, "{db}");
        }
    }

    // A whole run does the same, and its variants measure alike.
    let report = run_lesson(&client, &lesson, &opts).await.unwrap();
    assert_eq!(loader.loads(), loads);
    for exp in &report.experiments {
        let first = &exp.variants[0];
        assert!(first.failure.is_none(), "{:?}", first.failure);
        for v in &exp.variants[1..] {
            assert_eq!(v.failure, None);
            assert_eq!(v.collections, first.collections, "{}", v.id);
            assert_eq!(v.samples, first.samples, "{}", v.id);
            assert_eq!(
                v.operations[0].read.as_ref().map(|r| r.n_returned),
                first.operations[0].read.as_ref().map(|r| r.n_returned)
            );
        }
    }
}

/// When the first load fails every variant tries its own load and reports
/// the failure; when the loaded database holds what a copy would not
/// reproduce (an index), every variant loads its own.
#[tokio::test]
async fn variants_load_on_their_own_when_the_first_load_cannot_be_copied() {
    let (_server, client) = server().await;
    let dir = copy_course();
    let course = Course::load(dir.path(), schemalab::locale::Lang::En).unwrap();
    let lesson = course.lesson("copies").unwrap();
    let all = [
        "schemalab_copies_one",
        "schemalab_copies_two",
        "schemalab_copies_three",
        "schemalab_copies_four",
        "schemalab_copies_five",
        "schemalab_copies_six",
        "schemalab_copies_seven",
    ];

    let failing = Recording::new(&Shop);
    let opts = RunOptions {
        names: Default::default(),
        scale: Scale::Tiny,
        loader: &failing,
        cancel: CancelFlag::new(),
        progress: None,
    };
    let prepared = prepare_lesson(&client, &lesson, None, &opts).await.unwrap();
    assert_eq!(failing.loads(), all);
    for p in &prepared.variants {
        let e = p
            .load_error
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(e.contains("unknown dataset"), "{}: {e}", p.database);
    }

    let catalog = CatalogLoader::for_course(dir.path()).unwrap();
    let mut indexing = Recording::new(&catalog);
    indexing.index = true;
    let opts = RunOptions {
        names: Default::default(),
        loader: &indexing,
        ..opts
    };
    let prepared = prepare_lesson(&client, &lesson, None, &opts).await.unwrap();
    assert_eq!(indexing.loads(), all);
    for p in &prepared.variants {
        assert_eq!(p.load_error, None);
        let (state, _) = db_state(&client, &p.database).await;
        assert_eq!(state[0].2.len(), 2, "{}: the loader's index", p.database);
    }
}

/// At every scale, large included, an experiment's dataset is loaded once
/// and copied to its other variants (the engine copies a lone `$out`'s
/// stored records as they are).
#[tokio::test]
async fn every_scale_loads_once_per_experiment() {
    let (_server, client) = server().await;
    let course = Course::load(fixture(""), schemalab::locale::Lang::En).unwrap();
    let lesson = course.lesson("embed").unwrap();
    for (scale, want) in [
        (Scale::Tiny, &["schemalab_embed_refs"][..]),
        (Scale::Default, &["schemalab_embed_refs"][..]),
        (Scale::Large, &["schemalab_embed_refs"][..]),
    ] {
        let loader = Recording::new(&Shop);
        let opts = RunOptions {
            names: Default::default(),
            scale,
            loader: &loader,
            cancel: CancelFlag::new(),
            progress: None,
        };
        let prepared = prepare_lesson(&client, &lesson, None, &opts).await.unwrap();
        assert_eq!(loader.loads(), want, "{scale:?}");
        assert!(prepared.variants.iter().all(|v| v.load_error.is_none()));
    }
}
