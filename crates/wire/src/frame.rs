//! Framing: turning bytes into wire messages and replies into bytes.
//!
//! A message is a 16-byte header (`messageLength, requestID, responseTo,
//! opCode`, little-endian int32s) and a body. We read two kinds of request:
//! OP_MSG, which every modern driver uses, and OP_QUERY, which pymongo, Node
//! (mongosh) and the Go tools still use for the first `isMaster` of a
//! connection. Decoding is pgwire-style: [`decode`] returns `Ok(None)` until a
//! whole message is buffered, and a typed [`FrameError`] on malformed input,
//! after which the connection closes (a framing error leaves the byte stream
//! out of step, so nothing after it can be trusted).

use bson::{RawDocument, RawDocumentBuf};

/// OP_REPLY: the legacy reply, sent only in answer to an OP_QUERY.
pub const OP_REPLY: i32 = 1;
/// OP_QUERY: legacy request, accepted for commands on `<db>.$cmd` only.
pub const OP_QUERY: i32 = 2004;
/// OP_COMPRESSED: refused, as we never advertise a compressor.
pub const OP_COMPRESSED: i32 = 2012;
/// OP_MSG: the modern request and reply.
pub const OP_MSG: i32 = 2013;

/// The largest message we accept (`maxMessageSizeBytes` in the hello reply).
pub const MAX_MESSAGE_SIZE: usize = 48_000_000;

const HEADER_LEN: usize = 16;
/// OP_MSG flag bit 0: a CRC-32C follows the sections.
pub const FLAG_CHECKSUM_PRESENT: u32 = 1;
/// OP_MSG flag bit 1: the sender expects no reply.
pub const FLAG_MORE_TO_COME: u32 = 1 << 1;
/// Bits 0-15 are "required": a receiver must reject those it does not know.
const KNOWN_REQUIRED_FLAGS: u32 = FLAG_CHECKSUM_PRESENT | FLAG_MORE_TO_COME;
const REQUIRED_FLAGS_MASK: u32 = 0xFFFF;

/// Why a message could not be decoded. Every variant closes the connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("message length {0} is out of range (16..={MAX_MESSAGE_SIZE})")]
    BadLength(i64),
    #[error("OP_COMPRESSED is not supported: the server advertises no compressors")]
    Compressed,
    #[error("unsupported opcode {0}")]
    UnsupportedOpcode(i32),
    #[error("OP_MSG sets unknown required flag bits {0:#x}")]
    UnknownRequiredFlags(u32),
    #[error("OP_MSG has {0} kind-0 sections; exactly one is required")]
    BodyCount(usize),
    #[error("unknown OP_MSG section kind {0}")]
    UnknownSectionKind(u8),
    #[error("message truncated: {0}")]
    Truncated(&'static str),
    #[error("invalid BSON in {context}: {detail}")]
    InvalidBson {
        context: &'static str,
        detail: String,
    },
    #[error("invalid C string in {0}")]
    InvalidCString(&'static str),
}

/// The 16-byte message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub length: i32,
    pub request_id: i32,
    pub response_to: i32,
    pub op_code: i32,
}

/// A kind-1 section: documents that belong under `identifier` in the body.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentSequence {
    pub identifier: String,
    /// Kept raw: `insert` hands them to the engine without a `Document`
    /// round-trip, which is most of the cost of a bulk load.
    pub documents: Vec<RawDocumentBuf>,
}

/// A decoded OP_MSG.
#[derive(Debug, Clone, PartialEq)]
pub struct OpMsg {
    pub flags: u32,
    /// The kind-0 section: the command.
    pub body: RawDocumentBuf,
    /// The kind-1 sections, in the order they came.
    pub sequences: Vec<DocumentSequence>,
}

impl OpMsg {
    /// Whether the client wants no reply.
    pub fn more_to_come(&self) -> bool {
        self.flags & FLAG_MORE_TO_COME != 0
    }
}

/// A decoded OP_QUERY.
#[derive(Debug, Clone, PartialEq)]
pub struct OpQuery {
    pub flags: i32,
    /// `<db>.<collection>`; commands use `<db>.$cmd`.
    pub full_collection_name: String,
    pub number_to_skip: i32,
    pub number_to_return: i32,
    /// Kept raw until the command layer has checked its depth.
    pub query: RawDocumentBuf,
}

