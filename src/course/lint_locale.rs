//! `schemalab lint` for translations: every edition the course offers
//! (a language is offered when `lessons/manifest.<lang>.toml` exists) is
//! checked against the English files. Each translated string's id must
//! exist in English, every English string a learner reads must have a
//! translation (the missing ones are listed), prose must keep the English
//! sections, placeholders and code blocks, and a translated file must hold
//! no English-only leftovers. Problems are `file:line:col` like the rest of
//! lint.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::LintError;
use super::claims::placeholders;
use super::manifest::{
    ExperimentStrings, Lesson, LessonStrings, Manifest, ManifestStrings, lookup,
};
use crate::exercises::manifest::{CheckStrings, ExerciseSpec, ExerciseStrings, exercise_dirs};
use crate::locale::{Lang, Message, is_cjk};
use crate::place::line_col;

struct L {
    errors: Vec<LintError>,
}

impl L {
    fn at(&mut self, file: &Path, line: usize, col: usize, message: impl Into<Message>) {
        self.errors.push(LintError {
            file: file.to_path_buf(),
            line,
            col,
            message: message.into(),
        });
    }
    fn at_byte(&mut self, file: &Path, text: &str, byte: usize, message: impl Into<Message>) {
        let (line, col) = line_col(text, byte);
        self.at(file, line, col, message);
    }
    fn read(&mut self, path: &Path) -> Option<String> {
        match std::fs::read_to_string(path) {
            Ok(t) => Some(t),
            Err(e) => {
                self.at(
                    path,
                    1,
                    1,
                    Message::new("cannot read {path}: {e}")
                        .arg("path", path.display())
                        .arg("e", e),
                );
                None
            }
        }
    }
    fn toml<T: serde::de::DeserializeOwned>(&mut self, path: &Path, text: &str) -> Option<T> {
        match toml::from_str::<T>(text) {
            Ok(v) => Some(v),
            Err(e) => {
                let byte = e.span().map_or(0, |s| s.start);
                self.at_byte(
                    path,
                    text,
                    byte,
                    Message::new("malformed TOML: {detail}").arg("detail", e.message().trim()),
                );
                None
            }
        }
    }
}

/// Check every translation the course under `root` offers.
pub fn lint(root: &Path) -> Vec<LintError> {
    let mut l = L { errors: Vec::new() };
    let mpath = root.join("lessons").join("manifest.toml");
    let Ok(mtext) = std::fs::read_to_string(&mpath) else {
        return l.errors; // the English lint reports it
    };
    let Ok(manifest) = toml::from_str::<Manifest>(&mtext) else {
        return l.errors;
    };
    for lang in Lang::TRANSLATIONS {
        let Some(tpath) = lang.translated_path(&mpath).filter(|p| p.is_file()) else {
            continue; // not offered
        };
        if let Some(text) = l.read(&tpath)
            && let Some(strings) = l.toml::<ManifestStrings>(&tpath, &text)
        {
            match &strings.title {
                Some(t) => leftover(&mut l, &tpath, &text, t, lang),
                None => l.at(
                    &tpath,
                    1,
                    1,
                    Message::new("missing {lang} strings: {list}")
                        .arg("lang", lang)
                        .arg("list", "title"),
                ),
            }
        }
        for entry in &manifest.lessons {
            let dir = root.join("lessons").join(entry.dir.get_ref());
            lint_lesson(&mut l, &dir, lang);
        }
        if let Ok(dirs) = exercise_dirs(root) {
            for (_, dir) in dirs {
                lint_exercise(&mut l, &dir, lang);
            }
        }
    }
    l.errors
}

/// A translated string with no Chinese in it but English words: text that
/// was never translated.
fn untranslated(s: &str, lang: Lang) -> bool {
    if lang != Lang::ZhCn {
        return false;
    }
    let stripped = strip_code(s);
    !s.chars().any(is_cjk) && has_words(&stripped)
}

