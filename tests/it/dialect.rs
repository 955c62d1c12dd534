//! Tests for the mongosh dialect: parser, printer, server-free evaluation,
//! a no-panic property test, and manual-derived fixtures run against the
//! embedded engine through the wire server.

use bson::{Bson, doc};
use proptest::prelude::*;
use schemalab::dialect::{
    DialectError, Output, Pos, Session, Value, WritePolicy, parse_program, print, render,
};
use schemalab::locale::Lang;

#[path = "dialect/fixtures.rs"]
mod dialect_fixtures;

fn parse_err(src: &str) -> DialectError {
    parse_program(src).expect_err(src)
}

// ----- the language -----

/// What the old hand-written subset refused is ordinary JavaScript now.
#[tokio::test]
async fn javascript_a_mongosh_user_writes_runs() {
    let mut s = offline().await;
    for (src, shown) in [
        ("let x = 2; if (x > 1) { 'big' } else { 'small' }", "big"),
        ("[1, 2, 3].map(d => d * 2).filter(d => d > 2)", "[ 4, 6 ]"),
        (
            "const { a, ...rest } = { a: 1, b: 2, c: 3 }; rest",
            "{ b: 2, c: 3 }",
        ),
        ("`x ${1 + 1}`", "x 2"),
        ("({ ...{ a: 1 }, b: 2 })", "{ a: 1, b: 2 }"),
        ("[1].concat([2], 3)", "[ 1, 2, 3 ]"),
        ("let n = 0; while (n < 5) n++; n", "5"),
        ("try { null.x } catch (e) { e.name }", "TypeError"),
        (
            "class P { constructor(n) { this.n = n } get twice() { return this.n * 2 } }; new P(4).twice",
            "8",
        ),
        ("function* g() { yield 1; yield 2 } [...g()]", "[ 1, 2 ]"),
        (
            "new Date(Date.UTC(2024, 0, 2)).toISOString()",
            "2024-01-02T00:00:00.000Z",
        ),
        ("z = 1; z === 1 ? 'yes' : 'no'", "yes"),
    ] {
        let out = s.eval(src).await.unwrap_or_else(|e| panic!("{src}: {e}"));
        assert_eq!(texts(&out).join("\n"), shown, "{src}");
    }
}

/// mongosh's shell commands: `use` any name mongod takes (hyphens, unicode),
/// `use x; more` on one line, and `use` stays an ordinary name elsewhere.
#[tokio::test]
async fn use_accepts_hyphenated_and_other_mongod_names() {
    let mut s = offline().await;
    for (src, name) in [
        (
            "use schemalab_one-to-few_embedded",
            "schemalab_one-to-few_embedded",
        ),
        (
            "use schemalab_one-to-few_embedded;",
            "schemalab_one-to-few_embedded",
        ),
        ("  use\tmy-db  // a note", "my-db"),
        ("use 2024-reports", "2024-reports"),
        ("use données", "données"),
        ("use a+b@c", "a+b@c"),
    ] {
        s.eval(src).await.unwrap_or_else(|e| panic!("{src}: {e}"));
        assert_eq!(s.db_name(), name, "{src}");
    }
    let out = s
        .eval("use one-to-few; db.getName()\nuse two-a")
        .await
        .unwrap();
    assert_eq!(
        texts(&out),
        ["switched to db one-to-few", "switched to db two-a"]
    );
    let out = s.eval("const use = 1\nuse").await.unwrap();
    assert_eq!(texts(&out), ["1"]);
}

/// A name mongod refuses is refused at `use` (and `getSiblingDB`) with the
/// error mongod gives for a command sent there.
#[tokio::test]
async fn use_refuses_names_mongod_refuses() {
    let mut s = offline().await;
    let long = "x".repeat(64);
    for (src, name) in [
        ("use a.b", "a.b"),
        ("use a/b", "a/b"),
        ("use a\\b", "a\\b"),
        ("use a$b", "a$b"),
        (&format!("use {long}") as &str, long.as_str()),
    ] {
        let e = s.eval(src).await.expect_err(src);
        assert_eq!(
            e.to_string(),
            format!("MongoServerError[InvalidNamespace]: Invalid database name: '{name}'"),
            "{src}"
        );
        assert_eq!(e.position().map(|p| p.line), Some(1), "{src}");
    }
    // 63 bytes is the longest name mongod takes.
    s.eval(&format!("use {}", "x".repeat(63))).await.unwrap();
}

