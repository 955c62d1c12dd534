//! Walking a raw BSON document's elements in place, for the raw matcher's
//! field lookups.
//!
//! `bson`'s `RawDocument::get` builds a `RawElement` for every element it
//! passes, validates each key as UTF-8 before comparing it and wraps every
//! step in closures that attach the key to a possible error; on a
//! collection scan that was most of the cost of reading one field. This
//! walker frames elements from their type byte and length prefixes, compares
//! key bytes directly and builds a [`Value`] only for the element it
//! returns. It accepts and rejects exactly what `bson` does:
//!
//! - [`Doc::new`] makes `RawDocument::from_bytes`'s checks (length, prefix,
//!   terminator);
//! - [`Doc::get`] errs exactly when `RawDocument::get` errs: every element
//!   before the one found is framed and bounds-checked as `bson`'s iterator
//!   does and its key must be UTF-8 (checked only when it is not the key
//!   wanted, which is UTF-8 already), and the element found is checked as
//!   `RawElement::value` checks it; elements after it are not looked at;
//! - [`Doc::iter`] yields what `RawDocument::iter` yields: a framing error
//!   or a bad key ends it, a bad value is an error in its place.
//!
//! No input makes it panic: every read is bounds-checked. Errors carry a
//! fixed description, not `bson`'s wording, since the matcher only needs to
//! know that the record is malformed.

use bson::spec::{BinarySubtype, ElementType};
use bson::{Bson, RawDocument};

use super::{CodecError, Element};

/// Why bytes are not valid BSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WalkError {
    /// A length, terminator or type byte is wrong.
    #[error("malformed BSON: {0}")]
    Malformed(&'static str),
    /// A key or string is not valid UTF-8.
    #[error("malformed BSON: invalid UTF-8")]
    Utf8,
}

type Result<T> = std::result::Result<T, WalkError>;

/// The smallest document: a length and the terminator.
const MIN_DOCUMENT: usize = 5;
/// The smallest length-prefixed string: a length and the terminator.
const MIN_STRING: usize = 5;
/// The smallest code-with-scope: total length, an empty string, an empty
/// document.
const MIN_CODE_WITH_SCOPE: usize = 4 + 5 + 5;

/// The bytes of a document (or array) whose framing has been checked as
/// `RawDocument::from_bytes` checks it.
#[derive(Debug, Clone, Copy)]
pub struct Doc<'a>(&'a [u8]);

/// One element's value, checked as `RawElement::value` checks it.
#[derive(Debug, Clone, Copy)]
pub struct Value<'a> {
    kind: ElementType,
    /// The value's bytes (without tag and key).
    bytes: &'a [u8],
    /// The text of a string, symbol or code value (empty for any other).
    text: &'a str,
}

/// Where one element lies in its document.
#[derive(Debug, Clone, Copy)]
struct Frame {
    kind: ElementType,
    key_start: usize,
    key_end: usize,
    start: usize,
    size: usize,
}

fn malformed<T>(what: &'static str) -> Result<T> {
    Err(WalkError::Malformed(what))
}

fn utf8(b: &[u8]) -> Result<&str> {
    std::str::from_utf8(b).map_err(|_| WalkError::Utf8)
}

/// The little-endian i32 at `at`, if four bytes are there.
fn i32_at(d: &[u8], at: usize) -> Result<i32> {
    match d.get(at..).and_then(|s| s.get(..4)) {
        Some(&[a, b, c, e]) => Ok(i32::from_le_bytes([a, b, c, e])),
        _ => malformed("expected 4 bytes to read i32"),
    }
}

/// The position of the NUL ending the cstring at `at`.
fn cstring_end(d: &[u8], at: usize) -> Result<usize> {
    let rest = d.get(at..).unwrap_or_default();
    match rest.iter().position(|&b| b == 0) {
        Some(n) => Ok(at + n),
        None => malformed("expected null terminator"),
    }
}

