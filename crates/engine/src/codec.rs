//! A hand-written BSON codec between `bson::Document` and raw bytes, for the
//! engine's hot paths.
//!
//! The `bson` crate encodes a `Document` through its serde serializer, which
//! formats every ObjectId as hex and parses it back, base64-encodes binary
//! values of non-generic subtypes and serialises a whole document just to
//! learn its length; it decodes through `RawIter`, `RawBson` and a second
//! conversion to `Bson`. This module writes and reads the bytes directly:
//!
//! - [`encode`] / [`encode_into`] produce exactly the bytes of `bson`'s
//!   `Document::to_writer` (regex options sorted, old binary subtype 2 with
//!   its inner length, array keys `"0"`, `"1"`, …) and fail where it fails:
//!   a key or regex part containing NUL, a binary value over 16 MiB;
//!   [`encode`] words its errors as `RawDocumentBuf::from_document` does.
//! - [`size`] / [`size_of_value`] give the encoded length without writing;
//!   [`try_size`] also fails where encoding would.
//! - [`decode`] builds the `Document` straight from the bytes, with the same
//!   checks as `bson`'s `TryFrom<&RawDocument>` (lengths, terminators, tags,
//!   booleans 0/1, strict UTF-8 for keys and strings, old-binary inner
//!   length, code-with-scope framing), so it fails exactly when that
//!   conversion fails; it never panics. Duplicate keys keep their first
//!   position and last value, as there. Error messages follow `bson`'s
//!   wording but may name the key differently.
//! - [`decode_fields`] decodes only the top-level fields a predicate wants,
//!   in document order; the fields it skips are framed (their lengths
//!   checked) but not converted, so a malformed value inside a skipped field
//!   is not reported.
//!
//! The deprecated DBPointer type, whose fields `bson` keeps private, is
//! handed to `bson` itself in both directions.

pub mod walk;

use bson::spec::BinarySubtype;
use bson::{
    Binary, Bson, DateTime, Decimal128, Document, JavaScriptCodeWithScope, RawArray, RawDocument,
    RawDocumentBuf, Regex, Timestamp, oid::ObjectId,
};

/// The largest binary value `bson` will encode (its `MAX_BSON_SIZE`).
const MAX_BINARY: usize = 16 * 1024 * 1024;
/// The smallest document: a length and the terminator.
const MIN_DOCUMENT: usize = 5;
/// The smallest code-with-scope: total length, an empty string, an empty
/// document.
const MIN_CODE_WITH_SCOPE: usize = 4 + 5 + 5;

/// Why a value could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CodecError {
    /// A key, regex pattern or regex options contain a NUL byte.
    #[error("cstrings cannot contain null bytes: {0:?}")]
    NulInCString(String),
    /// A binary value longer than BSON allows.
    #[error("binary length {0} exceeded maximum size")]
    BinaryTooLong(usize),
    /// `bson` itself refused a value handed to it (DBPointer).
    #[error("{0}")]
    Bson(String),
    /// The bytes are not valid BSON.
    #[error("{}malformed value: {message:?}", at(key))]
    Malformed {
        /// The key of the element at fault, when known.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A key or string is not valid UTF-8.
    #[error("{}utf-8 encoding error: {source}", at(key))]
    Utf8 {
        /// The key of the element at fault, when known.
        key: Option<String>,
        /// The decoder's complaint.
        source: std::str::Utf8Error,
    },
}

fn at(key: &Option<String>) -> String {
    key.as_ref()
        .map_or_else(String::new, |k| format!("error at key \"{k}\": "))
}

impl CodecError {
    fn malformed(message: impl Into<String>) -> Self {
        CodecError::Malformed {
            key: None,
            message: message.into(),
        }
    }

    /// Attach `k` as the element at fault, unless one is already named.
    fn with_key(self, k: &str) -> Self {
        match self {
            CodecError::Malformed { key: None, message } => CodecError::Malformed {
                key: Some(k.to_owned()),
                message,
            },
            CodecError::Utf8 { key: None, source } => CodecError::Utf8 {
                key: Some(k.to_owned()),
                source,
            },
            e => e,
        }
    }
}

type Result<T> = std::result::Result<T, CodecError>;

