//! The Simplified Chinese edition: the whole course runs in zh-CN at the
//! tiny scale with every claim holding and every string a learner reads in
//! Chinese; lint is clean in both languages and catches what a broken
//! translation gets wrong; a missing translation falls back to English;
//! reports keep their JSON keys and line up by display width; and no run of
//! 12 CJK characters in a translation appears in the source documents.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::{course_copy, has_cjk, root};
use schemalab::course::{self, CancelFlag, CatalogLoader, Course, RunOptions, Scale};
use schemalab::locale::{Lang, is_cjk, width};

#[test]
fn the_whole_course_runs_in_chinese_and_every_claim_holds() {
    let course = Course::load(root(), Lang::ZhCn).unwrap();
    assert!(has_cjk(&course.manifest.title), "{}", course.manifest.title);
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let loader = CatalogLoader::for_course(root()).unwrap();
    let ids = course.lesson_ids();
    assert!(ids.len() >= 18);
    let mut claims = 0;
    for id in &ids {
        let lesson = course.lesson(id).unwrap();
        // Every string of the lesson a learner reads is Chinese.
        assert!(has_cjk(&lesson.title), "{id}: title {}", lesson.title);
        assert!(has_cjk(&lesson.summary), "{id}: summary {}", lesson.summary);
        let prose = lesson.prose_text().unwrap().unwrap();
        assert!(
            lesson
                .prose
                .as_ref()
                .unwrap()
                .get_ref()
                .ends_with(".zh-CN.md"),
            "{id}: prose read from {:?}",
            lesson.prose
        );
        assert!(has_cjk(&prose), "{id}: prose");
        for exp in &lesson.experiments {
            assert!(
                has_cjk(&exp.title),
                "{id}/{}: {}",
                exp.id.get_ref(),
                exp.title
            );
            for v in &exp.variants {
                assert!(has_cjk(&v.title), "{id}: variant {}", v.title);
            }
            for o in &exp.operations {
                assert!(has_cjk(&o.title), "{id}: operation {}", o.title);
            }
        }
        let opts = RunOptions {
            names: Default::default(),
            scale: Scale::Tiny,
            loader: &loader,
            cancel: CancelFlag::new(),
            progress: None,
        };
        let report = runtime
            .block_on(course::run_by_id(
                root(),
                id,
                &runtime.block_on(crate::support::client(&server.uri())),
                &opts,
                Lang::ZhCn,
            ))
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert!(has_cjk(&report.title));
        for exp in &report.experiments {
            for v in &exp.variants {
                assert!(v.failure.is_none(), "{id}/{}: {:?}", v.id, v.failure);
            }
            for c in &exp.claims {
                claims += 1;
                assert!(has_cjk(&c.text), "{id}: claim not in Chinese: {}", c.text);
                assert!(
                    c.verdict.passed,
                    "{id}: claim fails in zh-CN: {} ({})",
                    c.text, c.verdict.reason
                );
            }
        }
    }
    assert!(claims >= 70, "only {claims} claims checked");
}