/// Every database the course's runner creates can be reached with `use`.
#[tokio::test]
async fn use_reaches_every_lesson_variant_database() {
    let course = schemalab::course::Course::load(env!("CARGO_MANIFEST_DIR"), Lang::En).unwrap();
    let mut s = offline().await;
    let mut hyphenated = 0;
    for lesson in course.lessons().unwrap() {
        for exp in &lesson.experiments {
            for v in &exp.variants {
                let db = schemalab::course::DbNames::default().lesson(&lesson.id, v.id.get_ref());
                hyphenated += usize::from(db.contains('-'));
                s.eval(&format!("use {db}"))
                    .await
                    .unwrap_or_else(|e| panic!("use {db}: {e}"));
                assert_eq!(s.db_name(), db);
                assert!(schemalab::dialect::is_valid_db_name(&db), "{db}");
            }
        }
    }
    assert!(hyphenated > 0);
}

#[tokio::test]
async fn use_and_get_sibling_db_switch_to_hyphenated_names() {
    let mut s = offline().await;
    let out = each(&mut s, "use schemalab_one-to-few_embedded\ndb.getName()\nuse schemalab_one-to-few_embedded\ndb.getSiblingDB('schemalab_one-to-many_x').getName()").await;
    assert_eq!(
        out,
        [
            "switched to db schemalab_one-to-few_embedded",
            "schemalab_one-to-few_embedded",
            "already on db schemalab_one-to-few_embedded",
            "schemalab_one-to-many_x"
        ]
    );
    let e = s.eval("db.getSiblingDB('a.b').c.find()").await.unwrap_err();
    assert_eq!(
        e.line(Lang::En),
        "MongoServerError[InvalidNamespace]: Invalid database name: 'a.b' (1:3)"
    );
    assert_eq!(s.db_name(), "schemalab_one-to-few_embedded");
}

#[test]
fn syntax_errors_have_positions_and_carets() {
    let src = "db.c.find({ a: 1 )";
    let e = parse_err(src);
    assert!(matches!(e, DialectError::Syntax { .. }), "{e:?}");
    let pos = e.position().expect("a place");
    assert_eq!(pos.line, 1);
    let caret = " ".repeat(pos.col as usize - 1);
    assert_eq!(e.render(src), format!("{e}\n{src}\n{caret}^"));
    let e = parse_err("db.c.find()\n  db.c.find() db.d");
    assert_eq!(e.position().map(|p| p.line), Some(2));
    let e = parse_err("x = 'abc");
    assert!(e.to_string().starts_with("SyntaxError: "), "{e}");
}

// ----- printer -----

#[test]
fn prints_like_mongosh() {
    let oid = bson::oid::ObjectId::parse_str("65a1b2c3d4e5f60718293a4b").unwrap();
    let d =
        doc! { "_id": oid, "name": "Ada", "n": 1, "x": 2.5, "big": 9_000_000_000i64, "$k": "it's" };
    assert_eq!(
        print::inspect_doc(&d),
        "{\n  _id: ObjectId('65a1b2c3d4e5f60718293a4b'),\n  name: 'Ada',\n  n: 1,\n  x: 2.5,\n  big: Long('9000000000'),\n  '$k': \"it's\"\n}"
    );
    assert_eq!(
        print::inspect_doc(&doc! { "a": 1, "b": "x" }),
        "{ a: 1, b: 'x' }"
    );
    let date = bson::DateTime::from_millis(1_700_000_000_123);
    assert_eq!(
        print::inspect(&Bson::DateTime(date)),
        "ISODate('2023-11-14T22:13:20.123Z')"
    );
    assert_eq!(
        print::inspect(&Bson::Timestamp(bson::Timestamp {
            time: 5,
            increment: 1
        })),
        "Timestamp({ t: 5, i: 1 })"
    );
    assert_eq!(
        print::inspect(&Bson::Decimal128("1.50".parse().unwrap())),
        "Decimal128('1.50')"
    );
    assert_eq!(print::inspect_doc(&doc! {}), "{}");
    assert_eq!(print::inspect(&Bson::Array(vec![])), "[]");
    assert_eq!(print::format_number(1e21), "1e+21");
    assert_eq!(print::format_number(-0.0), "-0");
    assert_eq!(print::format_number(0.1 + 0.2), "0.30000000000000004");
}