/// The total length (prefix, bytes, NUL) of the length-prefixed string at
/// `at`, checked as `bson`'s `read_len` checks it.
fn string_len(d: &[u8], at: usize) -> Result<usize> {
    let rest = d.get(at..).unwrap_or_default();
    let len = usize::try_from(i32_at(rest, 0)?)
        .map_err(|_| WalkError::Malformed("string length can't be negative"))?;
    let end = len + 4;
    if end < MIN_STRING {
        return malformed("string too short");
    }
    if rest.get(end - 1) != Some(&0) {
        return malformed("string not null-terminated or too long");
    }
    Ok(end)
}

/// The length of the embedded document at `at`, checked as `bson`'s
/// iterator checks it.
fn embedded_len(d: &[u8], at: usize) -> Result<usize> {
    if d.len().saturating_sub(at) < MIN_DOCUMENT {
        return malformed("embedded document too short");
    }
    // Negative lengths become huge and fail the bounds check below, as in
    // `bson`.
    let size = i32_at(d, at)? as usize;
    if size < MIN_DOCUMENT {
        return malformed("embedded document too small");
    }
    match at.checked_add(size).and_then(|end| d.get(end - 1)) {
        Some(0) => Ok(size),
        Some(_) => malformed("embedded document not null-terminated"),
        None => malformed("embedded document overruns its parent"),
    }
}

/// A non-negative length prefix at `at`.
fn length_at(d: &[u8], at: usize) -> Result<usize> {
    usize::try_from(i32_at(d, at)?).map_err(|_| WalkError::Malformed("negative length"))
}

/// The size of the value of type `tag` starting at `start`, before the
/// bounds check (the sizes `bson`'s iterator computes).
#[inline(always)]
fn value_size(d: &[u8], kind: ElementType, start: usize) -> Result<usize> {
    Ok(match kind {
        ElementType::Boolean => 1,
        ElementType::Int32 => 4,
        ElementType::Int64
        | ElementType::Double
        | ElementType::DateTime
        | ElementType::Timestamp => 8,
        ElementType::ObjectId => 12,
        ElementType::Decimal128 => 16,
        ElementType::Null | ElementType::Undefined | ElementType::MinKey | ElementType::MaxKey => 0,
        ElementType::String | ElementType::Symbol | ElementType::JavaScriptCode => {
            string_len(d, start)?
        }
        ElementType::EmbeddedDocument | ElementType::Array => embedded_len(d, start)?,
        ElementType::Binary => length_at(d, start)? + 4 + 1,
        ElementType::RegularExpression => {
            let pattern_end = cstring_end(d, start)?;
            utf8(&d[start..pattern_end])?;
            let options_end = cstring_end(d, pattern_end + 1)?;
            utf8(&d[pattern_end + 1..options_end])?;
            options_end + 1 - start
        }
        ElementType::DbPointer => string_len(d, start)? + 12,
        ElementType::JavaScriptCodeWithScope => length_at(d, start)?,
    })
}