// ---------------------------------------------------------------- encoding

/// Encode a document, as `RawDocumentBuf::from_document` does (and with its
/// error wording: `malformed value: "…"`).
pub fn encode(doc: &Document) -> Result<RawDocumentBuf> {
    let mut buf = Vec::with_capacity(size(doc));
    encode_into(doc, &mut buf).map_err(|e| CodecError::malformed(e.to_string()))?;
    RawDocumentBuf::from_bytes(buf).map_err(|e| CodecError::malformed(e.to_string()))
}

/// Append the encoding of `doc` to `out`, as `Document::to_writer` does (and
/// with its error wording). On error `out` holds a partial document.
pub fn encode_into(doc: &Document, out: &mut Vec<u8>) -> Result<()> {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    for (k, v) in doc {
        write_element(out, k, v)?;
    }
    out.push(0);
    patch_length(out, start);
    Ok(())
}

/// One element: type byte, key, value.
fn write_element(out: &mut Vec<u8>, key: &str, v: &Bson) -> Result<()> {
    out.push(v.element_type() as u8);
    write_cstring(out, key)?;
    write_value(out, v)
}

fn patch_length(out: &mut [u8], start: usize) {
    let len = (out.len() - start) as i32;
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
}

fn write_cstring(out: &mut Vec<u8>, s: &str) -> Result<()> {
    if s.as_bytes().contains(&0) {
        return Err(CodecError::NulInCString(s.to_owned()));
    }
    out.extend_from_slice(s.as_bytes());
    out.push(0);
    Ok(())
}

fn write_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i32 + 1).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// The decimal digits of an array index, as array keys spell them.
fn index_key(i: usize, buf: &mut [u8; 20]) -> &[u8] {
    let mut n = i;
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[at..]
}

fn write_array(out: &mut Vec<u8>, items: &[Bson]) -> Result<()> {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    let mut digits = [0u8; 20];
    for (i, v) in items.iter().enumerate() {
        out.push(v.element_type() as u8);
        out.extend_from_slice(index_key(i, &mut digits));
        out.push(0);
        write_value(out, v)?;
    }
    out.push(0);
    patch_length(out, start);
    Ok(())
}

/// `bson` writes a binary value by the subtype's byte, so a `Reserved(2)`
/// is written in the old layout as `BinaryOld` is.
fn is_old_binary(subtype: BinarySubtype) -> bool {
    u8::from(subtype) == 0x02
}

fn binary_len(b: &Binary) -> Result<usize> {
    let len = b.bytes.len() + if is_old_binary(b.subtype) { 4 } else { 0 };
    if len > MAX_BINARY {
        return Err(CodecError::BinaryTooLong(b.bytes.len()));
    }
    Ok(len)
}

fn sorted_options(options: &str) -> String {
    let mut chars: Vec<char> = options.chars().collect();
    chars.sort_unstable();
    chars.into_iter().collect()
}

/// A DBPointer's value bytes, from `bson` (its fields are private).
fn dbpointer_bytes(v: &Bson) -> Result<Vec<u8>> {
    let mut single = Document::new();
    single.insert("", v.clone());
    let bytes = bson::to_vec(&single).map_err(|e| CodecError::Bson(e.to_string()))?;
    // length (4), tag (1), empty key (1) … terminator (1)
    Ok(bytes
        .get(6..bytes.len().saturating_sub(1))
        .unwrap_or_default()
        .to_vec())
}