/// `s` without inline code, placeholders and URLs.
fn strip_code(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    loop {
        let tick = rest.find('`');
        let brace = rest.find("{{");
        let next = match (tick, brace) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let Some(i) = next else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        let (close, skip) = if after.starts_with("{{") {
            (after.find("}}"), 2)
        } else {
            (after[1..].find('`').map(|j| j + 1), 1)
        };
        match close {
            Some(c) => rest = &after[c + skip..],
            None => break,
        }
    }
    out.split_whitespace()
        .filter(|w| !w.starts_with("http://") && !w.starts_with("https://"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// At least two words of three or more Latin letters: a phrase of English
/// rather than a name (`COLLSCAN`, `_id`) standing alone.
fn has_words(s: &str) -> bool {
    s.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 3)
        .count()
        >= 2
}

fn leftover(l: &mut L, path: &Path, text: &str, s: &Spanned<String>, lang: Lang) {
    if untranslated(s.get_ref(), lang) {
        l.at_byte(
            path,
            text,
            s.span().start,
            Message::new("not translated into {lang}: \"{text}\"")
                .arg("lang", lang)
                .arg("text", short(s.get_ref())),
        );
    }
}

fn short(s: &str) -> String {
    let mut out: String = s.chars().take(50).collect();
    if s.chars().count() > 50 {
        out.push('…');
    }
    out
}

/// Keys of a translation map that name nothing in English.
fn unknown_keys<V>(
    l: &mut L,
    path: &Path,
    text: &str,
    map: &BTreeMap<Spanned<String>, V>,
    known: &BTreeSet<String>,
    what: &'static str,
) {
    for k in map.keys() {
        if !known.contains(k.get_ref()) {
            l.at_byte(
                path,
                text,
                k.span().start,
                Message::new("'{key}' is not {what} of the English file (it has: {known})")
                    .arg("key", k.get_ref())
                    .arg_msg("what", Message::new(what))
                    .arg(
                        "known",
                        known.iter().cloned().collect::<Vec<_>>().join(", "),
                    ),
            );
        }
    }
}

fn lint_lesson(l: &mut L, dir: &Path, lang: Lang) {
    let epath = dir.join("lesson.toml");
    let Ok(etext) = std::fs::read_to_string(&epath) else {
        return;
    };
    let Ok(lesson) = toml::from_str::<Lesson>(&etext) else {
        return;
    };
    let Some(tpath) = lang.translated_path(&epath) else {
        return;
    };
    if !tpath.is_file() {
        l.at(
            &tpath,
            1,
            1,
            Message::new("missing: the {lang} edition has no {file} for this lesson")
                .arg("lang", lang)
                .arg("file", file_name(&tpath)),
        );
    } else if let Some(text) = l.read(&tpath)
        && let Some(strings) = l.toml::<LessonStrings>(&tpath, &text)
    {
        lint_lesson_strings(l, &epath, &etext, &lesson, &tpath, &text, &strings, lang);
        if let Some(prose) = &lesson.prose {
            let english = dir.join(prose.get_ref());
            let translated = match &strings.prose {
                Some(p) => dir.join(p.get_ref()),
                None => lang.translated_path(&english).unwrap_or(english.clone()),
            };
            lint_prose(l, &english, &translated, lang);
        }
        return;
    }
    // Without the strings file the prose is still checked when present.
    if let Some(prose) = &lesson.prose {
        let english = dir.join(prose.get_ref());
        if let Some(t) = lang.translated_path(&english) {
            lint_prose(l, &english, &t, lang);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn lint_lesson_strings(
    l: &mut L,
    epath: &Path,
    etext: &str,
    lesson: &Lesson,
    tpath: &Path,
    text: &str,
    strings: &LessonStrings,
    lang: Lang,
) {
    let mut missing = Vec::new();
    for (name, s, english) in [
        ("title", &strings.title, &lesson.title),
        ("summary", &strings.summary, &lesson.summary),
    ] {
        match s {
            Some(s) => leftover(l, tpath, text, s, lang),
            None if !english.trim().is_empty() => missing.push(name.to_string()),
            None => {}
        }
    }
    let exp_ids: BTreeSet<String> = lesson
        .experiments
        .iter()
        .map(|e| e.id.get_ref().clone())
        .collect();
    unknown_keys(
        l,
        tpath,
        text,
        &strings.experiments,
        &exp_ids,
        "an experiment",
    );
    let empty = ExperimentStrings::default();
    for exp in &lesson.experiments {
        let eid = exp.id.get_ref();
        let tr = lookup(&strings.experiments, eid).unwrap_or(&empty);
        match &tr.title {
            Some(s) => leftover(l, tpath, text, s, lang),
            None if !exp.title.trim().is_empty() => {
                missing.push(format!("experiments.{eid}.title"))
            }
            None => {}
        }
        let ids = |v: Vec<&Spanned<String>>| v.into_iter().map(|s| s.get_ref().clone()).collect();
        let variants: BTreeSet<String> = ids(exp.variants.iter().map(|v| &v.id).collect());
        let ops: BTreeSet<String> = ids(exp.operations.iter().map(|o| &o.id).collect());
        let claims: BTreeSet<String> =
            ids(exp.claims.iter().filter_map(|c| c.id.as_ref()).collect());
        unknown_keys(l, tpath, text, &tr.variants, &variants, "a variant");
        unknown_keys(l, tpath, text, &tr.operations, &ops, "an operation");
        unknown_keys(l, tpath, text, &tr.claims, &claims, "a claim id");
        for (map, english, what) in [
            (
                &tr.variants,
                exp.variants
                    .iter()
                    .filter(|v| !v.title.trim().is_empty())
                    .map(|v| v.id.get_ref().clone())
                    .collect::<Vec<_>>(),
                "variants",
            ),
            (
                &tr.operations,
                exp.operations
                    .iter()
                    .filter(|o| !o.title.trim().is_empty())
                    .map(|o| o.id.get_ref().clone())
                    .collect(),
                "operations",
            ),
            (
                &tr.claims,
                exp.claims
                    .iter()
                    .filter_map(|c| c.id.as_ref())
                    .map(|i| i.get_ref().clone())
                    .collect(),
                "claims",
            ),
        ] {
            for id in english {
                match lookup(map, &id) {
                    Some(s) => leftover(l, tpath, text, s, lang),
                    None => missing.push(format!("experiments.{eid}.{what}.{id}")),
                }
            }
        }
        for c in exp.claims.iter().filter(|c| c.id.is_none()) {
            l.at_byte(
                epath,
                etext,
                c.check.span().start,
                Message::new("this claim has no id, so the {lang} edition cannot translate it: add id = \"…\"")
                    .arg("lang", lang),
            );
        }
    }
    if !missing.is_empty() {
        l.at(
            tpath,
            1,
            1,
            Message::new("missing {lang} strings: {list}")
                .arg("lang", lang)
                .arg("list", missing.join(", ")),
        );
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The `##` headings of a Markdown text outside code blocks, with their
/// byte offsets, and the number of fenced code blocks.
fn sections(md: &str) -> (Vec<usize>, usize) {
    let (mut heads, mut fences, mut in_code, mut at) = (Vec::new(), 0, false, 0);
    for line in md.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            if !in_code {
                fences += 1;
            }
            in_code = !in_code;
        } else if !in_code && line.starts_with("## ") {
            heads.push(at);
        }
        at += line.len();
    }
    (heads, fences)
}

/// Placeholder expressions, whitespace removed, as a sorted list.
fn placeholder_set(md: &str) -> Vec<String> {
    let (found, _) = placeholders(md);
    let mut v: Vec<String> = found
        .iter()
        .map(|p| {
            md[p.range.clone()]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect()
        })
        .collect();
    v.sort();
    v
}

fn lint_prose(l: &mut L, english: &Path, translated: &Path, lang: Lang) {
    let Ok(en) = std::fs::read_to_string(english) else {
        return;
    };
    if !translated.is_file() {
        l.at(
            translated,
            1,
            1,
            Message::new("missing: the {lang} edition has no {file}")
                .arg("lang", lang)
                .arg("file", file_name(translated)),
        );
        return;
    }
    let Some(tr) = l.read(translated) else {
        return;
    };
    let (eh, ef) = sections(&en);
    let (th, tf) = sections(&tr);
    if eh.len() != th.len() {
        let at = th.get(eh.len()).copied().unwrap_or(tr.len());
        l.at_byte(
            translated,
            &tr,
            at,
            Message::new("{n} '## ' sections where {file} has {m}")
                .arg("n", th.len())
                .arg("file", file_name(english))
                .arg("m", eh.len()),
        );
    }
    if ef != tf {
        l.at(
            translated,
            1,
            1,
            Message::new("{n} code blocks where {file} has {m}")
                .arg("n", tf)
                .arg("file", file_name(english))
                .arg("m", ef),
        );
    }
    let (ep, tp) = (placeholder_set(&en), placeholder_set(&tr));
    if ep != tp {
        let only = |a: &[String], b: &[String]| {
            let mut b = b.to_vec();
            a.iter()
                .filter(|x| match b.iter().position(|y| y == *x) {
                    Some(i) => {
                        b.remove(i);
                        false
                    }
                    None => true,
                })
                .cloned()
                .collect::<Vec<_>>()
        };
        l.at(
            translated,
            1,
            1,
            Message::new("placeholders differ from {file}: missing [{missing}], extra [{extra}]")
                .arg("file", file_name(english))
                .arg("missing", only(&ep, &tp).join(" "))
                .arg("extra", only(&tp, &ep).join(" ")),
        );
    }
    // English-only leftovers: a prose line outside code with English
    // words and no Chinese.
    let mut in_code = false;
    for (n, line) in tr.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_code = !in_code;
            continue;
        }
        if in_code || t.is_empty() {
            continue;
        }
        if untranslated(line, lang) {
            l.at(
                translated,
                n + 1,
                1,
                Message::new("not translated into {lang}: \"{text}\"")
                    .arg("lang", lang)
                    .arg("text", short(line.trim())),
            );
        }
    }
}

fn lint_exercise(l: &mut L, dir: &Path, lang: Lang) {
    let epath = dir.join("exercise.toml");
    let Ok(etext) = std::fs::read_to_string(&epath) else {
        return;
    };
    let Ok(spec) = toml::from_str::<ExerciseSpec>(&etext) else {
        return;
    };
    for file in [&spec.prompt, &spec.explanation] {
        let english = dir.join(file.get_ref());
        if let Some(t) = lang.translated_path(&english) {
            lint_prose(l, &english, &t, lang);
        }
    }
    let Some(tpath) = lang.translated_path(&epath) else {
        return;
    };
    if !tpath.is_file() {
        l.at(
            &tpath,
            1,
            1,
            Message::new("missing: the {lang} edition has no {file} for this exercise")
                .arg("lang", lang)
                .arg("file", file_name(&tpath)),
        );
        return;
    }
    let Some(text) = l.read(&tpath) else {
        return;
    };
    let Some(strings) = l.toml::<ExerciseStrings>(&tpath, &text) else {
        return;
    };
    lint_exercise_strings(l, &spec, &tpath, &text, &strings, lang);
}

fn lint_exercise_strings(
    l: &mut L,
    spec: &ExerciseSpec,
    tpath: &Path,
    text: &str,
    strings: &ExerciseStrings,
    lang: Lang,
) {
    let mut missing: Vec<String> = Vec::new();
    for (name, s, english) in [
        ("title", &strings.title, &spec.title),
        ("summary", &strings.summary, &spec.summary),
        ("wrong_idea", &strings.wrong_idea, &spec.wrong_idea),
    ] {
        match s {
            Some(s) => leftover(l, tpath, text, s, lang),
            None if !english.trim().is_empty() => missing.push(name.into()),
            None => {}
        }
    }
    match &strings.hints {
        Some(h) if h.get_ref().len() != spec.hints.len() => l.at_byte(
            tpath,
            text,
            h.span().start,
            Message::new("{n} hints where exercise.toml has {m}")
                .arg("n", h.get_ref().len())
                .arg("m", spec.hints.len()),
        ),
        Some(h) => {
            for s in h.get_ref() {
                if untranslated(s, lang) {
                    l.at_byte(
                        tpath,
                        text,
                        h.span().start,
                        Message::new("not translated into {lang}: \"{text}\"")
                            .arg("lang", lang)
                            .arg("text", short(s)),
                    );
                }
            }
        }
        None if !spec.hints.is_empty() => missing.push("hints".into()),
        None => {}
    }
    let ops: BTreeSet<String> = spec
        .operations
        .iter()
        .map(|o| o.id.get_ref().clone())
        .collect();
    unknown_keys(l, tpath, text, &strings.operations, &ops, "an operation");
    for op in &spec.operations {
        match lookup(&strings.operations, op.id.get_ref()) {
            Some(s) => leftover(l, tpath, text, s, lang),
            None if !op.title.trim().is_empty() => {
                missing.push(format!("operations.{}", op.id.get_ref()))
            }
            None => {}
        }
    }
    let checks: BTreeSet<String> = spec.checks.iter().map(|c| c.id.get_ref().clone()).collect();
    unknown_keys(l, tpath, text, &strings.checks, &checks, "a check");
    let empty = CheckStrings::default();
    for c in &spec.checks {
        let id = c.id.get_ref();
        let tr = lookup(&strings.checks, id).unwrap_or(&empty);
        for (name, s, english) in [("text", &tr.text, &c.text), ("hint", &tr.hint, &c.hint)] {
            match s {
                Some(s) => leftover(l, tpath, text, s, lang),
                None if !english.trim().is_empty() => missing.push(format!("checks.{id}.{name}")),
                None => {}
            }
        }
        let items: BTreeSet<String> = c.key.keys().cloned().collect();
        unknown_keys(l, tpath, text, &tr.key, &items, "a key item");
        for (item, entry) in &c.key {
            match lookup(&tr.key, item).and_then(|k| k.why.as_ref()) {
                Some(s) => leftover(l, tpath, text, s, lang),
                None if !entry.why.trim().is_empty() => {
                    missing.push(format!("checks.{id}.key.{item}.why"))
                }
                None => {}
            }
        }
    }
    if !missing.is_empty() {
        l.at(
            tpath,
            1,
            1,
            Message::new("missing {lang} strings: {list}")
                .arg("lang", lang)
                .arg("list", missing.join(", ")),
        );
    }
}

/// Every translated file of the course, for the originality test and for
/// tools: (language, path).
pub fn translated_files(root: &Path) -> Vec<(Lang, PathBuf)> {
    let mut out = Vec::new();
    let mut walk = vec![root.join("lessons")];
    while let Some(d) = walk.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                walk.push(p);
                continue;
            }
            let name = file_name(&p);
            for lang in Lang::TRANSLATIONS {
                let tag = format!(".{}.", lang.tag());
                if name.contains(&tag) {
                    out.push((lang, p.clone()));
                }
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_are_english_phrases_without_chinese() {
        assert!(untranslated("One document per reading", Lang::ZhCn));
        assert!(!untranslated("每条读数一个文档", Lang::ZhCn));
        assert!(!untranslated(
            "`db.readings.find({sensor_id: 1})`",
            Lang::ZhCn
        ));
        assert!(!untranslated("COLLSCAN", Lang::ZhCn));
        assert!(!untranslated(
            "{{ naive.coll.readings.count }} / {{ a.b }}",
            Lang::ZhCn
        ));
        assert!(!untranslated("One document per reading", Lang::En));
    }

    #[test]
    fn sections_ignore_headings_inside_code() {
        let md = "# T\n\n## A\n\n```js\n## not a heading\n```\n\n## B\n";
        let (h, f) = sections(md);
        assert_eq!((h.len(), f), (2, 1));
    }
}