impl<'a> Doc<'a> {
    /// Document bytes, checked as `RawDocument::from_bytes` checks them.
    pub fn new(bytes: &'a [u8]) -> Result<Doc<'a>> {
        if bytes.len() < MIN_DOCUMENT {
            return malformed("document too short");
        }
        if i32_at(bytes, 0)? != bytes.len() as i32 {
            return malformed("document length incorrect");
        }
        if bytes.last() != Some(&0) {
            return malformed("document not null-terminated");
        }
        Ok(Doc(bytes))
    }

    /// A document `bson` has already checked.
    pub fn from_raw(raw: &'a RawDocument) -> Doc<'a> {
        Doc(raw.as_bytes())
    }

    /// The document's bytes.
    #[cfg(test)]
    pub fn as_bytes(self) -> &'a [u8] {
        self.0
    }

    /// Frame the element at `off`; `None` at the terminator. The key is not
    /// checked as UTF-8 here. Inlined into the lookup loop, where it is
    /// most of the work.
    #[inline(always)]
    fn frame(self, off: usize) -> Result<Option<Frame>> {
        let d = self.0;
        let last = d.len().saturating_sub(1);
        if off == last {
            return match d.get(last) {
                Some(0) => Ok(None),
                _ => malformed("document not null-terminated"),
            };
        }
        let Some(&tag) = d.get(off) else {
            return malformed("iteration overflowed document");
        };
        let key_start = off + 1;
        let key_end = cstring_end(d, key_start)?;
        let start = key_end + 1;
        let Some(kind) = ElementType::from(tag) else {
            return malformed("invalid element type");
        };
        let size = value_size(d, kind, start)?;
        if start.checked_add(size).is_none_or(|end| end > d.len()) {
            return malformed("length exceeds remaining length of buffer");
        }
        Ok(Some(Frame {
            kind,
            key_start,
            key_end,
            start,
            size,
        }))
    }

    /// The value of the first element named `key`, as `RawDocument::get`
    /// finds it (and failing where it fails).
    pub fn get(self, key: &str) -> Result<Option<Value<'a>>> {
        let d = self.0;
        let wanted = key.as_bytes();
        let mut off = 4;
        while let Some(f) = self.frame(off)? {
            let name = &d[f.key_start..f.key_end];
            if name == wanted {
                return Value::new(f.kind, &d[f.start..f.start + f.size]).map(Some);
            }
            // Keys are nearly always ASCII, which is UTF-8.
            if !name.is_ascii() {
                utf8(name)?;
            }
            off = f.start + f.size;
        }
        Ok(None)
    }

    /// The value of the last element named `key`: the one decoding into a
    /// `Document` keeps when a name repeats. Every element is framed and
    /// its key checked; only the value returned is checked as a value.
    pub fn get_last(self, key: &str) -> Result<Option<Value<'a>>> {
        let d = self.0;
        let wanted = key.as_bytes();
        let mut off = 4;
        let mut last = None;
        while let Some(f) = self.frame(off)? {
            let name = &d[f.key_start..f.key_end];
            if name == wanted {
                last = Some(f);
            } else if !name.is_ascii() {
                utf8(name)?;
            }
            off = f.start + f.size;
        }
        last.map(|f| Value::new(f.kind, &d[f.start..f.start + f.size]))
            .transpose()
    }

    /// The elements' keys and values, in order, as `RawDocument::iter`
    /// yields them.
    pub fn iter(self) -> Iter<'a> {
        Iter {
            doc: self,
            off: 4,
            done: false,
        }
    }

    /// The elements' values, in order (an array's items), as
    /// `RawArray::into_iter` yields them.
    pub fn values(self) -> impl Iterator<Item = Result<Value<'a>>> {
        self.iter().map(|r| r.map(|(_, v)| v))
    }
}

/// The elements of a [`Doc`]; see [`Doc::iter`].
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    doc: Doc<'a>,
    off: usize,
    done: bool,
}

