//! View-model: the course as the TUI shows it and the measured report of an
//! experiment run. Screens render only from these types. They mirror the
//! course runner's report (issue 6, `src/course*`), so adapting to it is a
//! field-by-field conversion in one place (`From` impls added when it lands).

use std::collections::BTreeMap;

use bson::Document;

/// The whole course, in outline order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Course {
    pub title: String,
    pub lessons: Vec<Lesson>,
}

/// One lesson: prose plus experiments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lesson {
    pub id: String,
    pub title: String,
    pub summary: String,
    /// The Markdown prose, with `{{ expr }}` placeholders left in.
    pub prose: String,
    pub experiments: Vec<Experiment>,
}

/// An experiment: two (or more) variants and a workload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Experiment {
    pub id: String,
    pub title: String,
    pub dataset: String,
    pub variants: Vec<Variant>,
    pub operations: Vec<Operation>,
    pub claims: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Variant {
    pub id: String,
    pub title: String,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Operation {
    pub id: String,
    pub title: String,
    pub kind: String,
    pub weight: f64,
    /// Statement per variant id.
    pub run: BTreeMap<String, String>,
}

/// What one run of an experiment measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub lesson: String,
    pub experiment: String,
    /// The dataset scale it ran at (`tiny`, `default`, `large`).
    pub scale: String,
    pub variants: Vec<VariantReport>,
    pub claims: Vec<ClaimResult>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct VariantReport {
    pub id: String,
    pub collections: Vec<CollectionStats>,
    pub operations: Vec<OpResult>,
    /// A few sample documents per collection name.
    pub samples: Vec<(String, Vec<Document>)>,
    /// Steps that failed (loading, setup, measuring), shown with the results.
    pub errors: Vec<String>,
    /// The variant failed: its figures win nothing.
    pub failed: bool,
    /// The lesson recommends this design (its column title says so).
    pub recommended: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CollectionStats {
    pub name: String,
    pub count: u64,
    pub size: u64,
    pub avg_obj_size: f64,
    pub max_obj_size: u64,
    pub storage_size: u64,
    /// The server estimated, not measured, the storage size (embedded engine).
    pub storage_modelled: bool,
    pub indexes: Vec<IndexSize>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct IndexSize {
    pub name: String,
    pub size: u64,
    pub modelled: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpResult {
    pub id: String,
    pub statement: String,
    /// Winning stage chain, root first: `["FETCH", "IXSCAN"]`.
    pub stages: Vec<String>,
    pub index: Option<String>,
    /// Key pattern of the index used, as text (`{a: 1}`).
    pub index_keys: Option<String>,
    pub n_returned: u64,
    pub keys_examined: u64,
    pub docs_examined: u64,
    pub millis: f64,
    /// Raw `explain("executionStats")` output of a read.
    pub explain: Option<Document>,
    /// Writes: `n` and `nModified`.
    pub n: Option<u64>,
    pub n_modified: Option<u64>,
    /// A failed write's codeName.
    pub error: Option<String>,
    /// Untimed statements run before the measured one (binding names).
    pub prepare: Option<String>,
    /// Reads: stages whose examined counts the server did not report (the
    /// examined totals are then incomplete and take no part in comparisons).
    pub not_reported: Vec<String>,
    /// Reads: BSON bytes sent to the client.
    pub bytes_returned: Option<u64>,
    /// Writes: index keys inserted and deleted (`None`: not reported).
    pub keys_inserted: Option<u64>,
    pub keys_deleted: Option<u64>,
}

impl OpResult {
    /// examined:returned, as the content format defines it.
    pub fn ratio(&self) -> f64 {
        self.keys_examined.max(self.docs_examined) as f64 / self.n_returned.max(1) as f64
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClaimResult {
    pub text: String,
    pub passed: bool,
    pub reason: Option<String>,
}

/// Progress of a running experiment, sent by the runner.
#[derive(Debug, Clone, PartialEq)]
pub struct RunProgress {
    /// 0.0 ..= 1.0
    pub fraction: f64,
    pub step: String,
}

impl Report {
    pub fn variant(&self, id: &str) -> Option<&VariantReport> {
        self.variants.iter().find(|v| v.id == id)
    }

    /// Evaluates a `{{ expr }}` placeholder (the check language's
    /// arithmetic over metrics); `None` when a metric is missing.
    pub fn eval(&self, expr: &str) -> Option<Metric> {
        let tokens = tokenize(expr)?;
        let mut p = Parser {
            tokens: &tokens,
            pos: 0,
            report: self,
        };
        let v = p.expr()?;
        (p.pos == tokens.len()).then_some(v)
    }

    fn metric(&self, path: &str) -> Option<Metric> {
        let mut parts = path.split('.');
        let variant = self.variant(parts.next()?)?;
        match parts.next()? {
            "coll" => {
                let name = parts.next()?;
                let c = variant.collections.iter().find(|c| c.name == name)?;
                let field = parts.next()?;
                let n = |v: u64| Some(Metric::Num(v as f64));
                match field {
                    "count" => n(c.count),
                    "size" => n(c.size),
                    "avgObjSize" => Some(Metric::Num(c.avg_obj_size)),
                    "maxObjSize" => n(c.max_obj_size),
                    "storageSize" => n(c.storage_size),
                    "totalIndexSize" => n(c.indexes.iter().map(|i| i.size).sum()),
                    "nindexes" => n(c.indexes.len() as u64),
                    "index" => {
                        let rest: Vec<&str> = parts.collect();
                        let name = rest.join(".");
                        c.indexes
                            .iter()
                            .find(|i| i.name == name)
                            .and_then(|i| n(i.size))
                    }
                    _ => None,
                }
            }
            "op" => {
                let id = parts.next()?;
                let o = variant.operations.iter().find(|o| o.id == id)?;
                let n = |v: u64| Some(Metric::Num(v as f64));
                match parts.next()? {
                    "nReturned" => n(o.n_returned),
                    "keysExamined" => n(o.keys_examined),
                    "docsExamined" => n(o.docs_examined),
                    "ratio" => Some(Metric::Num(o.ratio())),
                    "millis" => Some(Metric::Num(o.millis)),
                    "stages" => Some(Metric::Text(o.stages.join("<-"))),
                    "index" => Some(Metric::Text(o.index.clone().unwrap_or_default())),
                    "n" => o.n.and_then(n),
                    "nModified" => o.n_modified.and_then(n),
                    "error" => Some(Metric::Text(o.error.clone().unwrap_or_default())),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// A measured value: a number or a text (stage chain, index name).
#[derive(Debug, Clone, PartialEq)]
pub enum Metric {
    Num(f64),
    Text(String),
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Metric::Text(s) => f.write_str(s),
            Metric::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => {
                write!(f, "{}", group_thousands(*n as i64))
            }
            Metric::Num(n) if n.abs() >= 100.0 => {
                write!(f, "{}", group_thousands(n.round() as i64))
            }
            Metric::Num(n) => write!(f, "{n:.1}"),
        }
    }
}

/// `1234567` → `1,234,567`.
pub fn group_thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Path(String),
    Op(char),
}

fn tokenize(src: &str) -> Option<Vec<Tok>> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            out.push(Tok::Num(
                chars[start..i].iter().collect::<String>().parse().ok()?,
            ));
        } else if c == '"' || c == '\'' {
            let start = i + 1;
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += 1;
            }
            out.push(Tok::Str(chars.get(start..i)?.iter().collect()));
            i += 1;
        } else if "+-*/()".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || "_.$".contains(chars[i])) {
                i += 1;
            }
            out.push(Tok::Path(chars[start..i].iter().collect()));
        } else {
            return None;
        }
    }
    Some(out)
}

struct Parser<'a> {
    tokens: &'a [Tok],
    pos: usize,
    report: &'a Report,
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<char> {
        match self.tokens.get(self.pos) {
            Some(Tok::Op(c)) => Some(*c),
            _ => None,
        }
    }

    fn expr(&mut self) -> Option<Metric> {
        let mut left = self.term()?;
        while let Some(op @ ('+' | '-')) = self.peek_op() {
            self.pos += 1;
            let right = self.term()?;
            left = arith(op, &left, &right)?;
        }
        Some(left)
    }

    fn term(&mut self) -> Option<Metric> {
        let mut left = self.factor()?;
        while let Some(op @ ('*' | '/')) = self.peek_op() {
            self.pos += 1;
            let right = self.factor()?;
            left = arith(op, &left, &right)?;
        }
        Some(left)
    }

    fn factor(&mut self) -> Option<Metric> {
        let tok = self.tokens.get(self.pos)?.clone();
        self.pos += 1;
        match tok {
            Tok::Num(n) => Some(Metric::Num(n)),
            Tok::Str(s) => Some(Metric::Text(s)),
            Tok::Path(p) => self.report.metric(&p),
            Tok::Op('(') => {
                let v = self.expr()?;
                (self.peek_op() == Some(')')).then(|| self.pos += 1)?;
                Some(v)
            }
            Tok::Op('-') => match self.factor()? {
                Metric::Num(n) => Some(Metric::Num(-n)),
                Metric::Text(_) => None,
            },
            Tok::Op(_) => None,
        }
    }
}

fn arith(op: char, a: &Metric, b: &Metric) -> Option<Metric> {
    let (Metric::Num(a), Metric::Num(b)) = (a, b) else {
        return None;
    };
    Some(Metric::Num(match op {
        '+' => a + b,
        '-' => a - b,
        '*' => a * b,
        _ if *b == 0.0 => return None,
        _ => a / b,
    }))
}