#[test]
fn update_result_wraps_like_mongosh() {
    let r = doc! { "acknowledged": true, "insertedId": Bson::Null, "matchedCount": 1, "modifiedCount": 1, "upsertedCount": 0 };
    assert_eq!(
        print::inspect_doc(&r),
        "{\n  acknowledged: true,\n  insertedId: null,\n  matchedCount: 1,\n  modifiedCount: 1,\n  upsertedCount: 0\n}"
    );
    let r = doc! { "acknowledged": true, "deletedCount": 2 };
    assert_eq!(
        print::inspect_doc(&r),
        "{ acknowledged: true, deletedCount: 2 }"
    );
}

#[test]
fn long_arrays_group_in_columns() {
    // Node pads numbers to the column width (padStart), hence "4,  5".
    let a = Bson::Array((1..=10).map(Bson::Int32).collect());
    assert_eq!(
        print::inspect(&a),
        "[\n  1, 2, 3, 4,  5,\n  6, 7, 8, 9, 10\n]"
    );
    let short = Bson::Array((1..=3).map(Bson::Int32).collect());
    assert_eq!(print::inspect(&short), "[ 1, 2, 3 ]");
}

#[test]
fn nested_documents_break_by_depth() {
    let d = doc! { "a": { "b": { "c": { "d": 1 } } } };
    assert_eq!(print::inspect_doc(&d), "{\n  a: { b: { c: { d: 1 } } }\n}");
    let deep =
        doc! { "l1": { "l2": { "l3": { "l4": { "l5": { "l6": { "l7": { "x": 1 } } } } } } } };
    assert!(
        print::inspect_doc(&deep).contains("l6: { l7: [Object] }"),
        "{}",
        print::inspect_doc(&deep)
    );
    let d = doc! { "size": { "h": 14, "w": 21, "uom": "cm" } };
    assert_eq!(
        print::inspect_doc(&d),
        "{ size: { h: 14, w: 21, uom: 'cm' } }"
    );
}

// ----- evaluation without a server -----

/// A session whose client never connects: driver clients are lazy, so
/// statements that do not touch the database run without a server.
async fn offline() -> Session {
    Session::connect(
        &crate::support::client("mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=200").await,
        "test",
    )
    .unwrap()
}

fn texts(outs: &[Output]) -> Vec<String> {
    outs.iter().map(Output::render).collect()
}

/// Run `src` a line at a time, as typed at mongosh's prompt (each line's
/// value is shown), and collect what was shown.
async fn each(s: &mut Session, src: &str) -> Vec<String> {
    let mut shown = Vec::new();
    for line in src.lines() {
        let out = s.eval(line).await.unwrap_or_else(|e| panic!("{line}: {e}"));
        shown.extend(texts(&out));
    }
    shown
}

#[tokio::test]
async fn evaluates_values_bindings_and_loops() {
    let mut s = offline().await;
    let out = each(
        &mut s,
        "const xs = [1, 2, 3]\nlet total = 0\nfor (const x of xs) { total = total + x * 2 }\ntotal\n'a' + 1\n7 % 4;\n-xs[2]\nxs.length",
    )
    .await;
    assert_eq!(out, ["12", "12", "a1", "3", "-3", "3"]);
    let out = s
        .eval("print('n =', 5, { a: 1 }); printjson({ b: [true, null] })")
        .await
        .unwrap();
    // As mongosh 2.12 prints them: `print` in the compact REPL form,
    // `printjson` with every non-empty object and array expanded.
    assert_eq!(
        texts(&out),
        ["n = 5 { a: 1 }", "{\n  b: [\n    true,\n    null\n  ]\n}"]
    );
    let out = s
        .eval("printjson('bare'); printjson({ e: {}, ea: [] })")
        .await
        .unwrap();
    assert_eq!(texts(&out), ["bare", "{\n  e: {},\n  ea: []\n}"]);
}

