//! Printing: renders values the way mongosh does. mongosh formats with
//! Node's `util.inspect` (break length 80, `compact: 3`), so this module
//! reproduces its rules: short objects on one line as `{ a: 1, b: 'x' }`,
//! longer ones one entry per line with two-space indentation, arrays of more
//! than six short items grouped in columns, keys bare when they are
//! identifiers, strings in single quotes, BSON types as their mongosh
//! constructors (`ObjectId('…')`, `ISODate('…')`, `Long('…')` …).

use bson::{Bson, Document, spec::BinarySubtype};

const BREAK_LENGTH: usize = 80;
const COMPACT: usize = 3;
/// mongosh's default `inspectDepth`: deeper containers print as `[Object]`.
const INSPECT_DEPTH: usize = 6;

/// Format a JavaScript number as JavaScript prints it.
pub fn format_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if n == 0.0 {
        return if n.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let abs = n.abs();
    if (1e-6..1e21).contains(&abs) {
        // Rust's shortest round-trip formatting matches JavaScript's in this range.
        return format!("{n}");
    }
    // Exponential form: JavaScript writes `1e+21`, `1.5e-8`.
    let s = format!("{n:e}");
    match s.split_once('e') {
        Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
        _ => s,
    }
}

/// Quote a string the way `util.inspect` does: single quotes unless the
/// string contains one and no double quote.
pub fn quote_str(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else if s.contains('\'') && s.contains('"') && !s.contains('`') {
        '`'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

fn is_identifier_key(k: &str) -> bool {
    let mut chars = k.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn format_key(k: &str) -> String {
    if is_identifier_key(k) {
        k.to_string()
    } else {
        quote_str(k)
    }
}

/// Render a BSON value as mongosh prints it at the top level (strings bare).
pub fn render_bson(v: &Bson) -> String {
    match v {
        Bson::String(s) => s.clone(),
        other => inspect(other),
    }
}

/// Render a BSON value as it appears nested inside a document.
pub fn inspect(v: &Bson) -> String {
    let mut ctx = Ctx {
        indentation: 0,
        current_depth: 0,
    };
    ctx.format(v, 0)
}

/// Render a value as `printjson` does: mongosh writes every non-empty
/// object and array one entry per line at any depth (Node's `inspect` with
/// `compact: false`), and a string on its own bare.
pub fn inspect_expanded(v: &Bson) -> String {
    fn go(v: &Bson, indent: usize, out: &mut String) {
        let pad = |n: usize| " ".repeat(n);
        match v {
            Bson::Document(d) if !d.is_empty() => {
                out.push_str("{\n");
                for (i, (k, val)) in d.iter().enumerate() {
                    out.push_str(&pad(indent + 2));
                    out.push_str(&format_key(k));
                    out.push_str(": ");
                    go(val, indent + 2, out);
                    if i + 1 < d.len() {
                        out.push(',');
                    }
                    out.push('\n');
                }
                out.push_str(&pad(indent));
                out.push('}');
            }
            Bson::Array(items) if !items.is_empty() => {
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&pad(indent + 2));
                    go(item, indent + 2, out);
                    if i + 1 < items.len() {
                        out.push(',');
                    }
                    out.push('\n');
                }
                out.push_str(&pad(indent));
                out.push(']');
            }
            other => out.push_str(&inspect(other)),
        }
    }
    match v {
        Bson::String(s) => s.clone(),
        other => {
            let mut out = String::new();
            go(other, 0, &mut out);
            out
        }
    }
}

/// Render a document.
pub fn inspect_doc(d: &Document) -> String {
    inspect(&Bson::Document(d.clone()))
}

struct Ctx {
    indentation: usize,
    /// Depth of the most recently formatted object, as Node tracks it: an
    /// object stays on one line only if that depth is < 3 levels below it.
    current_depth: usize,
}

impl Ctx {
    fn format(&mut self, v: &Bson, depth: usize) -> String {
        match v {
            Bson::Document(d) => {
                if d.is_empty() {
                    return "{}".into();
                }
                if depth > INSPECT_DEPTH {
                    return "[Object]".into();
                }
                self.current_depth = depth;
                let mut entries = Vec::with_capacity(d.len());
                for (k, val) in d {
                    self.indentation += 2;
                    let s = self.format(val, depth + 1);
                    self.indentation -= 2;
                    entries.push(format!("{}: {s}", format_key(k)));
                }
                self.reduce(entries, "{", "}", depth, None)
            }
            Bson::Array(a) => {
                if a.is_empty() {
                    return "[]".into();
                }
                if depth > INSPECT_DEPTH {
                    return "[Array]".into();
                }
                self.current_depth = depth;
                let mut entries = Vec::with_capacity(a.len());
                for val in a {
                    self.indentation += 2;
                    entries.push(self.format(val, depth + 1));
                    self.indentation -= 2;
                }
                self.reduce(entries, "[", "]", depth, Some(a))
            }
            Bson::String(s) => quote_str(s),
            other => scalar(other),
        }
    }

    fn reduce(
        &mut self,
        output: Vec<String>,
        open: &str,
        close: &str,
        depth: usize,
        array: Option<&[Bson]>,
    ) -> String {
        let entries = output.len();
        let output = match array {
            Some(a) if entries > 6 => self.group(output, a),
            _ => output,
        };
        if self.current_depth - depth < COMPACT && entries == output.len() {
            let start = output.len() + self.indentation + open.len() + 10;
            if below_break_length(&output, start) {
                let joined = output.join(", ");
                if !joined.contains('\n') {
                    return format!("{open} {joined} {close}");
                }
            }
        }
        let ind = format!("\n{}", " ".repeat(self.indentation));
        format!(
            "{open}{ind}  {}{ind}{close}",
            output.join(&format!(",{ind}  "))
        )
    }

    /// Node's `groupArrayElements`: lay out many short items in columns.
    fn group(&self, output: Vec<String>, values: &[Bson]) -> Vec<String> {
        if output.iter().any(|o| o.contains('\n')) {
            return output;
        }
        let sep = 2usize;
        let lens: Vec<usize> = output.iter().map(|o| o.chars().count()).collect();
        let total: usize = lens.iter().map(|l| l + sep).sum();
        let max_len = lens.iter().copied().max().unwrap_or(0);
        let actual_max = max_len + sep;
        if !(actual_max * 3 + self.indentation < BREAK_LENGTH
            && (total as f64 / actual_max as f64 > 5.0 || max_len <= 6))
        {
            return output;
        }
        let average_bias = (actual_max as f64 - total as f64 / output.len() as f64).sqrt();
        let biased_max = (actual_max as f64 - 3.0 - average_bias).max(1.0);
        let columns = [
            ((2.5 * biased_max * output.len() as f64).sqrt() / biased_max).round() as usize,
            (BREAK_LENGTH - self.indentation) / actual_max,
            COMPACT * 4,
            15,
        ]
        .into_iter()
        .min()
        .unwrap_or(1);
        if columns <= 1 {
            return output;
        }
        let mut max_line = Vec::with_capacity(columns);
        for i in 0..columns {
            let mut l = 0;
            let mut j = i;
            while j < output.len() {
                l = l.max(lens[j]);
                j += columns;
            }
            max_line.push(l + sep);
        }
        let numeric = values
            .iter()
            .all(|v| matches!(v, Bson::Int32(_) | Bson::Double(_)));
        let mut rows = Vec::new();
        let mut i = 0;
        while i < output.len() {
            let max = (i + columns).min(output.len());
            let mut row = String::new();
            for j in i..max - 1 {
                let cell = format!("{}, ", output[j]);
                row.push_str(&pad(&cell, max_line[j - i], numeric));
            }
            let j = max - 1;
            if numeric {
                row.push_str(&pad(&output[j], max_line[j - i] - sep, true));
            } else {
                row.push_str(&output[j]);
            }
            rows.push(row);
            i += columns;
        }
        rows
    }
}

fn pad(s: &str, width: usize, start: bool) -> String {
    let n = s.chars().count();
    if n >= width {
        return s.to_string();
    }
    let fill = " ".repeat(width - n);
    if start {
        format!("{fill}{s}")
    } else {
        format!("{s}{fill}")
    }
}

fn below_break_length(output: &[String], start: usize) -> bool {
    let mut total = output.len() + start;
    if total + output.len() > BREAK_LENGTH {
        return false;
    }
    for o in output {
        total += o.chars().count();
        if total > BREAK_LENGTH {
            return false;
        }
    }
    true
}

/// Render a non-container BSON value.
fn scalar(v: &Bson) -> String {
    match v {
        Bson::Double(d) => format_number(*d),
        Bson::Int32(i) => i.to_string(),
        Bson::Int64(i) => format!("Long('{i}')"),
        Bson::Decimal128(d) => format!("Decimal128('{d}')"),
        Bson::Boolean(b) => b.to_string(),
        Bson::Null => "null".into(),
        Bson::Undefined => "undefined".into(),
        Bson::ObjectId(o) => format!("ObjectId('{}')", o.to_hex()),
        Bson::DateTime(d) => format!("ISODate('{}')", iso_string(*d)),
        Bson::RegularExpression(r) => format!("/{}/{}", r.pattern, r.options),
        Bson::Timestamp(t) => format!("Timestamp({{ t: {}, i: {} }})", t.time, t.increment),
        Bson::MinKey => "MinKey()".into(),
        Bson::MaxKey => "MaxKey()".into(),
        Bson::Binary(b) if b.subtype == BinarySubtype::Uuid && b.bytes.len() == 16 => {
            format!("UUID('{}')", uuid_string(&b.bytes))
        }
        Bson::Binary(b) => {
            use base64_like::encode;
            format!(
                "Binary.createFromBase64('{}', {})",
                encode(&b.bytes),
                u8::from(b.subtype)
            )
        }
        Bson::Symbol(s) => format!("Symbol({})", quote_str(s)),
        Bson::JavaScriptCode(c) => format!("Code({})", quote_str(c)),
        Bson::JavaScriptCodeWithScope(c) => {
            format!("Code({}, {})", quote_str(&c.code), inspect_doc(&c.scope))
        }
        Bson::DbPointer(_) => "DBPointer()".into(),
        Bson::String(s) => quote_str(s),
        Bson::Document(_) | Bson::Array(_) => inspect(v),
    }
}

/// `2024-01-02T03:04:05.678Z`, the JavaScript `toISOString` form.
pub fn iso_string(d: bson::DateTime) -> String {
    let ms = d.timestamp_millis();
    match chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms) {
        Some(t) => {
            let s = t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
            // JavaScript writes years outside 0..=9999 with a sign and six digits.
            if (0..=9999).contains(&chrono::Datelike::year(&t)) {
                s
            } else {
                let y = chrono::Datelike::year(&t);
                let rest = t.format("-%m-%dT%H:%M:%S%.3fZ").to_string();
                format!(
                    "{}{:06}{rest}",
                    if y < 0 { '-' } else { '+' },
                    y.unsigned_abs()
                )
            }
        }
        None => "Invalid Date".into(),
    }
}

fn uuid_string(b: &[u8]) -> String {
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// A tiny standard base64 encoder (no extra dependency just for printing Binary).
mod base64_like {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    pub fn encode(bytes: &[u8]) -> String {
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for k in 0..4 {
                if k <= chunk.len() {
                    out.push(char::from(ALPHABET[((n >> (18 - 6 * k)) & 63) as usize]));
                } else {
                    out.push('=');
                }
            }
        }
        out
    }
}