fn write_value(out: &mut Vec<u8>, v: &Bson) -> Result<()> {
    match v {
        Bson::Double(f) => out.extend_from_slice(&f.to_le_bytes()),
        Bson::String(s) | Bson::JavaScriptCode(s) | Bson::Symbol(s) => write_string(out, s),
        Bson::Document(d) => encode_into(d, out)?,
        Bson::Array(items) => write_array(out, items)?,
        Bson::Binary(b) => {
            let len = binary_len(b)?;
            out.extend_from_slice(&(len as i32).to_le_bytes());
            out.push(u8::from(b.subtype));
            if is_old_binary(b.subtype) {
                out.extend_from_slice(&(b.bytes.len() as i32).to_le_bytes());
            }
            out.extend_from_slice(&b.bytes);
        }
        Bson::Undefined | Bson::Null | Bson::MinKey | Bson::MaxKey => {}
        Bson::ObjectId(oid) => out.extend_from_slice(&oid.bytes()),
        Bson::Boolean(b) => out.push(u8::from(*b)),
        Bson::DateTime(dt) => out.extend_from_slice(&dt.timestamp_millis().to_le_bytes()),
        Bson::RegularExpression(re) => {
            write_cstring(out, &re.pattern)?;
            write_cstring(out, &sorted_options(&re.options))?;
        }
        Bson::DbPointer(_) => out.extend_from_slice(&dbpointer_bytes(v)?),
        Bson::JavaScriptCodeWithScope(cws) => {
            let start = out.len();
            out.extend_from_slice(&[0; 4]);
            write_string(out, &cws.code);
            encode_into(&cws.scope, out)?;
            patch_length(out, start);
        }
        Bson::Int32(n) => out.extend_from_slice(&n.to_le_bytes()),
        Bson::Timestamp(ts) => {
            out.extend_from_slice(&ts.increment.to_le_bytes());
            out.extend_from_slice(&ts.time.to_le_bytes());
        }
        Bson::Int64(n) => out.extend_from_slice(&n.to_le_bytes()),
        Bson::Decimal128(d) => out.extend_from_slice(&d.bytes()),
    }
    Ok(())
}

/// `base` with every field of `fields` set as `Document::insert` sets it on
/// the decoded base: a field the base has keeps its place with its new
/// value, the others follow in their order (`$merge`'s `whenMatched:
/// "merge"`). Neither document is decoded: elements are copied as they
/// are. `fields` names each field once (it was encoded from a document).
pub fn merge_fields(base: &RawDocument, fields: &RawDocument) -> Result<RawDocumentBuf> {
    let malformed = |e: walk::WalkError| CodecError::malformed(e.to_string());
    let fields: Vec<(&str, walk::Value<'_>)> = walk::Doc::from_raw(fields)
        .iter()
        .collect::<std::result::Result<_, _>>()
        .map_err(malformed)?;
    let mut out = Vec::with_capacity(base.as_bytes().len() + fields.len() * 16);
    out.extend_from_slice(&[0; 4]);
    let copy = |out: &mut Vec<u8>, key: &str, value: walk::Value<'_>| -> Result<()> {
        out.push(value.element_type() as u8);
        write_cstring(out, key)?;
        out.extend_from_slice(value.raw_bytes());
        Ok(())
    };
    let mut set = vec![false; fields.len()];
    for element in walk::Doc::from_raw(base).iter() {
        let (key, value) = element.map_err(malformed)?;
        match fields.iter().position(|(k, _)| *k == key) {
            Some(i) if !set[i] => {
                set[i] = true;
                copy(&mut out, key, fields[i].1)?;
            }
            // A key the base holds twice: set once, in its first place.
            Some(_) => {}
            None => copy(&mut out, key, value)?,
        }
    }
    for ((k, v), _) in fields.iter().zip(&set).filter(|(_, set)| !**set) {
        copy(&mut out, k, *v)?;
    }
    out.push(0);
    patch_length(&mut out, 0);
    RawDocumentBuf::from_bytes(out).map_err(|e| CodecError::malformed(e.to_string()))
}

/// `doc` without its elements named in `names`, copied as it is
/// otherwise; `None` when it has no such element (nothing to remove).
pub fn without_fields(doc: &RawDocument, names: &[&str]) -> Result<Option<RawDocumentBuf>> {
    let malformed = |e: walk::WalkError| CodecError::malformed(e.to_string());
    let mut out: Option<Vec<u8>> = None;
    let bytes = doc.as_bytes();
    // Where the element being read starts: elements are back to back
    // from offset 4, so each one's bytes run up to where the next begins.
    let mut at = 4;
    let mut iter = walk::Doc::from_raw(doc).iter();
    while let Some(element) = iter.next() {
        let (key, _) = element.map_err(malformed)?;
        let end = iter.offset();
        if names.contains(&key) {
            out.get_or_insert_with(|| bytes[..at].to_vec());
        } else if let Some(out) = &mut out {
            out.extend_from_slice(&bytes[at..end]);
        }
        at = end;
    }
    let Some(mut out) = out else {
        return Ok(None);
    };
    out.push(0);
    patch_length(&mut out, 0);
    RawDocumentBuf::from_bytes(out)
        .map(Some)
        .map_err(|e| CodecError::malformed(e.to_string()))
}