#[tokio::test]
async fn evaluates_bson_helpers() {
    let mut s = offline().await;
    let out = each(
            &mut s,
            "ObjectId('65a1b2c3d4e5f60718293a4b')\nISODate('2024-01-02')\nnew Date(0)\nNumberLong(5)\nNumberInt('7')\nNumberDecimal('0.1')\nUUID('0123456789abcdef0123456789abcdef')\nTimestamp({ t: 1, i: 2 })\nMinKey\nbsonsize({ a: 1 })\nnew Date('2024-01-02T00:00:00Z') - new Date('2024-01-01T00:00:00Z')\nISODate('2024-03-01T10:00:00+02:00').toISOString()",
        )
        .await;
    assert_eq!(
        out,
        [
            "ObjectId('65a1b2c3d4e5f60718293a4b')",
            "ISODate('2024-01-02T00:00:00.000Z')",
            "ISODate('1970-01-01T00:00:00.000Z')",
            "Long('5')",
            "7",
            "Decimal128('0.1')",
            "UUID('01234567-89ab-cdef-0123-456789abcdef')",
            "Timestamp({ t: 1, i: 2 })",
            "MinKey()",
            "12",
            "86400000",
            "2024-03-01T08:00:00.000Z",
        ]
    );
    assert_eq!(
        s.eval("new Date(2024, 0, 31)").await.unwrap()[0].render(),
        "ISODate('2024-01-31T00:00:00.000Z')"
    );
}

#[tokio::test]
async fn runtime_errors_suggest_and_point() {
    let mut s = offline().await;
    let e = s.eval("db.c.updateOn({}, {})").await.unwrap_err();
    assert!(e.to_string().starts_with("TypeError: "), "{e}");
    assert_eq!(e.position().map(|p| p.line), Some(1));
    let e = s.eval("prnt(1)").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "ReferenceError: prnt is not defined (did you mean print?)"
    );
    let e = s.eval("const k = 1\nk = 2").await.unwrap_err();
    assert_eq!(e.position().map(|p| p.line), Some(2));
    let e = s.eval("ObjectId('xyz')").await.unwrap_err();
    assert!(e.position().is_some());
    // Update shape is checked before any I/O.
    let e = s.eval("db.c.updateOne({}, { a: 1 })").await.unwrap_err();
    assert!(e.to_string().contains("requires atomic operators"), "{e}");
}

#[tokio::test]
async fn render_of_handles() {
    let mut s = offline().await;
    let out = each(
        &mut s,
        "db\ndb.getSiblingDB('other').users\nuse shop\ndb.getName()",
    )
    .await;
    assert_eq!(out, ["test", "other.users", "switched to db shop", "shop"]);
    assert_eq!(render(&Value::Bson(Bson::String("plain".into()))), "plain");
}

// ----- property test: never panic, errors always positioned -----

const SOUP: &[&str] = &[
    "db",
    ".",
    "c",
    "find",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    ";",
    "\n",
    "'s'",
    "\"t\"",
    "1",
    "-2.5",
    "0x1f",
    "1e3",
    "/re/i",
    "/",
    "*",
    "+",
    "-",
    "%",
    "const",
    "let",
    "x",
    "=",
    "for",
    "of",
    "new",
    "Date",
    "show",
    "use",
    "it",
    "$set",
    "true",
    "null",
    "undefined",
    "//c\n",
    "/*c*/",
    "=>",
    "===",
    "...",
    "`",
    "'",
    "\\",
    "ObjectId",
    "print",
    "?.",
    "!",
    "if",
    "function",
];

const VALID: &[&str] = &[
    "db.inventory.find({ qty: { $lt: 30 } }).sort({ item: 1 }).limit(2)",
    "db.c.updateOne({ _id: 1 }, { $set: { 'size.uom': 'in' } }, { upsert: true })",
    "const d = new Date(Date.now() - 86400000)\nfor (const x of [1, 2]) { print(x) }",
    "db.orders.aggregate([{ $group: { _id: '$cust', total: { $sum: '$amount' } } }])",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn token_soup_never_panics(parts in proptest::collection::vec(proptest::sample::select(SOUP), 0..40)) {
        let src = parts.join(" ");
        if let Err(e) = parse_program(&src) {
            prop_assert!(e.position().is_some(), "no position for {src:?}: {e}");
            let _ = e.render(&src);
        }
    }

    #[test]
    fn mutated_statements_never_panic(
        which in 0..VALID.len(),
        cut in 0usize..200,
        insert in proptest::sample::select(SOUP),
        drop_len in 0usize..4,
    ) {
        let base: Vec<char> = VALID[which].chars().collect();
        let at = cut.min(base.len());
        let end = (at + drop_len).min(base.len());
        let mut src: String = base[..at].iter().collect();
        src.push_str(insert);
        src.extend(base[end..].iter());
        if let Err(e) = parse_program(&src) {
            let pos = e.position();
            prop_assert!(pos.is_some(), "no position for {src:?}: {e}");
            let pos = pos.unwrap();
            prop_assert!(pos.line >= 1 && pos.col >= 1);
            let _ = e.render(&src);
        }
    }

    #[test]
    fn arbitrary_text_never_panics(src in "\\PC{0,60}") {
        if let Err(e) = parse_program(&src) {
            prop_assert!(e.position().is_some());
        }
    }
}

