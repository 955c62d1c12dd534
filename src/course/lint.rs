//! `schemalab lint`: check a course without a server and report every
//! problem as `file:line:col: message`. It checks the manifest, every
//! `lesson.toml`, that referenced files exist, that setup scripts and
//! operation statements parse as mongosh JavaScript (and stay in their
//! variant's database), that datasets exist in `datasets/catalog.toml`,
//! that claims parse and name declared variants and operations, and that
//! the prose's Markdown and `{{ }}` placeholders are well formed.
//! Translations are checked by [`super::lint_locale`].

use std::collections::BTreeSet;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::claims::{Check, Metric, Target, placeholders};
use super::manifest::{FORMAT_VERSION, Lesson, Manifest};
use super::runner::stays_in;
use super::{DbNames, OpKind, is_plain_name};
use crate::dialect::{DialectError, parse_program};
use crate::locale::{Lang, Localized, Message};
use crate::place::line_col;

/// One problem, at a 1-based line and column of a file. `Display` writes
/// it in English, [`Localized::render_in`] in any language (the place
/// stays as it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintError {
    pub file: PathBuf,
    pub line: usize,
    pub col: usize,
    pub message: Message,
}

impl LintError {
    fn key(&self) -> (&PathBuf, usize, usize, String) {
        (&self.file, self.line, self.col, self.message.to_string())
    }
}

impl PartialOrd for LintError {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LintError {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl Localized for LintError {
    fn render_in(&self, lang: Lang) -> String {
        format!(
            "{}:{}:{}: {}",
            self.file.display(),
            self.line,
            self.col,
            self.message.render_in(lang)
        )
    }
}

impl fmt::Display for LintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_in(Lang::En))
    }
}

struct Linter {
    errors: Vec<LintError>,
}

impl Linter {
    fn at(&mut self, file: &Path, text: &str, byte: usize, message: impl Into<Message>) {
        let (line, col) = line_col(text, byte);
        self.errors.push(LintError {
            file: file.to_path_buf(),
            line,
            col,
            message: message.into(),
        });
    }

    fn at_pos(&mut self, file: &Path, line: usize, col: usize, message: impl Into<Message>) {
        self.errors.push(LintError {
            file: file.to_path_buf(),
            line,
            col,
            message: message.into(),
        });
    }

    /// The content file `rel` of folder `dir`, named at `from` (file,
    /// text, byte): it must stay inside `dir`.
    fn read_content(
        &mut self,
        dir: &Path,
        rel: &str,
        from: (&Path, &str, usize),
    ) -> Option<String> {
        match crate::files::inside(dir, rel) {
            Ok(path) => self.read(&path, Some(from)),
            Err(e) => {
                let (file, text, byte) = from;
                self.at(file, text, byte, Message::new("{e}").arg("e", e));
                None
            }
        }
    }

    fn read(&mut self, path: &Path, from: Option<(&Path, &str, usize)>) -> Option<String> {
        match crate::files::read_text(path) {
            Ok(t) => Some(t),
            Err(e) => {
                let message = Message::new("cannot read {path}: {e}")
                    .arg("path", path.display())
                    .arg("e", e);
                match from {
                    Some((file, text, byte)) => self.at(file, text, byte, message),
                    None => self.at_pos(path, 1, 1, message),
                }
                None
            }
        }
    }

