//! `schemalab lint` for exercises: every `exercise.toml` deserialises, the
//! files it names exist, the starter, reference and wrong solutions parse
//! as mongosh JavaScript section by section and stay in their database,
//! the reference and wrong solutions answer every operation, every check
//! says exactly one thing and names declared variants, operations and
//! checks, and the dataset exists. Problems are `file:line:col` like the
//! lessons' lint.

use std::collections::BTreeSet;
use std::path::Path;

use toml::Spanned;

use super::manifest::{ExerciseSpec, Solution, exercise_dirs};
use crate::course::claims::{Check, Target, parse_expr};
use crate::course::runner::stays_in;
use crate::course::{LintError, OpKind, is_plain_name};
use crate::dialect::parse_program;
use crate::locale::Message;
use crate::place::line_col;

const VARIANTS: [&str; 4] = ["mine", "ref", "mine_start", "ref_start"];

struct L<'a> {
    errors: &'a mut Vec<LintError>,
}

impl L<'_> {
    fn at(&mut self, file: &Path, line: usize, col: usize, msg: impl Into<Message>) {
        self.errors.push(LintError {
            file: file.to_path_buf(),
            line,
            col,
            message: msg.into(),
        });
    }
    fn span(&mut self, file: &Path, text: &str, s: &Spanned<String>, msg: impl Into<Message>) {
        let (line, col) = line_col(text, s.span().start);
        self.at(file, line, col, msg);
    }
}

/// Lint every exercise of the course under `root`; `datasets` are the
/// catalog's dataset names when it could be read.
pub fn lint(root: &Path, datasets: Option<&BTreeSet<String>>) -> Vec<LintError> {
    let mut errors = Vec::new();
    let mut l = L {
        errors: &mut errors,
    };
    let Ok(dirs) = exercise_dirs(root) else {
        // The lessons' lint reports an unreadable manifest.
        return errors;
    };
    let mut ids = BTreeSet::new();
    for (_, dir) in dirs {
        let path = dir.join("exercise.toml");
        let id = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !is_plain_name(&id) {
            l.at(
                &path,
                1,
                1,
                Message::new("exercise folder '{id}' must be 1-40 letters, digits, '_' or '-' (it names a database)").arg("id", &id),
            );
        }
        if !ids.insert(id.clone()) {
            l.at(
                &path,
                1,
                1,
                Message::new("duplicate exercise id '{id}'").arg("id", &id),
            );
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            l.at(&path, 1, 1, "cannot be read");
            continue;
        };
        let spec: ExerciseSpec = match toml::from_str(&text) {
            Ok(s) => s,
            Err(e) => {
                let (line, col) = e.span().map_or((1, 1), |s| line_col(&text, s.start));
                l.at(
                    &path,
                    line,
                    col,
                    Message::new("malformed TOML: {detail}").arg("detail", e.message().trim()),
                );
                continue;
            }
        };
        lint_spec(&mut l, &id, &dir, &path, &text, &spec, datasets);
    }
    errors.sort();
    errors
}