/// An array encoded as its values are added, for a value that collects
/// many (a `$push` accumulator): held at its BSON size, decoded once at the
/// end.
#[derive(Debug, Clone, Default)]
pub struct ArrayBuilder {
    bytes: Vec<u8>,
    len: usize,
}

impl ArrayBuilder {
    /// Append one value; on an error nothing is appended.
    pub fn push(&mut self, v: &Bson) -> Result<()> {
        if self.bytes.is_empty() {
            self.bytes.extend_from_slice(&[0; 4]);
        }
        let before = self.bytes.len();
        let mut digits = [0u8; 20];
        self.bytes.push(v.element_type() as u8);
        self.bytes
            .extend_from_slice(index_key(self.len, &mut digits));
        self.bytes.push(0);
        if let Err(e) = write_value(&mut self.bytes, v) {
            self.bytes.truncate(before);
            return Err(e);
        }
        self.len += 1;
        Ok(())
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The values, in the order they were added.
    pub fn finish(mut self) -> Result<Vec<Bson>> {
        if self.bytes.is_empty() {
            return Ok(Vec::new());
        }
        self.bytes.push(0);
        patch_length(&mut self.bytes, 0);
        read_array(&self.bytes)
    }
}

// ------------------------------------------------------------------ sizing

/// The length of `doc`'s encoding. For a document `bson` cannot encode (see
/// [`try_size`]) it is the length the encoding would have.
pub fn size(doc: &Document) -> usize {
    measure_doc(doc, false).unwrap_or(0)
}

/// The length of one value's encoding (without its tag and key).
pub fn size_of_value(v: &Bson) -> usize {
    measure(v, false).unwrap_or(0)
}

/// The length of `doc`'s encoding, or the error encoding it would give.
pub fn try_size(doc: &Document) -> Result<usize> {
    measure_doc(doc, true)
}

fn check_cstring(s: &str, check: bool) -> Result<usize> {
    if check && s.as_bytes().contains(&0) {
        return Err(CodecError::NulInCString(s.to_owned()));
    }
    Ok(s.len() + 1)
}

fn measure_doc(doc: &Document, check: bool) -> Result<usize> {
    let mut n = MIN_DOCUMENT;
    for (k, v) in doc {
        n += 1 + check_cstring(k, check)? + measure(v, check)?;
    }
    Ok(n)
}

fn digits(mut i: usize) -> usize {
    let mut d = 1;
    while i >= 10 {
        i /= 10;
        d += 1;
    }
    d
}

fn measure(v: &Bson, check: bool) -> Result<usize> {
    Ok(match v {
        Bson::Double(_) | Bson::DateTime(_) | Bson::Timestamp(_) | Bson::Int64(_) => 8,
        Bson::String(s) | Bson::JavaScriptCode(s) | Bson::Symbol(s) => 4 + s.len() + 1,
        Bson::Document(d) => measure_doc(d, check)?,
        Bson::Array(items) => {
            let mut n = MIN_DOCUMENT;
            for (i, v) in items.iter().enumerate() {
                n += 2 + digits(i) + measure(v, check)?;
            }
            n
        }
        Bson::Binary(b) => {
            if check {
                4 + 1 + binary_len(b)?
            } else {
                4 + 1 + b.bytes.len() + if is_old_binary(b.subtype) { 4 } else { 0 }
            }
        }
        Bson::Undefined | Bson::Null | Bson::MinKey | Bson::MaxKey => 0,
        Bson::ObjectId(_) => 12,
        Bson::Boolean(_) => 1,
        Bson::RegularExpression(re) => {
            check_cstring(&re.pattern, check)? + check_cstring(&re.options, check)?
        }
        Bson::DbPointer(_) => dbpointer_bytes(v)?.len(),
        Bson::JavaScriptCodeWithScope(cws) => {
            4 + 4 + cws.code.len() + 1 + measure_doc(&cws.scope, check)?
        }
        Bson::Int32(_) => 4,
        Bson::Decimal128(_) => 16,
    })
}

// ---------------------------------------------------------------- decoding

/// Decode a document, failing exactly when `Document::try_from(raw)` fails.
pub fn decode(raw: &RawDocument) -> Result<Document> {
    read_document(raw.as_bytes())
}

/// Decode an array's items, failing exactly when `bson`'s conversion fails.
pub fn decode_array(raw: &RawArray) -> Result<Vec<Bson>> {
    read_array(raw.as_bytes())
}

/// Decode only the top-level fields `wanted` accepts, in document order.
/// Skipped fields are framed but not converted (see the module notes).
pub fn decode_fields(raw: &RawDocument, wanted: &impl Fn(&str) -> bool) -> Result<Document> {
    let d = raw.as_bytes();
    check_document(d)?;
    let mut doc = Document::new();
    let mut off = 4;
    while let Some(e) = next_element(d, &mut off)? {
        if wanted(e.key) {
            let v = value(d, &e).map_err(|err| err.with_key(e.key))?;
            doc.insert(e.key.to_owned(), v);
        }
    }
    Ok(doc)
}

/// One element's framing: its key, tag and where its value lies in the
/// enclosing document's bytes.
struct Element<'a> {
    key: &'a str,
    tag: u8,
    start: usize,
    size: usize,
}