impl Iter<'_> {
    /// Where the next element starts in the document's bytes (after the
    /// last one, where the previous one ended).
    pub fn offset(&self) -> usize {
        self.off
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = Result<(&'a str, Value<'a>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let d = self.doc.0;
        // A framing error or a bad key ends the iteration, as in `bson`; a
        // bad value does not (its element was framed, so the next one can
        // be found).
        let framed = self.doc.frame(self.off).and_then(|f| match f {
            Some(f) => Ok(Some((utf8(&d[f.key_start..f.key_end])?, f))),
            None => Ok(None),
        });
        match framed {
            Ok(Some((key, f))) => {
                self.off = f.start + f.size;
                Some(Value::new(f.kind, &d[f.start..f.start + f.size]).map(|v| (key, v)))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<'a> Value<'a> {
    /// A framed value of type `kind`, checked as `RawElement::value`
    /// checks it.
    fn new(kind: ElementType, bytes: &'a [u8]) -> Result<Value<'a>> {
        let mut text = "";
        match kind {
            ElementType::String | ElementType::Symbol | ElementType::JavaScriptCode => {
                // Framed: a length, the bytes, a NUL.
                text = utf8(
                    bytes
                        .get(4..bytes.len().saturating_sub(1))
                        .unwrap_or_default(),
                )?;
            }
            ElementType::DbPointer => {
                let end = string_len(bytes, 0)?;
                utf8(&bytes[4..end - 1])?;
            }
            ElementType::Boolean if bytes.first().is_none_or(|&b| b > 1) => {
                return malformed("boolean must be stored as 0 or 1");
            }
            ElementType::Binary => check_binary(bytes)?,
            ElementType::JavaScriptCodeWithScope => {
                if bytes.len() < MIN_CODE_WITH_SCOPE {
                    return malformed("code with scope length too small");
                }
                let code_len = string_len(bytes, 4)?;
                utf8(&bytes[8..4 + code_len - 1])?;
                Doc::new(bytes.get(4 + code_len..).unwrap_or_default())?;
            }
            _ => {}
        }
        Ok(Value { kind, bytes, text })
    }

    /// Its BSON type.
    pub fn element_type(self) -> ElementType {
        self.kind
    }

    /// Its bytes as stored (without tag and key).
    pub fn raw_bytes(self) -> &'a [u8] {
        self.bytes
    }

    /// The text of a string or symbol.
    pub fn as_str(self) -> Option<&'a str> {
        match self.kind {
            ElementType::String | ElementType::Symbol => Some(self.text),
            _ => None,
        }
    }

    /// An int32 or int64 as `i64`.
    pub fn as_int(self) -> Option<i64> {
        match (self.kind, self.bytes) {
            (ElementType::Int32, &[a, b, c, d]) => {
                Some(i64::from(i32::from_le_bytes([a, b, c, d])))
            }
            (ElementType::Int64, &[a, b, c, d, e, f, g, h]) => {
                Some(i64::from_le_bytes([a, b, c, d, e, f, g, h]))
            }
            _ => None,
        }
    }

    /// An embedded document's bytes.
    pub fn as_document(self) -> Option<Doc<'a>> {
        (self.kind == ElementType::EmbeddedDocument).then_some(Doc(self.bytes))
    }

    /// An array's bytes, as a document keyed `"0"`, `"1"`, ….
    pub fn as_array(self) -> Option<Doc<'a>> {
        (self.kind == ElementType::Array).then_some(Doc(self.bytes))
    }

    /// The document nested in this value, checked as `bson` checks it
    /// when it hands one out: an embedded document or an array (`Err`
    /// where `RawDocument::from_bytes` refuses its bytes), or the scope of
    /// code with scope (checked when the value was framed); `Ok(None)` for
    /// any other value.
    pub fn nested(self) -> Result<Option<Doc<'a>>> {
        match self.kind {
            ElementType::EmbeddedDocument | ElementType::Array => Doc::new(self.bytes).map(Some),
            ElementType::JavaScriptCodeWithScope => {
                let code_len = string_len(self.bytes, 4)?;
                Doc::new(self.bytes.get(4 + code_len..).unwrap_or_default()).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// The value decoded, failing exactly where converting `bson`'s
    /// `RawBsonRef` to `Bson` fails (for documents and arrays, anywhere
    /// inside them).
    pub fn decode(self) -> std::result::Result<Bson, CodecError> {
        super::value(
            self.bytes,
            &Element {
                key: "",
                tag: self.kind as u8,
                start: 0,
                size: self.bytes.len(),
            },
        )
    }
}

/// The checks `RawElement::value` makes of a binary value (framed: a
/// length, a subtype, the bytes).
fn check_binary(bytes: &[u8]) -> Result<()> {
    let size = bytes.len();
    let Some(len) = size.checked_sub(4 + 1) else {
        return malformed("binary length too small");
    };
    if size >= i32::MAX as usize {
        return malformed("binary length exceeds maximum");
    }
    if bytes.get(4).copied().map(BinarySubtype::from) == Some(BinarySubtype::BinaryOld) {
        if len < 4 {
            return malformed("old binary subtype has no inner declared length");
        }
        let inner = i32_at(bytes, 5)? as usize;
        if inner.checked_add(4) != Some(len) {
            return malformed("old binary subtype has wrong inner declared length");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