fn lint_spec(
    l: &mut L<'_>,
    id: &str,
    dir: &Path,
    path: &Path,
    text: &str,
    spec: &ExerciseSpec,
    datasets: Option<&BTreeSet<String>>,
) {
    if let Some(ds) = datasets
        && !ds.contains(spec.dataset.get_ref())
    {
        l.span(
            path,
            text,
            &spec.dataset,
            Message::new("unknown dataset '{name}'").arg("name", spec.dataset.get_ref()),
        );
    }
    if spec.scale.parse::<crate::course::Scale>().is_err() {
        l.at(
            path,
            1,
            1,
            Message::new("unknown scale '{scale}'").arg("scale", &spec.scale),
        );
    }
    let ops: Vec<(&str, OpKind, bool)> = spec
        .operations
        .iter()
        .map(|o| (o.id.get_ref().as_str(), o.kind, o.result.is_some()))
        .collect();
    let probes: BTreeSet<&str> = spec
        .operations
        .iter()
        .filter(|o| o.probe.is_some() || o.uses.is_some())
        .map(|o| o.id.get_ref().as_str())
        .collect();
    let param_names: BTreeSet<&str> = spec
        .params
        .iter()
        .map(|p| p.name.get_ref().as_str())
        .collect();
    for o in &spec.operations {
        if let Some(u) = &o.uses
            && (probes.contains(u.get_ref().as_str())
                || !spec
                    .operations
                    .iter()
                    .any(|x| x.id.get_ref() == u.get_ref()))
        {
            l.span(
                path,
                text,
                u,
                Message::new("`uses` must name an operation the learner writes, not '{op}'")
                    .arg("op", u.get_ref()),
            );
        }
        for (name, param) in &o.with {
            if !param_names.contains(param.as_str()) {
                l.span(
                    path,
                    text,
                    &o.id,
                    Message::new("`with` binds {name} to '{param}', which is no parameter")
                        .arg("name", name)
                        .arg("param", param),
                );
            }
        }
    }
    for o in &spec.operations {
        if let Some(p) = &o.probe
            && let Err(e) = parse_program(p.get_ref())
        {
            l.span(
                path,
                text,
                p,
                Message::new("probe does not parse: {e}").arg_msg("e", e.message()),
            );
        }
    }
    let mut seen = BTreeSet::new();
    for o in &spec.operations {
        if !seen.insert(o.id.get_ref().clone()) {
            l.span(
                path,
                text,
                &o.id,
                Message::new("duplicate operation '{op}'").arg("op", o.id.get_ref()),
            );
        }
        if o.result.is_some() && o.kind == OpKind::Write {
            l.span(path, text, &o.id, "only a read has a compared result");
        }
    }
    if ops.is_empty() {
        l.at(path, 1, 1, "the exercise has no [[operations]]");
    }
    for p in &spec.params {
        let sources = usize::from(p.from.is_some() || p.field.is_some() || p.pipeline.is_some())
            + usize::from(p.seq.is_some())
            + usize::from(p.value.is_some());
        if sources != 1
            || p.from.is_some() != (p.field.is_some() || p.pipeline.is_some())
            || (p.field.is_some() && p.pipeline.is_some())
        {
            l.span(
                path,
                text,
                &p.name,
                "a parameter takes exactly one of from + field, from + pipeline, seq or value",
            );
        }
    }
    // Files.
    let db = crate::course::DbNames::default().exercise(id);
    let mut files = vec![
        (&spec.prompt, false),
        (&spec.explanation, false),
        (&spec.starter, true),
        (&spec.reference, true),
        (&spec.wrong, true),
    ];
    files.extend(spec.alternatives.iter().map(|f| (f, true)));
    files.extend(spec.mistakes.iter().map(|m| (&m.file, true)));
    if let Some(a) = &spec.answers {
        for f in [&a.starter, &a.reference, &a.wrong] {
            files.push((f, false));
            if let Ok(t) = std::fs::read_to_string(dir.join(f.get_ref()))
                && let Err(e) = t.parse::<toml::Table>()
            {
                let (line, col) = e.span().map_or((1, 1), |s| line_col(&t, s.start));
                l.at(
                    &dir.join(f.get_ref()),
                    line,
                    col,
                    Message::new("malformed TOML: {detail}").arg("detail", e.message().trim()),
                );
            }
        }
    }
    for (f, is_solution) in files {
        let fpath = dir.join(f.get_ref());
        let Ok(ftext) = std::fs::read_to_string(&fpath) else {
            l.span(
                path,
                text,
                f,
                Message::new("{path} does not exist").arg("path", fpath.display()),
            );
            continue;
        };
        if !is_solution {
            continue;
        }
        let sol = Solution::parse(&ftext);
        for (op, line) in &sol.duplicates {
            l.at(
                &fpath,
                *line,
                1,
                Message::new("a second `// @op {op}` section").arg("op", op),
            );
        }
        let mut sections = vec![(String::new(), sol.setup.clone())];
        sections.extend(sol.ops.iter().map(|(k, s)| (k.clone(), s.text.clone())));
        for (op, src) in &sections {
            match parse_program(src) {
                Ok(p) => {
                    if let Err(e) = stays_in(&p, &db) {
                        l.at(
                            &fpath,
                            e.pos.line as usize,
                            e.pos.col as usize,
                            e.message.clone(),
                        );
                    }
                }
                Err(e) => {
                    let (line, col) = e
                        .position()
                        .map_or((1, 1), |p| (p.line as usize, p.col as usize));
                    l.at(&fpath, line, col, e.message());
                }
            }
            if !op.is_empty()
                && (!ops.iter().any(|(id, _, _)| id == op) || probes.contains(op.as_str()))
            {
                let line = sol.ops.get(op).map_or(1, |s| s.line);
                l.at(
                    &fpath,
                    line,
                    1,
                    Message::new(
                        "no operation '{op}' to write in exercise.toml (probes are the checker's)",
                    )
                    .arg("op", op),
                );
            }
        }
        for (op, _, _) in &ops {
            if !probes.contains(op) && !sol.ops.contains_key(*op) {
                l.at(
                    &fpath,
                    1,
                    1,
                    Message::new("no `// @op {op}` section").arg("op", op),
                );
            }
        }
    }
    // Checks.
    let mut check_ids = BTreeSet::new();
    let op_exists = |name: &str| ops.iter().find(|(id, _, _)| *id == name);
    for c in &spec.checks {
        let cid = c.id.get_ref();
        if !check_ids.insert(cid.clone()) {
            l.span(
                path,
                text,
                &c.id,
                Message::new("duplicate check '{cid}'").arg("cid", cid),
            );
        }
        if let Some(design) = gives_design(&c.hint) {
            l.span(
                path,
                text,
                &c.id,
                Message::new(
                    "check '{cid}': its hint gives the design ('{design}'); say the principle here and move the design into the staged hints",
                )
                .arg("cid", cid)
                .arg("design", design),
            );
        }
        let kinds = usize::from(c.check.is_some())
            + usize::from(c.same.is_some())
            + usize::from(c.no_collscan.is_some())
            + usize::from(c.answer.is_some())
            + usize::from(c.classify.is_some());
        if kinds != 1 {
            l.span(
                path,
                text,
                &c.id,
                "a check takes exactly one of check, same, no_collscan, answer or classify",
            );
        }
        if let Some(chk) = &c.check {
            match Check::parse(chk.get_ref()) {
                Ok(parsed) => {
                    for m in parsed.metrics() {
                        if !VARIANTS.contains(&m.variant.as_str()) {
                            l.span(
                                path,
                                text,
                                chk,
                                Message::new(
                                    "'{vid}' is not one of mine, ref, mine_start, ref_start",
                                )
                                .arg("vid", &m.variant),
                            );
                        }
                        if let Target::Op { id, .. } = &m.target
                            && op_exists(id).is_none()
                        {
                            l.span(
                                path,
                                text,
                                chk,
                                Message::new("no operation '{op}'").arg("op", id),
                            );
                        }
                    }
                }
                Err(e) => l.span(
                    path,
                    text,
                    chk,
                    Message::new("{e} (column {col} of the check)")
                        .arg_msg("e", e.message.clone())
                        .arg("col", e.col),
                ),
            }
        }
        for (name, need_result) in [(&c.same, true), (&c.no_collscan, false)] {
            if let Some(op) = name {
                match op_exists(op.get_ref()) {
                    None => l.span(
                        path,
                        text,
                        op,
                        Message::new("no operation '{op}'").arg("op", op.get_ref()),
                    ),
                    Some((_, OpKind::Write, _)) => {
                        l.span(path, text, op, "this check needs a read operation");
                    }
                    Some((_, _, has_result)) if need_result && !has_result => {
                        l.span(
                            path,
                            text,
                            op,
                            "`same` needs the operation to declare `result`",
                        );
                    }
                    _ => {}
                }
            }
        }
        if c.answer.is_some() != c.expect.is_some() {
            l.span(path, text, &c.id, "`answer` and `expect` go together");
        }
        if let Some(e) = &c.expect
            && let Err(err) = parse_expr(e.get_ref())
        {
            l.span(path, text, e, Message::verbatim(err));
        }
        if (c.answer.is_some() || c.classify.is_some()) && spec.answers.is_none() {
            l.span(
                path,
                text,
                &c.id,
                "this check reads answers: declare [answers]",
            );
        }
        if c.classify.is_some() && c.key.is_empty() {
            l.span(path, text, &c.id, "`classify` needs a [checks.key] table");
        }
    }
    if spec.checks.is_empty() {
        l.at(path, 1, 1, "the exercise has no [[checks]]");
    }
    if spec.wrong_fails.is_empty() {
        l.at(
            path,
            1,
            1,
            "`wrong_fails` must name the check(s) the wrong solution fails",
        );
    }
    for w in spec
        .wrong_fails
        .iter()
        .chain(spec.mistakes.iter().flat_map(|m| &m.fails))
    {
        if !check_ids.contains(w.get_ref()) {
            l.span(
                path,
                text,
                w,
                Message::new("no check '{cid}'").arg("cid", w.get_ref()),
            );
        }
    }
    if spec.hints.is_empty() {
        l.at(path, 1, 1, "the exercise has no hints");
    }
    if spec.hints_after == Some(0) {
        l.at(
            path,
            1,
            1,
            "hints_after = 0 would reveal a design hint on the first check: use 1 or more",
        );
    }
}

/// Statement methods a check's hint must not name: they are the design.
const DESIGN_WORDS: [&str; 12] = [
    "createIndex",
    "updateOne",
    "updateMany",
    "insertOne",
    "insertMany",
    "replaceOne",
    "deleteOne",
    "deleteMany",
    "aggregate(",
    "findOneAnd",
    "bulkWrite",
    "db.",
];

/// The piece of `hint` that gives a design away, if any: an index key or
/// document pattern (`{host_id: 1`), an operator or stage (`$limit`), a
/// statement method (`updateMany`). A check's hint states a principle;
/// designs are for the staged hints (issue 28).
pub fn gives_design(hint: &str) -> Option<String> {
    if let Some(i) = hint.find('{') {
        let end = hint[i..].find('}').map_or(hint.len(), |j| i + j + 1);
        return Some(hint[i..end].to_string());
    }
    let bytes = hint.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'$' && bytes.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
            let word: String = hint[i..]
                .chars()
                .take_while(|c| *c == '$' || c.is_ascii_alphanumeric())
                .collect();
            return Some(word);
        }
    }
    DESIGN_WORDS
        .iter()
        .find(|w| hint.contains(*w))
        .map(|w| (*w).to_string())
}
