//! What schemalab says about a failure, in the chosen language: a failing
//! claim's reason (with its figures), an operation's error around the
//! server's own errmsg, a setup that does not parse, a metric that cannot
//! be read, and an exercise checker's feedback. One report renders in
//! every language: the table, the Markdown and the JSON (its keys and
//! types unchanged) in zh-CN carry our words in Chinese, the server's words
//! and the figures as they were, and English stays English.

use std::collections::BTreeSet;

use crate::support::{has_cjk, root};
use schemalab::course::claims::{Check, Metric, MetricSource, Val};
use schemalab::course::report::{Format, render_in};
use schemalab::course::{self, CancelFlag, CatalogLoader, LessonReport, RunOptions, Scale};
use schemalab::locale::{Lang, Message, serialize_in};

/// The server's own words for the filter `{$bogus: 1}` (mongod's, which
/// the embedded engine repeats): they stay English in every language.
const SERVER_WORDS: &str = "unknown top level operator: $bogus";

const LESSON: &str = r#"
title = "Failures on purpose"
summary = "Claims that fail, a statement the server refuses, a setup that does not parse."

[[experiments]]
id = "probe"
title = "Three variants, two of them broken"
dataset = "shop"
seed = 7

  [[experiments.variants]]
  id = "good"
  title = "Runs"

  [[experiments.variants]]
  id = "bad"
  title = "A filter the server refuses"

  [[experiments.variants]]
  id = "broken"
  title = "A setup that does not parse"
  setup = "broken.setup.js"

  [[experiments.operations]]
  id = "q"
  title = "Every order"
  kind = "read"
  weight = 1
  [experiments.operations.run]
  good = "db.orders.find({})"
  bad = "db.orders.find({$bogus: 1})"
  broken = "db.orders.find({})"

  [[experiments.claims]]
  id = "many"
  text = "Far more orders than there are."
  check = "good.coll.orders.count >= 1000 * 2000"

  [[experiments.claims]]
  id = "ordered_text"
  text = "Text compared with >."
  check = "good.op.q.stages > 'A'"

  [[experiments.claims]]
  id = "by_zero"
  text = "A division by zero."
  check = "good.op.q.nReturned / (good.op.q.nReturned - good.op.q.nReturned) > 1"

  [[experiments.claims]]
  id = "reads_bad"
  text = "Reads the refused variant."
  check = "bad.op.q.nReturned > 0"

  [[experiments.claims]]
  id = "no_collection"
  text = "Reads a collection that does not exist."
  check = "good.coll.nosuch.count > 0"

  [[experiments.claims]]
  id = "unparsed"
  text = "A check that does not parse."
  check = "good.coll.orders.count >"
"#;

/// A course of one lesson (`probe`) over the catalog's `shop` dataset.
fn probe_course() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let lessons = dir.path().join("lessons");
    std::fs::create_dir_all(lessons.join("10-probe")).unwrap();
    std::fs::write(
        lessons.join("manifest.toml"),
        "format_version = 1\ntitle = \"Probe\"\n\n[[lessons]]\nid = \"probe\"\ndir = \"10-probe\"\n",
    )
    .unwrap();
    std::fs::write(lessons.join("10-probe/lesson.toml"), LESSON).unwrap();
    std::fs::write(
        lessons.join("10-probe/broken.setup.js"),
        "db.orders.createIndex({customer_id: 1,, })\n",
    )
    .unwrap();
    let datasets = dir.path().join("datasets");
    std::fs::create_dir_all(&datasets).unwrap();
    std::fs::copy(
        root().join("datasets/catalog.toml"),
        datasets.join("catalog.toml"),
    )
    .unwrap();
    dir
}

/// One run of the probe lesson, at the tiny scale on the embedded engine.
fn run_probe() -> LessonReport {
    let dir = probe_course();
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let loader = CatalogLoader::for_course(dir.path()).unwrap();
    let opts = RunOptions {
        names: Default::default(),
        scale: Scale::Tiny,
        loader: &loader,
        cancel: CancelFlag::new(),
        progress: None,
    };
    runtime
        .block_on(course::run_by_id(
            dir.path(),
            "probe",
            &runtime.block_on(crate::support::client(&server.uri())),
            &opts,
            Lang::ZhCn,
        ))
        .unwrap()
}