fn read_i32(b: &[u8], at: usize) -> Result<i32> {
    match b.get(at..).and_then(|s| s.get(..4)) {
        Some(s) => Ok(i32::from_le_bytes([s[0], s[1], s[2], s[3]])),
        None => Err(CodecError::malformed(format!(
            "expected 4 bytes to read i32, instead got {}",
            b.len().saturating_sub(at)
        ))),
    }
}

fn fixed<const N: usize>(b: &[u8]) -> Result<[u8; N]> {
    b.get(..N)
        .and_then(|s| <[u8; N]>::try_from(s).ok())
        .ok_or_else(|| {
            CodecError::malformed(format!("expected {N} bytes, instead got {}", b.len()))
        })
}

fn utf8(b: &[u8]) -> Result<&str> {
    std::str::from_utf8(b).map_err(|source| CodecError::Utf8 { key: None, source })
}

/// The NUL-terminated string at `at`, searched for up to the end of `b`.
fn cstring_at(b: &[u8], at: usize) -> Result<&str> {
    let rest = b.get(at..).unwrap_or_default();
    match rest.iter().position(|&c| c == 0) {
        Some(end) => utf8(&rest[..end]),
        None => Err(CodecError::malformed("expected null terminator")),
    }
}

/// The total length (4 + bytes + NUL) of the length-prefixed string that
/// starts `b`.
fn string_len(b: &[u8]) -> Result<usize> {
    if b.len() < 4 {
        return Err(CodecError::malformed(format!(
            "expected buffer with string to contain at least 4 bytes, but it only has {}",
            b.len()
        )));
    }
    let declared = read_i32(b, 0)?;
    let len = usize::try_from(declared)
        .map_err(|_| CodecError::malformed("string length can't be negative"))?;
    let end = len
        .checked_add(4)
        .ok_or_else(|| CodecError::malformed("attempted to add with overflow"))?;
    if end < 5 {
        return Err(CodecError::malformed(format!(
            "BSON length encoded string needs to be at least 5 bytes, instead got {end}"
        )));
    }
    if b.len() < end {
        return Err(CodecError::malformed(format!(
            "expected buffer to contain at least {end} bytes, but it only has {}",
            b.len()
        )));
    }
    if b[end - 1] != 0 {
        return Err(CodecError::malformed(
            "expected string to be null-terminated",
        ));
    }
    Ok(end)
}

/// The text of the length-prefixed string that starts `b`.
fn string_at(b: &[u8]) -> Result<&str> {
    let end = string_len(b)?;
    utf8(&b[4..end - 1])
}

/// A non-negative length prefix at `at`.
fn length_at(b: &[u8], at: usize) -> Result<usize> {
    usize::try_from(read_i32(b, at)?)
        .map_err(|_| CodecError::malformed("lengths can't be negative"))
}