// ----- manual fixtures -----

#[test]
fn fixtures_all_parse_and_are_enough() {
    let cases = dialect_fixtures::cases();
    assert!(cases.len() >= 60, "only {} fixture statements", cases.len());
    for c in &cases {
        parse_program(&c.src).unwrap_or_else(|e| panic!("{}: {}", c.name, e.render(&c.src)));
    }
    // Every known failure names a real case and gives a reason.
    for (name, reason) in dialect_fixtures::KNOWN_FAILING {
        assert!(cases.iter().any(|c| c.name == *name), "unknown case {name}");
        assert!(!reason.is_empty());
    }
}

async fn engine_session(db: &str) -> (schemalab_wire::ServerHandle, Session) {
    let engine = schemalab_engine::Engine::new();
    let server = schemalab_wire::serve("127.0.0.1:0".parse().unwrap(), engine)
        .await
        .unwrap();
    let session = Session::connect(&crate::support::client(&server.uri()).await, db).unwrap();
    (server, session)
}

/// Runs the manual-derived fixtures against the embedded engine over the
/// wire, in order, in one session.
#[tokio::test]
async fn fixtures_against_embedded_engine() {
    let (_server, mut session) = engine_session("manual").await;
    let mut failures = Vec::new();
    let mut unexpected_passes = Vec::new();
    for case in dialect_fixtures::cases() {
        let got = match session.eval(&case.src).await {
            Ok(outs) => texts(&outs)
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
            Err(e) => format!("ERROR {e}"),
        };
        let ok = got == case.expect;
        let known = dialect_fixtures::KNOWN_FAILING
            .iter()
            .any(|(n, _)| *n == case.name);
        match (ok, known) {
            (false, false) => failures.push(format!(
                "--- {}\n{}\nexpected:\n{}\ngot:\n{}",
                case.name, case.src, case.expect, got
            )),
            (true, true) => unexpected_passes.push(case.name),
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        unexpected_passes.is_empty(),
        "now passing, remove from KNOWN_FAILING: {unexpected_passes:?}"
    );
}

#[tokio::test]
async fn cursor_pages_in_batches_of_twenty() {
    let (_server, mut s) = engine_session("paging").await;
    let ids: Vec<String> = (1..=25).map(|i| i.to_string()).collect();
    s.eval(&format!(
        "for (const i of [{}]) {{ db.many.insertOne({{ _id: i }}) }}",
        ids.join(", ")
    ))
    .await
    .unwrap();
    let out = s.eval("db.many.find().sort({ _id: 1 })").await.unwrap();
    let [
        Output::Batch {
            docs,
            has_more: true,
        },
    ] = out.as_slice()
    else {
        panic!("{out:?}")
    };
    assert_eq!(docs.len(), 20);
    assert!(out[0].render().ends_with("Type \"it\" for more"));
    let out = s.eval("it").await.unwrap();
    let [
        Output::Batch {
            docs,
            has_more: false,
        },
    ] = out.as_slice()
    else {
        panic!("{out:?}")
    };
    assert_eq!(
        docs.iter()
            .map(|d| d.get_i32("_id").unwrap())
            .collect::<Vec<_>>(),
        [21, 22, 23, 24, 25]
    );
    assert_eq!(texts(&s.eval("it").await.unwrap()), ["no cursor"]);
    // Exactly 20 results: no "it" prompt.
    let out = s.eval("db.many.find().limit(20)").await.unwrap();
    assert!(matches!(
        &out[0],
        Output::Batch {
            has_more: false,
            ..
        }
    ));
}

#[tokio::test]
async fn server_errors_and_partial_output() {
    let (_server, mut s) = engine_session("errs").await;
    let (out, res) = s
        .eval_partial("print('before')\ndb.runCommand({ nosuchcommand: 1 })\nprint('after')")
        .await;
    assert_eq!(texts(&out), ["before"]);
    let e = res.unwrap_err();
    assert!(
        matches!(e, DialectError::Server { ref code_name, .. } if code_name == "CommandNotFound"),
        "{e:?}"
    );
    let e = s
        .eval("db.c.insertMany([{ _id: 1 }, { _id: 1 }])")
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("MongoBulkWriteError: E11000 duplicate key error"),
        "{e}"
    );
    let out = s.eval("db.c.insertOne({ a: 1 }).insertedId").await.unwrap();
    assert!(out[0].render().starts_with("ObjectId('"), "{out:?}");
}