/// Every `path: type` of a JSON document (arrays by their elements).
fn shape(v: &serde_json::Value) -> BTreeSet<String> {
    fn walk(v: &serde_json::Value, path: &str, out: &mut BTreeSet<String>) {
        let kind = match v {
            serde_json::Value::Null => "null",
            serde_json::Value::Bool(_) => "bool",
            serde_json::Value::Number(_) => "number",
            serde_json::Value::String(_) => "string",
            serde_json::Value::Array(_) => "array",
            serde_json::Value::Object(_) => "object",
        };
        out.insert(format!("{path}: {kind}"));
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    walk(x, &format!("{path}.{k}"), out);
                }
            }
            serde_json::Value::Array(a) => {
                for x in a {
                    walk(x, &format!("{path}[]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    walk(v, "", &mut out);
    out
}

struct Fixed;

impl MetricSource for Fixed {
    fn metric(&self, m: &Metric) -> Result<Val, Message> {
        match m.to_string().as_str() {
            "a.coll.r.count" => Ok(Val::Num(12000.0)),
            "b.coll.k.count" => Ok(Val::Num(600.0)),
            "a.op.q.stages" => Ok(Val::Str("FETCH<-IXSCAN".into())),
            other => Err(Message::verbatim(format!("{other}?"))),
        }
    }
}

#[test]
fn a_failing_claims_reason_is_chinese_and_keeps_its_figures() {
    let fail = Check::parse("a.coll.r.count >= 100 * b.coll.k.count")
        .unwrap()
        .evaluate(&Fixed);
    assert!(!fail.passed);
    let zh = fail.reason.render_in(Lang::ZhCn);
    assert!(has_cjk(&zh), "{zh}");
    assert!(
        zh.contains("12000") && zh.contains(">=") && zh.contains("60000"),
        "{zh}"
    );
    assert!(!zh.contains("not "), "{zh}");
    assert_eq!(fail.reason.render_in(Lang::En), "not 12000 >= 60000");
    // A held claim's reason is only its figures, the same in every language.
    let held = Check::parse("a.coll.r.count > b.coll.k.count")
        .unwrap()
        .evaluate(&Fixed);
    assert!(held.passed);
    assert_eq!(held.reason.render_in(Lang::ZhCn), "12000 > 600");
    // Type errors and division by zero: our words, the values as written.
    for (check, english, value) in [
        (
            "a.op.q.stages < 'x'",
            "only with == and !=",
            "\"FETCH<-IXSCAN\"",
        ),
        (
            "a.op.q.stages > 3",
            "cannot compare a number",
            "\"FETCH<-IXSCAN\"",
        ),
        (
            "a.coll.r.count / (b.coll.k.count - 600) > 1",
            "division by zero",
            "12000 / 0",
        ),
        (
            "a.coll.r.count + a.op.q.stages > 1",
            "arithmetic on text",
            "12000",
        ),
    ] {
        let v = Check::parse(check).unwrap().evaluate(&Fixed);
        assert!(!v.passed, "{check}");
        let (en, zh) = (v.reason.render_in(Lang::En), v.reason.render_in(Lang::ZhCn));
        assert!(en.contains(english) && en.contains(value), "{check}: {en}");
        assert!(
            has_cjk(&zh) && zh.contains(value) && !zh.contains(english),
            "{check}: {zh}"
        );
    }
}

#[test]
fn a_run_report_in_chinese_has_our_words_in_chinese_and_the_servers_as_written() {
    let report = run_probe();
    let exp = &report.experiments[0];
    let variant = |id: &str| exp.variants.iter().find(|v| v.id == id).unwrap();
    let claim = |id: &str| {
        let i = [
            "many",
            "ordered_text",
            "by_zero",
            "reads_bad",
            "no_collection",
            "unparsed",
        ]
        .iter()
        .position(|c| *c == id)
        .unwrap();
        &exp.claims[i]
    };
    assert!(variant("good").failure.is_none());
    assert!(exp.claims.iter().all(|c| !c.verdict.passed));

    // The refused statement: the operation's error keeps the server's words
    // and codeName; the failure around them is ours.
    let bad = variant("bad");
    let op = &bad.operations[0];
    let err = op.error.as_ref().unwrap();
    assert_eq!(err.code_name, "BadValue");
    let (en, zh) = (
        err.message.render_in(Lang::En),
        err.message.render_in(Lang::ZhCn),
    );
    assert!(en.contains(SERVER_WORDS) && en == zh, "{en} / {zh}");
    let failure = bad.failure.as_ref().unwrap();
    let zh = failure.render_in(Lang::ZhCn);
    assert!(
        zh.starts_with("操作 'q' 失败") && zh.contains("BadValue") && zh.contains(SERVER_WORDS),
        "{zh}"
    );
    assert!(!zh.contains("failed"), "{zh}");
    assert!(
        failure
            .to_string()
            .starts_with("operation 'q' failed: BadValue ")
    );

    // The setup that does not parse: our words, the class name, the file
    // and the place (the JavaScript engine's own words stay as it wrote
    // them, like the server's).
    let broken = variant("broken").failure.as_ref().unwrap();
    let zh = broken.render_in(Lang::ZhCn);
    assert!(
        zh.starts_with("初始化脚本执行失败：broken.setup.js：SyntaxError：")
            && zh.ends_with("（1:39）"),
        "{zh}"
    );
    assert!(!zh.contains('\n'), "a failure is one line: {zh}");
    // The setup error itself keeps the source line and a caret under it.
    let setup = variant("broken")
        .setup_error
        .as_ref()
        .unwrap()
        .render_in(Lang::ZhCn);
    let lines: Vec<&str> = setup.lines().collect();
    assert_eq!(lines.len(), 3, "{setup}");
    assert_eq!(lines[1], "db.orders.createIndex({customer_id: 1,, })");
    assert_eq!(lines[2].find('^'), Some(38), "{setup}");

    // The workbench shows the same words in its own language.
    schemalab::tui::strings::set_lang(Lang::ZhCn);
    let shown = schemalab::tui::screens::experiment::variant_errors(bad);
    assert!(
        shown.len() == 1 && shown[0].starts_with("失败：操作 'q' 失败：BadValue "),
        "{shown:?}"
    );
    let shown = schemalab::tui::screens::experiment::variant_errors(variant("broken"));
    assert!(
        shown[0].starts_with("broken.setup.js：SyntaxError："),
        "{shown:?}"
    );
    schemalab::tui::strings::set_lang(Lang::En);

    // Claims: each reason in Chinese, with the figures and names it reads.
    let reasons: Vec<(&str, &[&str])> = vec![
        ("many", &["2000000", ">="]),
        ("ordered_text", &["==", "!="]),
        ("by_zero", &["/ 0"]),
        ("reads_bad", &["bad.op.q.nReturned", "'bad'", SERVER_WORDS]),
        ("no_collection", &["'nosuch'", "schemalab_probe_good"]),
        ("unparsed", &["'('"]),
    ];
    for (id, figures) in reasons {
        let c = claim(id);
        let zh = c.verdict.reason.render_in(Lang::ZhCn);
        let en = c.verdict.reason.render_in(Lang::En);
        assert!(has_cjk(&zh), "{id}: {zh}");
        assert_ne!(zh, en, "{id}");
        for f in figures {
            assert!(
                zh.contains(f) && en.contains(f),
                "{id}: {f} missing from {zh} / {en}"
            );
        }
        assert!(!has_cjk(&en), "{id}: {en}");
    }
    // The unparsed check: where it stops, in Chinese.
    let zh = claim("unparsed").verdict.reason.render_in(Lang::ZhCn);
    assert!(
        zh.contains("检查表达式无法解析") && zh.contains("列"),
        "{zh}"
    );

    // The table and the Markdown: the same words as the model renders them.
    for format in [Format::Table, Format::Markdown] {
        let out = render_in(&report, format, Lang::ZhCn);
        assert!(out.contains("✗ 失败 bad：操作 'q' 失败：BadValue"), "{out}");
        assert!(out.contains(SERVER_WORDS), "{out}");
        assert!(out.contains("初始化脚本执行失败"), "{out}");
        assert!(out.contains("schemalab 内置引擎"), "{out}");
        for english in [
            "FAILED",
            "operation 'q' failed",
            "setup failed",
            "not 150",
            "check does not parse",
            "cannot do arithmetic",
            "variant 'bad' failed",
            "embedded engine",
        ] {
            assert!(
                !out.contains(english),
                "{format:?}: {english:?} left in\n{out}"
            );
        }
        let en = render_in(&report, format, Lang::En);
        assert!(
            en.contains("✗ FAILED bad: operation 'q' failed: BadValue"),
            "{en}"
        );
        assert!(!has_cjk(&en.replace(&report.title, "")), "{en}");
    }

    // JSON: the same keys and types in both languages; the messages are
    // strings in the chosen language.
    let zh: serde_json::Value =
        serde_json::from_str(&render_in(&report, Format::Json, Lang::ZhCn)).unwrap();
    let en: serde_json::Value =
        serde_json::from_str(&render_in(&report, Format::Json, Lang::En)).unwrap();
    // The same `path: type` pairs, so the same keys too.
    assert_eq!(shape(&zh), shape(&en));
    let v = &zh["experiments"][0]["variants"];
    let failure = v[1]["failure"].as_str().unwrap();
    assert!(
        failure.starts_with("操作 'q' 失败") && failure.contains(SERVER_WORDS),
        "{failure}"
    );
    assert_eq!(
        v[1]["operations"][0]["error"]["message"].as_str().unwrap(),
        err.message.to_string()
    );
    assert!(
        v[2]["setup_error"]
            .as_str()
            .unwrap()
            .contains("SyntaxError")
    );
    let reason = zh["experiments"][0]["claims"][0]["reason"]
        .as_str()
        .unwrap();
    assert!(has_cjk(reason) && reason.contains("2000000"), "{reason}");
    let en_reason = en["experiments"][0]["claims"][0]["reason"]
        .as_str()
        .unwrap();
    assert!(
        en_reason.starts_with("not ") && !has_cjk(en_reason),
        "{en_reason}"
    );
    // Outside a chosen language a report serialises in English.
    let plain = serde_json::to_value(&report).unwrap();
    assert_eq!(plain, en);
    assert_eq!(
        serialize_in(Lang::ZhCn, || serde_json::to_value(&report)).unwrap(),
        zh
    );

    // The run's one line on stderr: which variants failed, in Chinese.
    let status = course::RunStatus::of(&report).message(Lang::ZhCn);
    assert!(
        status.contains("probe/bad：操作 'q' 失败") && status.contains(SERVER_WORDS),
        "{status}"
    );
}

#[test]
fn an_exercise_checklist_in_chinese_says_what_failed_in_chinese() {
    let all = schemalab::exercises::exercises(root(), Lang::En).unwrap();
    let ex = all.iter().find(|e| e.id == "host-logs").unwrap();
    // A setup that does not parse, a read the server refuses, a section
    // left empty, and a write that works.
    let solution = [
        "// Setup",
        "db.logs.createIndex({host_id: 1, level: 1, ts: -1}",
        "",
        "// @op log",
        "db.logs.insertOne({host_id: hostId, level: 'ERROR', message: 'disk full', ts: new Date(at)})",
        "",
        "// @op recent_errors",
        "db.logs.find({host_id: hostId, level: 'ERROR', $bogus: 1}).sort({ts: -1}).limit(50)",
        "",
        "// @op host_page",
        "",
    ]
    .join("\n");
    let (_server, rt, client) = crate::support::served();
    let loader = CatalogLoader::for_course(root()).unwrap();
    let opts = schemalab::exercises::CheckOptions {
        names: Default::default(),
        scale: Some(Scale::Tiny),
        seed: 3,
        loader: &loader,
        references: None,
    };
    let report = rt
        .block_on(schemalab::exercises::check_exercise(
            &client, ex, &solution, None, &opts,
        ))
        .unwrap();
    assert!(!report.passed());

    let zh = report.render_in(Lang::ZhCn);
    let en = report.render_in(Lang::En);
    // The setup, first, at its place: the dialect's class name, our words.
    assert!(
        zh.contains("! solution.js:2:") && zh.contains("SyntaxError："),
        "{zh}"
    );
    assert!(zh.contains("在初始化部分；所有检查都依赖它"), "{zh}");
    // The refused read: our words, the file, line and column, the server's words.
    assert!(
        zh.contains("该操作失败：solution.js:7:1：") && zh.contains(SERVER_WORDS),
        "{zh}"
    );
    // The empty section.
    assert!(zh.contains("这一段还没有任何语句"), "{zh}");
    // A passing figure: measured and required, in Chinese.
    assert!(zh.contains("实测 300   要求 >= 300"), "{zh}");
    // The header names the engine in Chinese.
    assert!(zh.contains("schemalab 内置引擎"), "{zh}");
    for english in [
        "(setup)",
        "the operation failed",
        "the section has no statement",
        "unavailable: operation",
        "measured ",
        "embedded engine",
        "failed with",
    ] {
        assert!(!zh.contains(english), "{english:?} left in\n{zh}");
    }
    assert!(
        en.contains("the operation failed: solution.js:7:1: ") && en.contains(SERVER_WORDS),
        "{en}"
    );
    assert!(en.contains("! solution.js:2:"), "{en}");
    assert!(
        en.contains("(in the setup; every check depends on it)"),
        "{en}"
    );

    // The JSON `check --json` writes: the same keys, our words in Chinese.
    let zj: serde_json::Value =
        serde_json::from_str(&serialize_in(Lang::ZhCn, || serde_json::to_string(&report)).unwrap())
            .unwrap();
    let ej = serde_json::to_value(&report).unwrap();
    assert_eq!(shape(&zj), shape(&ej));
    let details: Vec<&str> = zj["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["detail"].as_str())
        .filter(|d| !d.is_empty())
        .collect();
    assert!(!details.is_empty());
    assert!(details.iter().all(|d| has_cjk(d)), "{details:?}");
    assert_eq!(zj["section_errors"][0]["section"], "setup");
    // The class name kept, the punctuation around it Chinese.
    assert!(
        zj["section_errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("SyntaxError："),
        "{}",
        zj["section_errors"]
    );
}