fn ensure_bytes(b: &[u8], start: usize, n: usize) -> Result<()> {
    let end = start
        .checked_add(n)
        .ok_or_else(|| CodecError::malformed("attempted to add with overflow"))?;
    if end > b.len() {
        return Err(CodecError::malformed(format!(
            "length exceeds remaining length of buffer: {n} vs {}",
            b.len().saturating_sub(start)
        )));
    }
    Ok(())
}

/// The checks `RawDocument::from_bytes` makes.
fn check_document(d: &[u8]) -> Result<()> {
    if d.len() < MIN_DOCUMENT {
        return Err(CodecError::malformed("document too short"));
    }
    if read_i32(d, 0)? as i64 != d.len() as i64 {
        return Err(CodecError::malformed("document length incorrect"));
    }
    if d[d.len() - 1] != 0 {
        return Err(CodecError::malformed("document not null-terminated"));
    }
    Ok(())
}

/// The length of the embedded document starting at `at`, checked as
/// `bson`'s iterator does.
fn embedded_len(d: &[u8], at: usize) -> Result<usize> {
    ensure_bytes(d, at, MIN_DOCUMENT)?;
    let size = read_i32(d, at)? as usize;
    if size < MIN_DOCUMENT {
        return Err(CodecError::malformed(format!(
            "document too small: {size} bytes"
        )));
    }
    ensure_bytes(d, at, size)?;
    if d[at + size - 1] != 0 {
        return Err(CodecError::malformed("not null terminated"));
    }
    Ok(size)
}

/// Frame the element at `*off` of the document `d` and move past it; `None`
/// at the terminator.
fn next_element<'a>(d: &'a [u8], off: &mut usize) -> Result<Option<Element<'a>>> {
    let last = d.len() - 1;
    if *off == last {
        return if d[last] == 0 {
            Ok(None)
        } else {
            Err(CodecError::malformed("document not null terminated"))
        };
    }
    if *off > last {
        return Err(CodecError::malformed("iteration overflowed document"));
    }
    let tag = d[*off];
    let key = cstring_at(d, *off + 1)?;
    let start = *off + 1 + key.len() + 1;
    let framed = (|| -> Result<usize> {
        let rest = d.get(start..).unwrap_or_default();
        let size = match tag {
            0x08 => 1,
            0x10 => 4,
            0x01 | 0x09 | 0x11 | 0x12 => 8,
            0x07 => 12,
            0x13 => 16,
            0x06 | 0x0A | 0x7F | 0xFF => 0,
            0x02 | 0x0D | 0x0E => string_len(rest)?,
            0x03 | 0x04 => embedded_len(d, start)?,
            0x05 => length_at(d, start)? + 4 + 1,
            0x0B => {
                let pattern = cstring_at(d, start)?;
                let options = cstring_at(d, start + pattern.len() + 1)?;
                pattern.len() + 1 + options.len() + 1
            }
            0x0C => string_len(rest)? + 12,
            0x0F => length_at(d, start)?,
            t => return Err(CodecError::malformed(format!("invalid tag: {t}"))),
        };
        ensure_bytes(d, start, size)?;
        Ok(size)
    })();
    let size = framed.map_err(|e| e.with_key(key))?;
    *off = start + size;
    Ok(Some(Element {
        key,
        tag,
        start,
        size,
    }))
}

fn read_document(d: &[u8]) -> Result<Document> {
    check_document(d)?;
    let mut doc = Document::new();
    let mut off = 4;
    while let Some(e) = next_element(d, &mut off)? {
        let v = value(d, &e).map_err(|err| err.with_key(e.key))?;
        doc.insert(e.key.to_owned(), v);
    }
    Ok(doc)
}

fn read_array(d: &[u8]) -> Result<Vec<Bson>> {
    check_document(d)?;
    let mut items = Vec::new();
    let mut off = 4;
    while let Some(e) = next_element(d, &mut off)? {
        items.push(value(d, &e).map_err(|err| err.with_key(e.key))?);
    }
    Ok(items)
}