#[tokio::test]
async fn run_file_stops_at_first_error() {
    let server = schemalab_wire::serve(
        "127.0.0.1:0".parse().unwrap(),
        schemalab_engine::Engine::new(),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.js");
    std::fs::write(
        &good,
        "db.c.insertOne({ _id: 1 })\nprint(db.c.countDocuments())\n",
    )
    .unwrap();
    let client = crate::support::client(&server.uri()).await;
    let run = |path| {
        schemalab::dialect::run_file(&client, "files", path, WritePolicy::Unrestricted, Lang::En)
    };
    run(&good).await.unwrap();
    let bad = dir.path().join("bad.js");
    std::fs::write(&bad, "db.c.insertOne({ _id: 2 })\ndb.c.find({ a: 1 )\n").unwrap();
    let e = run(&bad).await.unwrap_err();
    assert_eq!(e.position(), Some(Pos { line: 2, col: 18 }));
    let missing = run(&dir.path().join("nope.js")).await;
    assert!(matches!(missing, Err(DialectError::Io(_))));
}

/// Mutated valid statements evaluated against the engine: whatever they
/// do, evaluation returns (no panic), and syntax-level errors carry a spot.
#[tokio::test]
async fn mutated_statements_evaluate_without_panic() {
    use rand::{Rng, SeedableRng};
    let (_server, mut s) = engine_session("fuzz").await;
    s.eval(
        "db.inventory.insertMany([{ _id: 1, qty: 5, item: 'a' }, { _id: 2, qty: 50, item: 'b' }])",
    )
    .await
    .unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let bases = [
        VALID[0],
        VALID[1],
        VALID[3],
        "db.inventory.findOneAndUpdate({ _id: 2 }, { $inc: { qty: 1 } }, { returnDocument: 'after' })",
        "const n = db.inventory.countDocuments({ qty: { $gt: 1 } }); print(n * 2)",
        "db.inventory.bulkWrite([{ deleteOne: { filter: { _id: 9 } } }])",
        "db.inventory.createIndex({ qty: -1 }, { name: 'q' })",
    ];
    for seed in 0..150 {
        let base: Vec<char> = bases[seed % bases.len()].chars().collect();
        let at = rng.random_range(0..=base.len());
        let end = (at + rng.random_range(0..4)).min(base.len());
        let insert = SOUP[rng.random_range(0..SOUP.len())];
        let mut src: String = base[..at].iter().collect();
        src.push_str(insert);
        src.extend(base[end..].iter());
        let (_, res) = s.eval_partial(&src).await;
        if let Err(e @ DialectError::Syntax { .. }) = res {
            assert!(e.position().is_some(), "seed {seed}: {src:?}: {e}");
        }
    }
}

/// mongosh runs an aggregate ending in `$out`/`$merge` at once, even as a
/// bare statement in a loop body; iterating it afterwards writes nothing.
#[tokio::test]
async fn writing_aggregates_run_at_once() {
    let (_server, mut s) = engine_session("dialect_out").await;
    s.eval(
        "db.src.insertMany([{ g: 1 }, { g: 2 }, { g: 2 }])\n\
         for (const g of [1, 2]) { db.src.aggregate([{ $match: { g: g } }, { $merge: { into: 'dst' } }]) }",
    )
    .await
    .unwrap();
    let out = s.eval("db.dst.countDocuments({})").await.unwrap();
    assert_eq!(texts(&out), ["3"]);
    // Printing the cursor of a finished $out shows nothing and runs nothing.
    let out = s
        .eval("const c = db.src.aggregate([{ $out: 'copy' }])\ndb.copy.deleteMany({})\nc\ndb.copy.countDocuments({})")
        .await
        .unwrap();
    assert_eq!(texts(&out).last().map(String::as_str), Some("0"));
}

/// `show dbs` against the embedded engine labels its sizes as modelled,
/// because the server says they are (`listDatabases.schemalab`).
#[tokio::test]
async fn show_dbs_labels_modelled_sizes() {
    let (_server, mut s) = engine_session("shown").await;
    let out = s.eval("db.c.insertOne({ a: 1 })\nshow dbs").await.unwrap();
    let listing = texts(&out).join("\n");
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("shown") && l.ends_with("(modelled)")),
        "{listing}"
    );
}