/// A request message.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Msg(OpMsg),
    Query(OpQuery),
}

/// A request with its header.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub header: Header,
    pub frame: Frame,
}

fn read_i32(buf: &[u8], at: usize) -> Option<i32> {
    let bytes = buf.get(at..at + 4)?;
    Some(i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// Decode one message from the front of `buf`. Returns the request and the
/// number of bytes it used, `Ok(None)` if more bytes are needed.
pub fn decode(buf: &[u8]) -> Result<Option<(Request, usize)>, FrameError> {
    let Some(length) = read_i32(buf, 0) else {
        return Ok(None);
    };
    // Check the length before waiting for the rest, so that a bogus huge
    // length is refused at once rather than buffered towards.
    let len = usize::try_from(length).map_err(|_| FrameError::BadLength(length.into()))?;
    if !(HEADER_LEN..=MAX_MESSAGE_SIZE).contains(&len) {
        return Err(FrameError::BadLength(length.into()));
    }
    if buf.len() < len {
        return Ok(None);
    }
    let (Some(request_id), Some(response_to), Some(op_code)) =
        (read_i32(buf, 4), read_i32(buf, 8), read_i32(buf, 12))
    else {
        return Ok(None);
    };
    let header = Header {
        length,
        request_id,
        response_to,
        op_code,
    };
    let body = &buf[HEADER_LEN..len];
    let frame = match op_code {
        OP_MSG => Frame::Msg(decode_msg(body)?),
        OP_QUERY => Frame::Query(decode_query(body)?),
        OP_COMPRESSED => return Err(FrameError::Compressed),
        other => return Err(FrameError::UnsupportedOpcode(other)),
    };
    Ok(Some((Request { header, frame }, len)))
}

/// Split one BSON document off the front of `buf`, checking its length
/// prefix against what is left and every element inside it.
fn take_document<'a>(
    buf: &'a [u8],
    context: &'static str,
) -> Result<(&'a RawDocument, &'a [u8]), FrameError> {
    let len = read_i32(buf, 0).ok_or(FrameError::Truncated(context))?;
    let len = usize::try_from(len).map_err(|_| FrameError::Truncated(context))?;
    if len < 5 || len > buf.len() {
        return Err(FrameError::Truncated(context));
    }
    let (doc, rest) = buf.split_at(len);
    let raw = RawDocument::from_bytes(doc).map_err(|e| FrameError::InvalidBson {
        context,
        detail: e.to_string(),
    })?;
    validate(raw).map_err(|detail| FrameError::InvalidBson { context, detail })?;
    Ok((raw, rest))
}

/// Walk every element once, so that nothing downstream (the engine works on
/// raw documents) meets a malformed one. The walk is the engine's element
/// walker (`codec::walk`), which accepts and rejects exactly what `bson`'s
/// iterator does, strings' UTF-8 included, without building an element for
/// every step. Iterative, so any nesting is walked without recursion; a
/// document nested deeper than mongod accepts is well formed and gets a
/// command error (see `engine::limits`), not a closed connection.
fn validate(doc: &RawDocument) -> Result<(), String> {
    use schemalab_engine::codec::walk::Doc;
    let mut stack = vec![Doc::from_raw(doc).iter()];
    while let Some(top) = stack.last_mut() {
        let Some(element) = top.next() else {
            stack.pop();
            continue;
        };
        let (_, value) = element.map_err(|e| e.to_string())?;
        if let Some(child) = value.nested().map_err(|e| e.to_string())? {
            stack.push(child.iter());
        }
    }
    Ok(())
}

fn take_cstring<'a>(
    buf: &'a [u8],
    context: &'static str,
) -> Result<(&'a str, &'a [u8]), FrameError> {
    let nul = buf
        .iter()
        .position(|&b| b == 0)
        .ok_or(FrameError::InvalidCString(context))?;
    let s = std::str::from_utf8(&buf[..nul]).map_err(|_| FrameError::InvalidCString(context))?;
    Ok((s, &buf[nul + 1..]))
}