/// A DBPointer from its value bytes, through `bson` (its fields are
/// private).
fn dbpointer(value: &[u8]) -> Result<Bson> {
    let len = 4 + 1 + 1 + value.len() + 1;
    let mut single = Vec::with_capacity(len);
    single.extend_from_slice(&(len as i32).to_le_bytes());
    single.extend_from_slice(&[0x0C, 0]);
    single.extend_from_slice(value);
    single.push(0);
    let raw = RawDocument::from_bytes(&single).map_err(|e| CodecError::malformed(e.to_string()))?;
    let mut doc = Document::try_from(raw).map_err(|e| CodecError::malformed(e.to_string()))?;
    doc.remove("")
        .ok_or_else(|| CodecError::malformed("DBPointer did not decode"))
}

/// Convert one framed element's value.
fn value(d: &[u8], e: &Element<'_>) -> Result<Bson> {
    let s = &d[e.start..e.start + e.size];
    Ok(match e.tag {
        0x01 => Bson::Double(f64::from_le_bytes(fixed(s)?)),
        0x02 => Bson::String(string_at(s)?.to_owned()),
        0x03 => Bson::Document(read_document(s)?),
        0x04 => Bson::Array(read_array(s)?),
        0x05 => {
            let len = e
                .size
                .checked_sub(5)
                .ok_or_else(|| CodecError::malformed("binary length too small"))?;
            if e.size >= i32::MAX as usize {
                return Err(CodecError::malformed(format!(
                    "binary length exceeds maximum: {len}"
                )));
            }
            let subtype = BinarySubtype::from(s[4]);
            let bytes = if is_old_binary(subtype) {
                if len < 4 {
                    return Err(CodecError::malformed(
                        "old binary subtype has no inner declared length",
                    ));
                }
                if i64::from(read_i32(s, 5)?) + 4 != len as i64 {
                    return Err(CodecError::malformed(
                        "old binary subtype has wrong inner declared length",
                    ));
                }
                &s[9..]
            } else {
                &s[5..]
            };
            Bson::Binary(Binary {
                subtype,
                bytes: bytes.to_vec(),
            })
        }
        0x06 => Bson::Undefined,
        0x07 => Bson::ObjectId(ObjectId::from_bytes(fixed(s)?)),
        0x08 => match s.first() {
            Some(0) => Bson::Boolean(false),
            Some(1) => Bson::Boolean(true),
            Some(b) => {
                return Err(CodecError::malformed(format!(
                    "boolean must be stored as 0 or 1, got {b}"
                )));
            }
            None => return Err(CodecError::malformed("expected 1 byte to read u8")),
        },
        0x09 => Bson::DateTime(DateTime::from_millis(i64::from_le_bytes(fixed(s)?))),
        0x0A => Bson::Null,
        0x0B => {
            let pattern = cstring_at(s, 0)?;
            let options = cstring_at(s, pattern.len() + 1)?;
            Bson::RegularExpression(Regex {
                pattern: pattern.to_owned(),
                options: sorted_options(options),
            })
        }
        0x0C => dbpointer(s)?,
        0x0D => Bson::JavaScriptCode(string_at(s)?.to_owned()),
        0x0E => Bson::Symbol(string_at(s)?.to_owned()),
        0x0F => {
            if e.size < MIN_CODE_WITH_SCOPE {
                return Err(CodecError::malformed("code with scope length too small"));
            }
            let code = string_at(&s[4..])?;
            let scope_start = 4 + 4 + code.len() + 1;
            Bson::JavaScriptCodeWithScope(JavaScriptCodeWithScope {
                code: code.to_owned(),
                scope: read_document(&s[scope_start..])?,
            })
        }
        0x10 => Bson::Int32(i32::from_le_bytes(fixed(s)?)),
        0x11 => {
            let b: [u8; 8] = fixed(s)?;
            Bson::Timestamp(Timestamp {
                increment: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                time: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            })
        }
        0x12 => Bson::Int64(i64::from_le_bytes(fixed(s)?)),
        0x13 => Bson::Decimal128(Decimal128::from_bytes(fixed(s)?)),
        0x7F => Bson::MaxKey,
        0xFF => Bson::MinKey,
        t => return Err(CodecError::malformed(format!("invalid tag: {t}"))),
    })
}

#[cfg(test)]
mod tests;