/// A print flood is stopped once the session has kept
/// `OUTPUT_LIMIT` of it, with the error saying so at the statement, and
/// what was kept stays within the limit; output just under it is whole.
#[tokio::test]
async fn printed_output_kept_in_memory_is_bounded() {
    let mut s = offline().await;
    let (out, res) = s
        .eval_partial("for (let i = 0; i < 1e7; i++) print('x'.repeat(1000))")
        .await;
    let err = res.expect_err("a flood past the limit fails");
    assert!(
        matches!(err, DialectError::OutputLimit { limit_mib: 16, .. }),
        "{err:?}"
    );
    assert!(
        err.line(Lang::En)
            .contains("printed more than 16 MiB, more than schemalab keeps in memory"),
        "{}",
        err.line(Lang::En)
    );
    assert!(err.position().is_some(), "the error names the statement");
    let kept: usize = out.iter().map(|o| o.render().len() + 1).sum();
    assert!(
        kept <= schemalab::dialect::OUTPUT_LIMIT,
        "{kept} bytes kept"
    );
    assert!(
        kept > schemalab::dialect::OUTPUT_LIMIT / 2,
        "{kept} bytes kept"
    );
    // 8 MiB in 8,000 lines is kept whole and in order.
    let out = s
        .eval("for (let i = 0; i < 8000; i++) print(i + ' ' + 'y'.repeat(1000))")
        .await
        .unwrap();
    assert_eq!(out.len(), 8000);
    assert!(texts(&out)[7999].starts_with("7999 "));
}

/// With a sink, output is handed over while the statement still runs, in
/// order, and past the in-memory limit (a script streams as mongosh's does).
#[tokio::test]
async fn streamed_output_arrives_while_the_statement_runs() {
    let mut s = offline().await;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink_seen = seen.clone();
    s.stream_output(Box::new(move |outs| {
        sink_seen
            .lock()
            .unwrap()
            .extend(outs.iter().map(Output::render));
        true
    }));
    // 20 MiB, past the limit on kept output: the sink takes all but the
    // last chunk while the loop runs, the rest comes back at its end.
    let rest = s
        .eval("for (let i = 0; i < 20000; i++) print(i + ' ' + 'z'.repeat(1000))")
        .await
        .unwrap();
    let seen = seen.lock().unwrap();
    assert!(
        seen.len() > 10_000,
        "most lines reached the sink before the end: {}",
        seen.len()
    );
    let all: Vec<String> = seen.iter().cloned().chain(texts(&rest)).collect();
    assert_eq!(all.len(), 20000);
    assert!(
        all.iter()
            .enumerate()
            .all(|(i, l)| l.starts_with(&format!("{i} ")))
    );
}

/// A syntax error QuickJS raises without a place (bad regular expression
/// flags) is placed by schemalab: its line, and the column where the bad
/// literal ends.
#[test]
fn a_syntax_error_without_a_place_gets_one() {
    let src = "const d = 1\nfor (const x of [1, 2]) { /re/irint(x) }";
    let e = parse_err(src);
    assert_eq!(e.position(), Some(Pos { line: 2, col: 32 }), "{e}");
    assert!(
        e.line(Lang::En)
            .contains("invalid regular expression flags (2:32)"),
        "{}",
        e.line(Lang::En)
    );
}