fn decode_msg(body: &[u8]) -> Result<OpMsg, FrameError> {
    let flags = read_i32(body, 0).ok_or(FrameError::Truncated("OP_MSG flags"))? as u32;
    let unknown = flags & REQUIRED_FLAGS_MASK & !KNOWN_REQUIRED_FLAGS;
    if unknown != 0 {
        return Err(FrameError::UnknownRequiredFlags(unknown));
    }
    let mut rest = &body[4..];
    if flags & FLAG_CHECKSUM_PRESENT != 0 {
        // The CRC-32C is accepted but not verified: loopback TCP already
        // guarantees integrity, and verifying would cost every message.
        let end = rest
            .len()
            .checked_sub(4)
            .ok_or(FrameError::Truncated("OP_MSG checksum"))?;
        rest = &rest[..end];
    }
    let mut bodies = Vec::new();
    let mut sequences = Vec::new();
    while let Some((&kind, after)) = rest.split_first() {
        match kind {
            0 => {
                let (doc, tail) = take_document(after, "OP_MSG body")?;
                bodies.push(doc.to_raw_document_buf());
                rest = tail;
            }
            1 => {
                let size = read_i32(after, 0).ok_or(FrameError::Truncated("document sequence"))?;
                let size = usize::try_from(size)
                    .map_err(|_| FrameError::Truncated("document sequence"))?;
                if size < 4 || size > after.len() {
                    return Err(FrameError::Truncated("document sequence"));
                }
                let (section, tail) = after.split_at(size);
                let (identifier, mut docs) = take_cstring(&section[4..], "sequence identifier")?;
                let mut documents = Vec::new();
                while !docs.is_empty() {
                    let (doc, more) = take_document(docs, "document sequence")?;
                    documents.push(doc.to_raw_document_buf());
                    docs = more;
                }
                sequences.push(DocumentSequence {
                    identifier: identifier.to_string(),
                    documents,
                });
                rest = tail;
            }
            other => return Err(FrameError::UnknownSectionKind(other)),
        }
    }
    if bodies.len() != 1 {
        return Err(FrameError::BodyCount(bodies.len()));
    }
    let body = bodies.pop().ok_or(FrameError::BodyCount(0))?;
    Ok(OpMsg {
        flags,
        body,
        sequences,
    })
}

fn decode_query(body: &[u8]) -> Result<OpQuery, FrameError> {
    let flags = read_i32(body, 0).ok_or(FrameError::Truncated("OP_QUERY flags"))?;
    let (name, rest) = take_cstring(&body[4..], "OP_QUERY collection name")?;
    let number_to_skip = read_i32(rest, 0).ok_or(FrameError::Truncated("OP_QUERY skip"))?;
    let number_to_return = read_i32(rest, 4).ok_or(FrameError::Truncated("OP_QUERY return"))?;
    let (query, rest) = take_document(&rest[8..], "OP_QUERY query")?;
    // An optional field selector may follow; commands ignore it, but it must
    // still be well formed.
    if !rest.is_empty() {
        let (_, tail) = take_document(rest, "OP_QUERY field selector")?;
        if !tail.is_empty() {
            return Err(FrameError::InvalidBson {
                context: "OP_QUERY",
                detail: "trailing bytes".into(),
            });
        }
    }
    Ok(OpQuery {
        flags,
        full_collection_name: name.to_string(),
        number_to_skip,
        number_to_return,
        query: query.to_raw_document_buf(),
    })
}

fn header_bytes(out: &mut Vec<u8>, request_id: i32, response_to: i32, op_code: i32) {
    out.extend_from_slice(&0i32.to_le_bytes()); // patched by `finish`
    out.extend_from_slice(&request_id.to_le_bytes());
    out.extend_from_slice(&response_to.to_le_bytes());
    out.extend_from_slice(&op_code.to_le_bytes());
}

fn finish(mut out: Vec<u8>) -> Vec<u8> {
    let len = i32::try_from(out.len()).unwrap_or(i32::MAX).to_le_bytes();
    out[..4].copy_from_slice(&len);
    out
}

/// An OP_MSG reply: flags 0 and one kind-0 section.
pub fn encode_msg(request_id: i32, response_to: i32, body: &RawDocument) -> Vec<u8> {
    let bytes = body.as_bytes();
    let mut out = Vec::with_capacity(HEADER_LEN + 5 + bytes.len());
    header_bytes(&mut out, request_id, response_to, OP_MSG);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(0);
    out.extend_from_slice(bytes);
    finish(out)
}