    fn toml<T: serde::de::DeserializeOwned>(&mut self, path: &Path, text: &str) -> Option<T> {
        match toml::from_str::<T>(text) {
            Ok(v) => Some(v),
            Err(e) => {
                let byte = e.span().map_or(0, |s| s.start);
                self.at(
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

/// Where the content of a TOML string value starts (past its quotes) and
/// how a 1-based (line, col) inside the content maps back to the file.
/// Escape sequences are assumed absent (columns after one shift by its
/// length), which is what statements and checks contain in practice.
fn inner_pos(text: &str, span: &Range<usize>, line: usize, col: usize) -> (usize, usize) {
    let raw = text.get(span.clone()).unwrap_or("");
    let triple = raw.starts_with("\"\"\"") || raw.starts_with("'''");
    let mut start = span.start + if triple { 3 } else { 1 };
    // A newline right after the opening triple quote is not part of the value.
    if triple && text[start.min(text.len())..].starts_with('\n') {
        start += 1;
    } else if triple && text[start.min(text.len())..].starts_with("\r\n") {
        start += 2;
    }
    let (l0, c0) = line_col(text, start);
    if line <= 1 {
        (l0, c0 + col.saturating_sub(1))
    } else {
        (l0 + line - 1, col)
    }
}

/// Check the course under `root` (`root/lessons/manifest.toml`); an empty
/// list means it is clean. Errors come sorted by file and position.
pub fn lint(root: impl AsRef<Path>) -> Vec<LintError> {
    let root = root.as_ref();
    let mut l = Linter { errors: Vec::new() };
    let datasets = catalog_names(&mut l, &root.join("datasets").join("catalog.toml"));
    let mpath = root.join("lessons").join("manifest.toml");
    let Some(mtext) = l.read(&mpath, None) else {
        return l.errors;
    };
    let Some(manifest) = l.toml::<Manifest>(&mpath, &mtext) else {
        return l.errors;
    };
    if *manifest.format_version.get_ref() != FORMAT_VERSION {
        l.at(
            &mpath,
            &mtext,
            manifest.format_version.span().start,
            Message::new("format_version {found} is not supported (this build reads {supported})")
                .arg("found", manifest.format_version.get_ref())
                .arg("supported", FORMAT_VERSION),
        );
    }
    if manifest.lessons.is_empty() {
        l.at_pos(&mpath, 1, 1, "the manifest lists no [[lessons]]");
    }
    let mut ids = BTreeSet::new();
    for entry in &manifest.lessons {
        let id = entry.id.get_ref();
        if !is_plain_name(id) {
            l.at(
                &mpath,
                &mtext,
                entry.id.span().start,
                Message::new(
                    "lesson id '{id}' must be 1-40 letters, digits, '_' or '-' (it names databases)",
                )
                .arg("id", id),
            );
        }
        if !ids.insert(id.clone()) {
            l.at(
                &mpath,
                &mtext,
                entry.id.span().start,
                Message::new("duplicate lesson id '{id}'").arg("id", id),
            );
        }
        let dir = root.join("lessons").join(entry.dir.get_ref());
        let lpath = dir.join("lesson.toml");
        if !lpath.is_file() {
            l.at(
                &mpath,
                &mtext,
                entry.dir.span().start,
                Message::new("{path} does not exist").arg("path", lpath.display()),
            );
            continue;
        }
        lint_lesson(&mut l, id, &dir, &lpath, datasets.as_ref());
    }
    // Exercises next to the lessons (their own module checks them).
    l.errors
        .extend(crate::exercises::lint::lint(root, datasets.as_ref()));
    // Every edition the course offers, against the English files.
    l.errors.extend(super::lint_locale::lint(root));
    l.errors.sort();
    l.errors.dedup();
    l.errors
}

fn catalog_names(l: &mut Linter, path: &Path) -> Option<BTreeSet<String>> {
    let text = l.read(path, None)?;
    let table: toml::Table = l.toml(path, &text)?;
    // Numbers in range: nothing that passes lint may overflow in `run`.
    let problems = crate::datasets::range_errors(&text, &path.display().to_string());
    for e in problems {
        if let crate::datasets::DatasetError::Catalog {
            line, col, message, ..
        } = e
        {
            l.at_pos(path, line, col, message);
        }
    }
    Some(
        table
            .into_iter()
            .filter(|(_, v)| v.is_table())
            .map(|(k, _)| k)
            .collect(),
    )
}

fn dialect_pos(e: &DialectError) -> (usize, usize) {
    e.position()
        .map_or((1, 1), |p| (p.line as usize, p.col as usize))
}

fn lint_lesson(
    l: &mut Linter,
    lesson_id: &str,
    dir: &Path,
    path: &Path,
    datasets: Option<&BTreeSet<String>>,
) {
    let Some(text) = l.read(path, None) else {
        return;
    };
    let Some(lesson) = l.toml::<Lesson>(path, &text) else {
        return;
    };
    let t = text.as_str();
    // Variants and operations across the lesson, for the prose.
    let mut all_variants = BTreeSet::new();
    let mut all_ops = BTreeSet::new();
    let mut exp_ids = BTreeSet::new();
    for exp in &lesson.experiments {
        if !exp_ids.insert(exp.id.get_ref().clone()) {
            l.at(
                path,
                t,
                exp.id.span().start,
                Message::new("duplicate experiment id '{id}'").arg("id", exp.id.get_ref()),
            );
        }
        if let Some(names) = datasets
            && !names.contains(exp.dataset.get_ref())
        {
            l.at(
                path,
                t,
                exp.dataset.span().start,
                Message::new("unknown dataset '{name}' (datasets/catalog.toml has: {known})")
                    .arg("name", exp.dataset.get_ref())
                    .arg(
                        "known",
                        names.iter().cloned().collect::<Vec<_>>().join(", "),
                    ),
            );
        }
        if exp.variants.is_empty() {
            l.at(
                path,
                t,
                exp.id.span().start,
                "an experiment needs at least one variant",
            );
        }
        let mut variants = BTreeSet::new();
        for v in &exp.variants {
            let vid = v.id.get_ref();
            if !is_plain_name(vid) {
                l.at(
                    path,
                    t,
                    v.id.span().start,
                    Message::new("variant id '{vid}' must be 1-40 letters, digits, '_' or '-'")
                        .arg("vid", vid),
                );
            }
            if !variants.insert(vid.clone()) {
                l.at(
                    path,
                    t,
                    v.id.span().start,
                    Message::new("duplicate variant id '{vid}'").arg("vid", vid),
                );
            }
            all_variants.insert(vid.clone());
            let db = DbNames::default().lesson(lesson_id, vid);
            if let Some(setup) = &v.setup {
                let spath = dir.join(setup.get_ref());
                if let Some(src) =
                    l.read_content(dir, setup.get_ref(), (path, t, setup.span().start))
                {
                    match parse_program(&src) {
                        Ok(p) => {
                            if let Err(e) = stays_in(&p, &db) {
                                l.at_pos(
                                    &spath,
                                    e.pos.line as usize,
                                    e.pos.col as usize,
                                    e.message,
                                );
                            }
                        }
                        Err(e) => {
                            let (line, col) = dialect_pos(&e);
                            l.at_pos(&spath, line, col, e.message());
                        }
                    }
                }
            }
        }
        let mut ops = BTreeSet::new();
        for op in &exp.operations {
            let oid = op.id.get_ref();
            if !ops.insert(oid.clone()) {
                l.at(
                    path,
                    t,
                    op.id.span().start,
                    Message::new("duplicate operation id '{oid}'").arg("oid", oid),
                );
            }
            all_ops.insert(oid.clone());
            for vid in &variants {
                if !op.run.contains_key(vid) {
                    l.at(
                        path,
                        t,
                        op.id.span().start,
                        Message::new("operation '{oid}' has no statement for variant '{vid}'")
                            .arg("oid", oid)
                            .arg("vid", vid),
                    );
                }
            }
            for (vid, stmt) in &op.run {
                lint_statement(l, path, t, lesson_id, &variants, vid, op.kind, stmt);
            }
            // Preparations are untimed statements of any kind.
            for (vid, stmt) in &op.prepare {
                lint_statement(l, path, t, lesson_id, &variants, vid, OpKind::Write, stmt);
            }
            for vid in op.expect_error.keys() {
                if !variants.contains(vid) {
                    l.at(
                        path,
                        t,
                        op.id.span().start,
                        Message::new(
                            "expect_error names '{vid}', not a variant of this experiment",
                        )
                        .arg("vid", vid),
                    );
                }
            }
        }
        if let Some(ws) = &exp.working_set {
            if let Err(e) = super::working_set::cache_size(ws.cache.get_ref(), 0) {
                l.at(path, t, ws.cache.span().start, e.message());
            }
            if let Some(first) = variants.iter().next() {
                lint_statement(
                    l,
                    path,
                    t,
                    lesson_id,
                    &variants,
                    first,
                    OpKind::Read,
                    &ws.keys,
                );
            }
        }
        let mut claim_ids = BTreeSet::new();
        for claim in &exp.claims {
            if let Some(id) = &claim.id
                && !claim_ids.insert(id.get_ref().clone())
            {
                l.at(
                    path,
                    t,
                    id.span().start,
                    Message::new("duplicate claim id '{id}'").arg("id", id.get_ref()),
                );
            }
            lint_check(l, path, t, &claim.check, &variants, &ops);
        }
    }
    if let Some(prose) = &lesson.prose {
        let ppath = dir.join(prose.get_ref());
        if let Some(md) = l.read_content(dir, prose.get_ref(), (path, t, prose.span().start)) {
            lint_prose(l, &ppath, &md, &all_variants, &all_ops);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn lint_statement(
    l: &mut Linter,
    path: &Path,
    t: &str,
    lesson_id: &str,
    variants: &BTreeSet<String>,
    vid: &str,
    kind: OpKind,
    stmt: &Spanned<String>,
) {
    let span = stmt.span();
    if !variants.contains(vid) {
        // The key's span is not kept; point at the statement.
        l.at(
            path,
            t,
            span.start,
            Message::new("'{vid}' is not a variant of this experiment").arg("vid", vid),
        );
        return;
    }
    match parse_program(stmt.get_ref()) {
        Ok(p) => {
            if let Err(e) = stays_in(&p, &DbNames::default().lesson(lesson_id, vid)) {
                let (line, col) = inner_pos(t, &span, e.pos.line as usize, e.pos.col as usize);
                l.at_pos(path, line, col, e.message);
            }
            if kind == OpKind::Read
                && let Some((name, pos)) = first_write_call(&p)
            {
                let (line, col) = inner_pos(t, &span, pos.line as usize, pos.col as usize);
                l.at_pos(
                    path,
                    line,
                    col,
                    Message::new(
                        "{name}() is not a read (find, findOne, aggregate, countDocuments, distinct); declare the operation kind = \"write\"",
                    )
                    .arg("name", name),
                );
            }
        }
        Err(e) => {
            let (line, col) = dialect_pos(&e);
            let (line, col) = inner_pos(t, &span, line, col);
            l.at_pos(path, line, col, e.message());
        }
    }
}

/// The first collection method a read statement calls that writes
/// (measured reads must only read; the runner would refuse it when it
/// finds no read, this says so before anything runs).
fn first_write_call(p: &crate::dialect::Program) -> Option<(String, crate::dialect::Pos)> {
    use std::sync::LazyLock;
    static WRITE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"\.\s*(insertOne|insertMany|updateOne|updateMany|replaceOne|deleteOne|deleteMany|bulkWrite|findOneAndUpdate|findOneAndReplace|findOneAndDelete)\s*\(",
        )
        .expect("valid regex")
    });
    let src = p.source();
    let c = WRITE.captures(src)?;
    let at = c.get(0)?.start();
    let before = &src[..at];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
    Some((c[1].to_string(), crate::dialect::Pos { line, col }))
}

fn lint_check(
    l: &mut Linter,
    path: &Path,
    t: &str,
    check: &Spanned<String>,
    variants: &BTreeSet<String>,
    ops: &BTreeSet<String>,
) {
    let span = check.span();
    match Check::parse(check.get_ref()) {
        Ok(c) => {
            for m in c.metrics() {
                if let Some(msg) = unknown_reference(m, variants, ops) {
                    let (line, col) = inner_pos(t, &span, 1, m.col);
                    l.at_pos(path, line, col, msg);
                }
            }
        }
        Err(e) => {
            let (line, col) = inner_pos(t, &span, 1, e.col);
            l.at_pos(
                path,
                line,
                col,
                Message::new("check: {e}").arg_msg("e", e.message),
            );
        }
    }
}

fn unknown_reference(
    m: &Metric,
    variants: &BTreeSet<String>,
    ops: &BTreeSet<String>,
) -> Option<Message> {
    if !variants.contains(&m.variant) {
        return Some(
            Message::new("'{vid}' is not a declared variant (variants: {known})")
                .arg("vid", &m.variant)
                .arg(
                    "known",
                    variants.iter().cloned().collect::<Vec<_>>().join(", "),
                ),
        );
    }
    match &m.target {
        Target::Op { id, .. } if !ops.contains(id) => Some(
            Message::new("'{oid}' is not a declared operation (operations: {known})")
                .arg("oid", id)
                .arg("known", ops.iter().cloned().collect::<Vec<_>>().join(", ")),
        ),
        _ => None,
    }
}

fn lint_prose(
    l: &mut Linter,
    path: &Path,
    md: &str,
    variants: &BTreeSet<String>,
    ops: &BTreeSet<String>,
) {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag};
    // pulldown-cmark accepts any text; what it reveals is a fenced code
    // block that never closes and swallows the rest of the lesson.
    for (event, range) in Parser::new(md).into_offset_iter() {
        if let Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) = event {
            let block = md[range.clone()].trim_end();
            let marker: String = block
                .trim_start()
                .chars()
                .take_while(|c| *c == '`' || *c == '~')
                .collect();
            let closed = block.lines().count() > 1
                && block
                    .lines()
                    .last()
                    .is_some_and(|last| last.trim().starts_with(&marker));
            if !closed {
                l.at(
                    path,
                    md,
                    range.start,
                    Message::new("code block ({info}) is never closed").arg("info", info),
                );
            }
        }
    }
    let (found, errs) = placeholders(md);
    for e in errs {
        l.at_pos(
            path,
            e.line,
            e.col,
            Message::new("{{ }}: {e}").arg_msg("e", e.message),
        );
    }
    for p in found {
        for m in p.expr.metrics() {
            if let Some(msg) = unknown_reference(m, variants, ops) {
                let byte = p.range.start;
                l.at(path, md, byte, msg);
            }
        }
    }
}