#[test]
fn lint_is_clean_in_both_languages_and_the_chinese_edition_is_offered() {
    assert!(root().join("lessons/manifest.zh-CN.toml").is_file());
    let errors = course::lint(root());
    assert!(
        errors.is_empty(),
        "{}",
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Every lesson and exercise has its translation files.
    let files: BTreeSet<PathBuf> = course::lint_locale::translated_files(&root())
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    let course = Course::load(root(), Lang::En).unwrap();
    for entry in &course.manifest.lessons {
        let dir = root().join("lessons").join(entry.dir.get_ref());
        for f in ["lesson.zh-CN.toml", "lesson.zh-CN.md"] {
            assert!(files.contains(&dir.join(f)), "{} has no {f}", dir.display());
        }
    }
    for ex in schemalab::exercises::exercises(root(), Lang::En).unwrap() {
        for f in [
            "exercise.zh-CN.toml",
            "prompt.zh-CN.md",
            "explanation.zh-CN.md",
        ] {
            assert!(files.contains(&ex.dir.join(f)), "{} has no {f}", ex.id);
        }
    }
}

fn edit(path: &Path, f: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    let changed = f(text.clone());
    assert_ne!(
        text,
        changed,
        "the edit of {} changed nothing",
        path.display()
    );
    std::fs::write(path, changed).unwrap();
}

#[test]
fn lint_catches_what_a_broken_translation_gets_wrong() {
    let dir = course_copy();
    let lessons = dir.path().join("lessons");
    // An unknown claim id, a missing operation title, an untranslated
    // string.
    edit(&lessons.join("10-bucket/lesson.zh-CN.toml"), |t| {
        t.replace("fewer_docs =", "fewer_documents =")
            .replace("\nappend = ", "\n# append = ")
            .replace("title = \"桶模式\"", "title = \"The bucket pattern\"")
    });
    // A changed placeholder and a lost section.
    edit(&lessons.join("03-one-to-few/lesson.zh-CN.md"), |t| {
        let t = t.replacen("{{", "{ {", 1);
        let at = t.rfind("\n## ").unwrap();
        format!("{}\n{}", &t[..at], &t[at + 4..])
    });
    // A prose line left in English.
    edit(&lessons.join("04-one-to-many/lesson.zh-CN.md"), |t| {
        format!("{t}\nThis line was never translated into Chinese.\n")
    });
    // A missing prose file, and exercise hints of the wrong number.
    std::fs::remove_file(lessons.join("12-polymorphic/lesson.zh-CN.md")).unwrap();
    edit(
        &lessons.join("10-bucket/exercises/history-buckets/exercise.zh-CN.toml"),
        |t| t.replacen("hints = [", "hints = [\"多出来的提示\", ", 1),
    );
    let errors: Vec<String> = course::lint(dir.path())
        .iter()
        .map(ToString::to_string)
        .collect();
    let all = errors.join("\n");
    for expected in [
        "10-bucket/lesson.zh-CN.toml:",
        "'fewer_documents' is not a claim id",
        "experiments.readings.claims.fewer_docs",
        "experiments.readings.operations.append",
        "not translated into zh-CN: \"The bucket pattern\"",
        "03-one-to-few/lesson.zh-CN.md",
        "placeholders differ from lesson.md",
        "'## ' sections where lesson.md has",
        "04-one-to-many/lesson.zh-CN.md",
        "This line was never translated",
        "12-polymorphic/lesson.zh-CN.md:1:1: missing",
        "hints where exercise.toml has",
    ] {
        assert!(
            all.contains(expected),
            "lint did not say {expected:?}:\n{all}"
        );
    }
}

#[test]
fn a_missing_translation_falls_back_to_english() {
    let dir = course_copy();
    let lessons = dir.path().join("lessons");
    std::fs::remove_file(lessons.join("10-bucket/lesson.zh-CN.toml")).unwrap();
    std::fs::remove_file(lessons.join("10-bucket/lesson.zh-CN.md")).unwrap();
    // One claim's translation removed from another lesson.
    edit(&lessons.join("11-attribute/lesson.zh-CN.toml"), |t| {
        t.lines()
            .filter(|l| !l.starts_with("fewer_indexes ="))
            .collect::<Vec<_>>()
            .join("\n")
    });
    let zh = Course::load(dir.path(), Lang::ZhCn).unwrap();
    let en = Course::load(dir.path(), Lang::En).unwrap();
    let bucket_zh = zh.lesson("bucket").unwrap();
    let bucket_en = en.lesson("bucket").unwrap();
    assert_eq!(bucket_zh.title, bucket_en.title);
    assert_eq!(
        bucket_zh.prose_text().unwrap(),
        bucket_en.prose_text().unwrap()
    );
    let attr = zh.lesson("attribute").unwrap();
    assert!(has_cjk(&attr.title));
    let claims: Vec<_> = attr.experiments.iter().flat_map(|e| &e.claims).collect();
    let untranslated: Vec<_> = claims
        .iter()
        .filter(|c| !has_cjk(&c.text))
        .map(|c| c.id.as_ref().unwrap().get_ref().clone())
        .collect();
    assert_eq!(untranslated, ["fewer_indexes"]);
    // The English edition is untouched by the Chinese files.
    let real_en = Course::load(root(), Lang::En)
        .unwrap()
        .lesson("attribute")
        .unwrap();
    assert!(!has_cjk(&real_en.title) && !has_cjk(&real_en.prose_text().unwrap().unwrap()));
}

#[test]
fn a_malformed_translation_is_an_error_with_its_place() {
    let dir = course_copy();
    let path = dir.path().join("lessons/10-bucket/lesson.zh-CN.toml");
    edit(&path, |t| t.replacen("title = ", "title = = ", 1));
    let zh = Course::load(dir.path(), Lang::ZhCn).unwrap();
    let e = zh.lesson("bucket").unwrap_err().to_string();
    assert!(e.contains("lesson.zh-CN.toml:1:"), "{e}");
}

#[test]
fn exercises_come_in_chinese() {
    let all = schemalab::exercises::manifest::exercises(root(), Lang::ZhCn).unwrap();
    assert!(all.len() >= 14);
    for ex in &all {
        assert!(has_cjk(&ex.spec.title), "{}: {}", ex.id, ex.spec.title);
        assert!(ex.spec.prompt.get_ref().ends_with(".zh-CN.md"), "{}", ex.id);
        assert!(has_cjk(&ex.prompt_text().unwrap()), "{}", ex.id);
        for h in &ex.spec.hints {
            assert!(has_cjk(h), "{}: hint {h}", ex.id);
        }
        for c in &ex.spec.checks {
            assert!(has_cjk(&c.text), "{}: check {}", ex.id, c.text);
        }
    }
}

/// Run lesson `id` at tiny scale in `lang`.
fn run(id: &str, lang: Lang) -> course::LessonReport {
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let loader = CatalogLoader::for_course(root()).unwrap();
    let opts = RunOptions {
        names: Default::default(),
        scale: Scale::Tiny,
        loader: &loader,
        cancel: CancelFlag::new(),
        progress: None,
    };
    runtime
        .block_on(async {
            let client = crate::support::client(&server.uri()).await;
            course::run_by_id(root(), id, &client, &opts, lang).await
        })
        .unwrap()
}

fn keys(v: &serde_json::Value, path: &str, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{path}.{k}");
                out.insert(p.clone());
                keys(x, &p, out);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                keys(x, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn reports_in_chinese_keep_json_keys_and_line_up_by_display_width() {
    use schemalab::course::report::{Format, render_in};
    let zh = run("bucket", Lang::ZhCn);
    let en = run("bucket", Lang::En);
    // JSON: the same keys in both languages.
    let (mut kz, mut ke) = (BTreeSet::new(), BTreeSet::new());
    keys(
        &serde_json::from_str(&render_in(&zh, Format::Json, Lang::ZhCn)).unwrap(),
        "",
        &mut kz,
    );
    keys(
        &serde_json::from_str(&render_in(&en, Format::Json, Lang::En)).unwrap(),
        "",
        &mut ke,
    );
    assert_eq!(kz, ke);
    // The table: Chinese headings and labels, no English row label left.
    let table = render_in(&zh, Format::Table, Lang::ZhCn);
    for word in [
        "结论",
        "扫描文档数（全部阶段）",
        "返回文档数",
        "模型估算",
        "推荐方案",
    ] {
        assert!(table.contains(word), "no {word} in:\n{table}");
    }
    for english in ["docs examined", "Claims", "status", "Recommended"] {
        assert!(!table.contains(english), "{english} left in:\n{table}");
    }
    // Columns line up by display width: the second column starts at the
    // same terminal column on the header and on every row that has one.
    let header = table
        .lines()
        .find(|l| l.contains("(schemalab_bucket_naive)"))
        .unwrap();
    let col = width(&header[..header.find("naive").unwrap()]);
    let mut rows = 0;
    for line in table
        .lines()
        .filter(|l| l.starts_with("  扫描") || l.starts_with("状态"))
    {
        let at = line
            .char_indices()
            .map(|(i, _)| i)
            .find(|i| width(&line[..*i]) == col)
            .unwrap_or_else(|| panic!("no column {col} in {line:?}"));
        assert!(
            line[..at].ends_with("  ") && !line[at..].starts_with(' '),
            "misaligned row: {line:?} (header column {col})"
        );
        rows += 1;
    }
    assert!(rows >= 3);
    // Markdown carries the same language.
    let md = render_in(&zh, Format::Markdown, Lang::ZhCn);
    assert!(md.contains("**结论**"), "{md}");
}

#[test]
fn no_long_run_of_chinese_is_taken_from_the_source_documents() {
    let seeds = root().join("../shared/seeds");
    if !seeds.is_dir() {
        println!("skipped: {} is missing", seeds.display());
        return;
    }
    // The seeds' CJK characters only, runs separated by anything else.
    let mut seed_text = String::new();
    for e in std::fs::read_dir(&seeds).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "txt") {
            for c in std::fs::read_to_string(&p).unwrap().chars() {
                seed_text.push(if is_cjk(c) { c } else { '\n' });
            }
        }
    }
    assert!(seed_text.chars().filter(|c| is_cjk(*c)).count() > 10_000);
    const RUN: usize = 12;
    let mut checked = 0;
    let mut copied = Vec::new();
    for (_, file) in course::lint_locale::translated_files(&root()) {
        let text = std::fs::read_to_string(&file).unwrap();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if !is_cjk(chars[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < chars.len() && is_cjk(chars[i]) {
                i += 1;
            }
            let run: Vec<char> = chars[start..i].to_vec();
            for w in run.windows(RUN) {
                checked += 1;
                let w: String = w.iter().collect();
                if seed_text.contains(&w) {
                    copied.push(format!("{}: {w}", file.display()));
                }
            }
        }
    }
    assert!(checked > 1_000, "only {checked} windows checked");
    assert!(
        copied.is_empty(),
        "copied from the sources:\n{}",
        copied.join("\n")
    );
}