/// An OP_MSG request with optional kind-1 sections (for tests and clients).
pub fn encode_msg_request(
    request_id: i32,
    flags: u32,
    body: &RawDocument,
    sequences: &[DocumentSequence],
) -> Vec<u8> {
    let mut out = Vec::new();
    header_bytes(&mut out, request_id, 0, OP_MSG);
    out.extend_from_slice(&flags.to_le_bytes());
    out.push(0);
    out.extend_from_slice(body.as_bytes());
    for seq in sequences {
        out.push(1);
        let start = out.len();
        out.extend_from_slice(&0i32.to_le_bytes());
        out.extend_from_slice(seq.identifier.as_bytes());
        out.push(0);
        for doc in &seq.documents {
            out.extend_from_slice(doc.as_bytes());
        }
        let size = i32::try_from(out.len() - start).unwrap_or(i32::MAX);
        out[start..start + 4].copy_from_slice(&size.to_le_bytes());
    }
    if flags & FLAG_CHECKSUM_PRESENT != 0 {
        // Placeholder CRC: the server does not verify it.
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    finish(out)
}

/// An OP_REPLY carrying one document, in answer to an OP_QUERY.
pub fn encode_reply(request_id: i32, response_to: i32, doc: &RawDocument) -> Vec<u8> {
    let bytes = doc.as_bytes();
    let mut out = Vec::with_capacity(HEADER_LEN + 20 + bytes.len());
    header_bytes(&mut out, request_id, response_to, OP_REPLY);
    out.extend_from_slice(&0i32.to_le_bytes()); // responseFlags
    out.extend_from_slice(&0i64.to_le_bytes()); // cursorID
    out.extend_from_slice(&0i32.to_le_bytes()); // startingFrom
    out.extend_from_slice(&1i32.to_le_bytes()); // numberReturned
    out.extend_from_slice(bytes);
    finish(out)
}

/// An OP_QUERY request (for tests).
pub fn encode_query(request_id: i32, full_collection_name: &str, query: &RawDocument) -> Vec<u8> {
    let mut out = Vec::new();
    header_bytes(&mut out, request_id, 0, OP_QUERY);
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(full_collection_name.as_bytes());
    out.push(0);
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&(-1i32).to_le_bytes());
    out.extend_from_slice(query.as_bytes());
    finish(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bson::rawdoc;
    use proptest::prelude::*;

    /// What the wire layer validated with before: `bson`'s own iterator
    /// over every element, nested documents, arrays and scopes included.
    fn bson_validates(doc: &RawDocument) -> bool {
        let mut stack = vec![doc.into_iter()];
        while let Some(top) = stack.last_mut() {
            let Some(element) = top.next() else {
                stack.pop();
                continue;
            };
            let Ok((_, value)) = element else {
                return false;
            };
            match value {
                bson::RawBsonRef::Document(d) => stack.push(d.into_iter()),
                bson::RawBsonRef::Array(a) => match RawDocument::from_bytes(a.as_bytes()) {
                    Ok(d) => stack.push(d.into_iter()),
                    Err(_) => return false,
                },
                bson::RawBsonRef::JavaScriptCodeWithScope(c) => stack.push(c.scope.into_iter()),
                _ => {}
            }
        }
        true
    }

    fn sample() -> bson::RawDocumentBuf {
        rawdoc! {
            "_id": bson::oid::ObjectId::from_bytes([7; 12]),
            "s": "héllo",
            "n": 42,
            "arr": [1, "two", {"three": [3.0, null]}],
            "sub": {"k": true, "t": bson::DateTime::from_millis(5)},
            "code": bson::RawJavaScriptCodeWithScope {
                code: "f()".into(),
                scope: rawdoc! {"x": "y"},
            },
            "bin": bson::Binary { subtype: bson::spec::BinarySubtype::Generic, bytes: vec![1, 2] },
        }
    }

    proptest! {
        /// Frame validation accepts exactly the documents `bson`'s
        /// iterator accepts, however their bytes are damaged.
        #[test]
        fn validation_accepts_what_bsons_iterator_accepts(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)
        ) {
            let mut bytes = sample().into_bytes();
            for (at, byte) in edits {
                let i = at.index(bytes.len());
                bytes[i] = byte;
            }
            if let Ok(doc) = RawDocument::from_bytes(&bytes) {
                prop_assert_eq!(validate(doc).is_ok(), bson_validates(doc), "{:?}", bytes);
            }
        }
    }

    #[test]
    fn a_bad_string_deep_inside_is_refused() {
        let good = sample();
        assert!(validate(&good).is_ok() && bson_validates(&good));
        let mut bytes = good.into_bytes();
        // A byte of the string "two" inside `arr`, made invalid UTF-8.
        let at = bytes.windows(3).position(|w| w == b"two").unwrap();
        bytes[at] = 0xff;
        let doc = RawDocument::from_bytes(&bytes).unwrap();
        assert!(!bson_validates(doc));
        assert!(validate(doc).is_err());
    }

    #[test]
    fn partial_input_asks_for_more() {
        let msg = encode_msg_request(7, 0, &rawdoc! {"ping": 1, "$db": "admin"}, &[]);
        for cut in 0..msg.len() {
            assert_eq!(decode(&msg[..cut]), Ok(None), "cut at {cut}");
        }
        let (req, used) = decode(&msg).unwrap().unwrap();
        assert_eq!(used, msg.len());
        assert_eq!(req.header.request_id, 7);
    }

    #[test]
    fn sequences_in_any_order_and_checksum() {
        let seq = DocumentSequence {
            identifier: "documents".into(),
            documents: vec![rawdoc! {"a": 1}, rawdoc! {"a": 2}],
        };
        let body = rawdoc! {"insert": "c", "$db": "d"};
        let mut msg =
            encode_msg_request(1, FLAG_CHECKSUM_PRESENT, &body, std::slice::from_ref(&seq));
        let (req, _) = decode(&msg).unwrap().unwrap();
        let Frame::Msg(m) = req.frame else { panic!() };
        assert_eq!(m.sequences, vec![seq.clone()]);
        assert_eq!(m.body, body);
        // Move the kind-0 section after the kind-1 one.
        let body_len = body.as_bytes().len() + 1;
        let sections = msg[20..msg.len() - 4].to_vec();
        let (b, s) = sections.split_at(body_len);
        msg.splice(20..msg.len() - 4, s.iter().chain(b).copied());
        let (req, _) = decode(&msg).unwrap().unwrap();
        let Frame::Msg(m) = req.frame else { panic!() };
        assert_eq!(m.body, body);
        assert_eq!(m.sequences, vec![seq]);
    }

    #[test]
    fn malformed_messages_are_typed_errors() {
        let body = rawdoc! {"ping": 1};
        let msg = encode_msg_request(1, 1 << 5, &body, &[]);
        assert_eq!(decode(&msg), Err(FrameError::UnknownRequiredFlags(1 << 5)));
        // Bits 16-31 are optional and ignored.
        assert!(decode(&encode_msg_request(1, 1 << 16, &body, &[])).is_ok());
        let mut huge = msg.clone();
        huge[..4].copy_from_slice(&(MAX_MESSAGE_SIZE as i32 + 1).to_le_bytes());
        assert!(matches!(decode(&huge), Err(FrameError::BadLength(_))));
        let mut compressed = msg.clone();
        compressed[12..16].copy_from_slice(&OP_COMPRESSED.to_le_bytes());
        assert_eq!(decode(&compressed), Err(FrameError::Compressed));
        let mut bad_doc = msg.clone();
        bad_doc[21..25].copy_from_slice(&1000i32.to_le_bytes());
        assert!(decode(&bad_doc).is_err());
        let mut two = encode_msg_request(1, 0, &body, &[]);
        two.push(0);
        two.extend_from_slice(body.as_bytes());
        let len = two.len() as i32;
        two[..4].copy_from_slice(&len.to_le_bytes());
        assert_eq!(decode(&two), Err(FrameError::BodyCount(2)));
    }

    #[test]
    fn op_query_round_trip() {
        let q = encode_query(3, "admin.$cmd", &rawdoc! {"isMaster": 1});
        let (req, _) = decode(&q).unwrap().unwrap();
        let Frame::Query(q) = req.frame else { panic!() };
        assert_eq!(q.full_collection_name, "admin.$cmd");
        assert_eq!(q.query.to_document().unwrap(), bson::doc! {"isMaster": 1});
    }
}
