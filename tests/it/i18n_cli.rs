//! The program's own words on the command line in Simplified Chinese: clap's
//! `--help` (descriptions, headings, notes), clap's parse errors, and the
//! errors schemalab itself writes (course loading, lint, the dialect), in
//! the language `--lang` or the environment chooses, with places
//! (file:line:col, lesson ids, mongosh's error class names) kept as they
//! are and English untouched under `--lang en` or `LANG=C.UTF-8`. A last
//! test checks that every message the source composes has a catalogue
//! entry.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::cli::{Out, schemalab_in};
use crate::support::{has_cjk, root};

/// `s` without its `backticked` spans (commands and names quoted in a
/// sentence stay English in every language).
fn without_code(s: &str) -> String {
    s.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// Whether a help line carries an English sentence: two lowercase English
/// words in a row outside backticks.
fn english_sentence(line: &str) -> bool {
    let text = without_code(line);
    let mut tokens: Vec<&str> = text.split_whitespace().collect();
    // A subcommand listing starts with the command's name.
    if line.starts_with("  ") && !line.trim_start().starts_with('-') && !tokens.is_empty() {
        tokens.remove(0);
    }
    tokens.windows(2).any(|w| {
        let word = |t: &str| {
            let t = t.trim_matches(|c: char| ",.;:()".contains(c));
            t.len() >= 2 && t.chars().all(|c| c.is_ascii_lowercase() || c == '\'')
        };
        word(w[0]) && word(w[1])
    })
}

/// The `--long-option` names a help text shows.
fn options(help: &str) -> BTreeSet<String> {
    help.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| t.starts_with("--") && t.len() > 2)
        .map(|t| {
            let name: String = t[2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            format!("--{name}")
        })
        .filter(|t| t.len() > 2)
        .collect()
}

#[test]
fn help_in_chinese_has_no_english_sentence_and_keeps_every_option() {
    for args in [
        &["--help"][..],
        &["run", "--help"][..],
        &["shell", "--help"][..],
    ] {
        let en = schemalab_in(&root(), &[], &[&["--lang", "en"][..], args].concat());
        let zh = schemalab_in(&root(), &[], &[&["--lang", "zh-CN"][..], args].concat());
        assert_eq!(
            (en.code, zh.code),
            (0, 0),
            "{args:?}: {}{}",
            en.stderr,
            zh.stderr
        );
        let described: Vec<&str> = en.stdout.lines().filter(|l| english_sentence(l)).collect();
        assert!(
            described.len() >= 3,
            "{args:?}: the check sees no English help\n{}",
            en.stdout
        );
        for line in &described {
            assert!(
                !zh.stdout.lines().any(|z| z.trim() == line.trim()),
                "{args:?}: untranslated line {line:?}"
            );
        }
        let left: Vec<&str> = zh.stdout.lines().filter(|l| english_sentence(l)).collect();
        assert!(
            left.is_empty(),
            "{args:?}: English left in the zh-CN help: {left:#?}"
        );
        assert_eq!(
            options(&en.stdout),
            options(&zh.stdout),
            "{args:?}: option names changed"
        );
        for heading in ["用法：", "选项"] {
            assert!(
                zh.stdout.contains(heading),
                "{args:?}: no {heading}\n{}",
                zh.stdout
            );
        }
        assert!(!zh.stdout.contains("Usage:") && !zh.stdout.contains("Options:"));
    }
    // The subcommands' heading, clap's notes and the environment's choice.
    let zh = schemalab_in(&root(), &[("LANG", "zh_CN.UTF-8")], &["--help"]);
    assert!(
        zh.stdout.contains("命令") && zh.stdout.contains("［环境变量：MONGODB_URI］"),
        "{}",
        zh.stdout
    );
    let run = schemalab_in(&root(), &[("LANG", "zh_CN.UTF-8")], &["run", "--help"]);
    assert!(
        run.stdout.contains("［默认值：default］") && run.stdout.contains("参数"),
        "{}",
        run.stdout
    );
    let en = schemalab_in(&root(), &[("LANG", "C.UTF-8")], &["--help"]);
    assert!(
        !has_cjk(&en.stdout) && en.stdout.contains("Usage:"),
        "{}",
        en.stdout
    );
    // --lang wins over the environment.
    let forced = schemalab_in(
        &root(),
        &[("LANG", "zh_CN.UTF-8")],
        &["--help", "--lang", "en"],
    );
    assert!(!has_cjk(&forced.stdout), "{}", forced.stdout);
}

#[test]
fn a_mistyped_subcommand_is_reported_in_chinese_with_the_suggestion() {
    let out = schemalab_in(&root(), &[], &["--lang", "zh-CN", "runn"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.starts_with("错误："), "{}", out.stderr);
    assert!(
        out.stderr.contains("'runn'") && out.stderr.contains("'run'"),
        "{}",
        out.stderr
    );
    assert!(!english_sentence(&out.stderr), "{}", out.stderr);
    let en = schemalab_in(&root(), &[], &["--lang", "en", "runn"]);
    assert!(
        en.stderr.contains("unrecognized subcommand 'runn'"),
        "{}",
        en.stderr
    );
}

#[test]
fn clap_tips_and_repeated_options_are_reported_in_chinese() {
    // An option clap does not know: its tip says how to pass it as a value.
    let out = schemalab_in(&root(), &[], &["--lang", "zh-CN", "run", "--foo"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("\n\n  提示：要把 '--foo' 作为值传入，请写成 '-- --foo'"),
        "{}",
        out.stderr
    );
    // A subcommand after `--`: the tip names it.
    let out = schemalab_in(&root(), &[], &["--lang", "zh-CN", "--", "run"]);
    assert!(
        out.stderr.contains("提示：有子命令 'run'") && out.stderr.contains("'--'"),
        "{}",
        out.stderr
    );
    // An option given twice.
    let out = schemalab_in(
        &root(),
        &[],
        &[
            "--lang", "zh-CN", "run", "x", "--scale", "tiny", "--scale", "tiny",
        ],
    );
    assert!(
        out.stderr.contains("参数 '--scale <SCALE>' 只能使用一次"),
        "{}",
        out.stderr
    );
    // A value the option's parser refuses keeps the parser's own reason.
    let out = schemalab_in(
        &root(),
        &[],
        &["--lang", "zh-CN", "serve", "--port", "http"],
    );
    assert!(
        out.stderr
            .contains("'--port <PORT>' 的值 'http' 无效：invalid digit"),
        "{}",
        out.stderr
    );
    for out in [
        schemalab_in(&root(), &[], &["--lang", "zh-CN", "run", "--foo"]),
        schemalab_in(&root(), &[], &["--lang", "zh-CN", "--", "run"]),
    ] {
        assert!(
            !out.stderr.contains("to pass") && !out.stderr.contains("exists"),
            "{}",
            out.stderr
        );
        assert!(
            !english_sentence(&without_code(&out.stderr)),
            "{}",
            out.stderr
        );
    }
    // English is clap's own.
    let en = schemalab_in(&root(), &[], &["--lang", "en", "run", "--foo"]);
    assert!(
        en.stderr
            .contains("tip: to pass '--foo' as a value, use '-- --foo'"),
        "{}",
        en.stderr
    );
}

/// A copy of the test fixture course with `lessons/10-embed/lesson.toml`
/// broken on its third line.
fn broken_copy() -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let dest = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &dest);
            } else {
                std::fs::copy(e.path(), dest).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("tests/fixtures/course");
    copy(&src.join("lessons"), &dir.path().join("lessons"));
    copy(&root().join("datasets"), &dir.path().join("datasets"));
    let path = dir.path().join("lessons/10-embed/lesson.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "prose = = \"lesson.md\"");
    std::fs::write(&path, lines.join("\n")).unwrap();
    dir
}

/// The one error line of a failed `run` (the first line of stderr).
fn error_line(out: &Out) -> &str {
    out.stderr.lines().next().unwrap_or_default()
}

#[test]
fn course_errors_are_chinese_one_liners_that_keep_their_place() {
    let dir = broken_copy();
    let content = dir.path().to_str().unwrap();
    let zh_flag: &[(&str, &str)] = &[];
    for (env, lang) in [
        (zh_flag, Some("zh-CN")),
        (&[("LANG", "zh_CN.UTF-8")][..], None),
    ] {
        let args = |rest: &[&'static str]| -> Vec<String> {
            let mut v = vec!["--content".to_string(), content.to_string()];
            if let Some(l) = lang {
                v.extend(["--lang".to_string(), l.to_string()]);
            }
            v.extend(rest.iter().map(|s| s.to_string()));
            v
        };
        let run = |rest: &[&'static str]| {
            let a = args(rest);
            schemalab_in(
                &root(),
                env,
                &a.iter().map(String::as_str).collect::<Vec<_>>(),
            )
        };
        // A malformed lesson file: the file, line 3, a column; Chinese words.
        let out = run(&["run", "embed", "--scale", "tiny"]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        let line = error_line(&out);
        assert!(line.starts_with("错误："), "{lang:?}: {line}");
        assert!(line.contains("10-embed/lesson.toml:3:"), "{lang:?}: {line}");
        assert!(line.contains("课程文件格式有误"), "{lang:?}: {line}");
        assert!(out.stderr.contains("这一课无法运行"), "{}", out.stderr);
        // An unknown lesson id: named, with the ones there are.
        let out = run(&["run", "nosuch", "--scale", "tiny"]);
        let line = error_line(&out);
        assert_eq!(out.code, 2);
        assert!(
            line.contains("'nosuch'") && line.contains("embed"),
            "{lang:?}: {line}"
        );
        assert!(
            has_cjk(line) && !line.contains("no lesson"),
            "{lang:?}: {line}"
        );
        // A bad option value names the option.
        let out = run(&["run", "embed", "--scale", "huge"]);
        let line = error_line(&out);
        assert!(
            line.contains("--scale") && line.contains("'huge'") && has_cjk(line),
            "{line}"
        );
    }
    // English stays English, forced or from the environment.
    for (env, args) in [
        (&[][..], &["--lang", "en", "run", "nosuch"][..]),
        (&[("LANG", "C.UTF-8")][..], &["run", "nosuch"][..]),
    ] {
        let mut a = vec!["--content", content];
        a.extend_from_slice(args);
        let out = schemalab_in(&root(), env, &a);
        let line = error_line(&out);
        assert!(
            line.starts_with("Error: no lesson 'nosuch' in the manifest"),
            "{line}"
        );
        assert!(!has_cjk(&out.stderr), "{}", out.stderr);
        a.truncate(2);
        a.extend(["--lang", "en", "run", "embed"]);
        let out = schemalab_in(&root(), &[], &a);
        assert!(error_line(&out).contains("lesson.toml:3:") && !has_cjk(&out.stderr));
    }
}

#[test]
fn lint_problems_are_reported_in_chinese_at_their_place() {
    let broken = root().join("tests/fixtures/course/broken");
    let content = broken.to_str().unwrap();
    let zh = schemalab_in(
        &root(),
        &[],
        &["--content", content, "--lang", "zh-CN", "lint"],
    );
    let en = schemalab_in(
        &root(),
        &[],
        &["--content", content, "--lang", "en", "lint"],
    );
    assert_eq!((zh.code, en.code), (1, 1));
    let (zl, el): (Vec<&str>, Vec<&str>) =
        (zh.stdout.lines().collect(), en.stdout.lines().collect());
    assert_eq!(zl.len(), el.len(), "the same problems in both languages");
    let place = |l: &str| l.split(": ").next().unwrap_or_default().to_string();
    let unknown = zl
        .iter()
        .find(|l| l.contains("nosuchdata"))
        .expect("the unknown dataset is reported");
    assert!(
        unknown.contains("lesson.toml:6:11: ") && unknown.contains("未知的数据集"),
        "{unknown}"
    );
    // Every problem keeps its file:line:col; most are in Chinese.
    for (z, e) in zl.iter().zip(&el) {
        assert_eq!(place(z), place(e));
    }
    let chinese = zl.iter().filter(|l| has_cjk(l)).count();
    assert!(
        chinese * 10 >= zl.len() * 8,
        "{chinese}/{}:\n{}",
        zl.len(),
        zh.stdout
    );
    assert!(zh.stderr.contains("个问题") && en.stderr.contains("problem(s)"));
    assert!(!has_cjk(&en.stdout));
}

#[test]
fn a_dialect_syntax_error_keeps_its_class_name_and_place_in_chinese() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.js");
    std::fs::write(&file, "db.x.find(\n  {a: 1,, }\n)\n").unwrap();
    let f = file.to_str().unwrap();
    let zh = schemalab_in(&root(), &[("LANG", "zh_CN.UTF-8")], &["shell", "--file", f]);
    assert_eq!(zh.code, 1, "{}", zh.stderr);
    let line = zh.stderr.lines().next().unwrap();
    // The class name and the place stay as they are in every language.
    assert!(
        line.contains("SyntaxError") && line.contains("（2:"),
        "{line}"
    );
}

/// Every message template the source composes (`Message::new("…")`,
/// `lang.t("…")`, `lang.f("…")`, the dialect's and lint's fixed texts) has
/// a zh-CN entry, so a new English message cannot slip past untranslated.
#[test]
fn every_message_schemalab_writes_has_a_chinese_entry() {
    let catalogue: std::collections::HashMap<String, String> =
        toml::from_str(include_str!("../../src/locale/zh-CN.toml")).unwrap();
    let calls = regex::Regex::new(
        r#"(?s)(?:Message::new|lang\.t|lang\.f|syntax|unsupported|unexpected|ident|err_here|err|bad)\(\s*"((?:[^"\\]|\\.)*)""#,
    )
    .unwrap();
    let fixed = regex::Regex::new(
        r#"(?s)(?:l\.at|l\.span|l\.at_pos|l\.at_byte|self\.at)\([^;"]*?,\s*"((?:[^"\\]|\\.)*)",?\s*\)"#,
    )
    .unwrap();
    let continuation = regex::Regex::new(r"\\\n\s*").unwrap();
    let placeholder = regex::Regex::new(r"\{[a-z_]+\}").unwrap();
    let mut files = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    walk(&root().join("src"), &mut files);
    let mut missing = BTreeSet::new();
    let mut seen = 0;
    for f in files {
        let rel = f
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // The workbench has its own strings module; the engine and the wire
        // layer answer as a server does and are not translated.
        if ["src/tui", "src/engine", "src/wire"]
            .iter()
            .any(|p| rel.starts_with(p))
        {
            continue;
        }
        let src = std::fs::read_to_string(&f).unwrap();
        // Unit tests write messages of their own.
        let src = src
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        for re in [&calls, &fixed] {
            for m in re.captures_iter(src) {
                let t = continuation.replace_all(&m[1], "");
                let t = t
                    .replace("\\\"", "\"")
                    .replace("\\n", "\n")
                    .replace("\\\\", "\\");
                // Pure placeholders and punctuation need no translation.
                if !placeholder
                    .replace_all(&t, "")
                    .chars()
                    .any(|c| c.is_ascii_alphabetic())
                {
                    continue;
                }
                // Keywords the parser expects by name.
                if ["let", "var", "const", "of", "no such text"].contains(&t.as_str()) {
                    continue;
                }
                seen += 1;
                if !catalogue.contains_key(&t) {
                    missing.insert(format!("{rel}: {t:?}"));
                }
            }
        }
    }
    assert!(seen > 150, "the scan finds the messages ({seen})");
    assert!(
        missing.is_empty(),
        "{} without zh-CN:\n{}",
        missing.len(),
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// Every text of the workbench (`src/tui/strings.rs`, which the scan above
/// leaves to its own module) has a zh-CN entry too.
#[test]
fn every_workbench_string_has_a_chinese_entry() {
    let catalogue: std::collections::HashMap<String, String> =
        toml::from_str(include_str!("../../src/locale/zh-CN.toml")).unwrap();
    let constant =
        regex::Regex::new(r#"(?s)pub const ([A-Z0-9_]+): &str =\s*"((?:[^"\\]|\\.)*)";"#).unwrap();
    let placeholder = regex::Regex::new(r"\{[a-z_]+\}").unwrap();
    let src = std::fs::read_to_string(root().join("src/tui/strings.rs")).unwrap();
    let mut seen = 0;
    let mut missing = Vec::new();
    for m in constant.captures_iter(&src) {
        let text = m[2].replace("\\\"", "\"").replace("\\n", "\n");
        // The program's name, keys and marks are the same in every language.
        if &m[1] == "APP"
            || !placeholder
                .replace_all(&text, "")
                .chars()
                .any(|c| c.is_ascii_alphabetic())
        {
            continue;
        }
        seen += 1;
        if !catalogue.contains_key(&text) {
            missing.push(format!("{}: {text:?}", &m[1]));
        }
    }
    assert!(seen > 80, "the scan finds the workbench's texts ({seen})");
    assert!(missing.is_empty(), "without zh-CN:\n{}", missing.join("\n"));
}
