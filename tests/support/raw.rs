//! The wire server over raw bytes, without a driver: a lazily started
//! server per `static` that holds one, and OP_MSG requests written and
//! replies read by hand (for tests of limits, malformed input and
//! concurrency that must see exactly what goes over the socket).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

use bson::{Document, RawDocumentBuf};
use schemalab_engine::Engine;
use schemalab_wire::frame;
use schemalab_wire::{BackgroundServer, spawn_background};

/// A server started on first use and kept for the test binary's life.
/// Each `static` holds its own engine, so a module that changes server
/// parameters (`setParameter`) changes them for its own server only.
pub struct Shared(OnceLock<BackgroundServer>);

impl Shared {
    pub const fn new() -> Self {
        Shared(OnceLock::new())
    }

    /// The server's address, starting it on 127.0.0.1:0 the first time.
    pub fn addr(&self) -> SocketAddr {
        self.0
            .get_or_init(|| spawn_background(Engine::new()).unwrap())
            .local_addr()
    }

    /// A new connection to the server; `read_timeout` bounds a server bug,
    /// it is not a wait.
    pub fn connect(&self, read_timeout: Duration) -> TcpStream {
        let stream = TcpStream::connect(self.addr()).unwrap();
        stream.set_read_timeout(Some(read_timeout)).unwrap();
        stream
    }
}

/// Write `body` as an OP_MSG request.
pub fn send(stream: &mut TcpStream, body: Document) {
    send_raw(stream, &RawDocumentBuf::from_document(&body).unwrap());
}

/// Write an encoded `body` as an OP_MSG request.
pub fn send_raw(stream: &mut TcpStream, body: &RawDocumentBuf) {
    stream
        .write_all(&frame::encode_msg_request(1, 0, body, &[]))
        .unwrap();
}

/// Read one OP_MSG reply's body.
pub fn receive(stream: &mut TcpStream) -> Document {
    let mut header = [0u8; 16];
    stream.read_exact(&mut header).unwrap();
    let len = i32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
    let mut rest = vec![0u8; len - 16];
    stream.read_exact(&mut rest).unwrap();
    // Flag bits (4 bytes), then section kind 0 (1 byte), then the body.
    Document::from_reader(&rest[5..]).unwrap()
}

/// One request and its reply.
pub fn call(stream: &mut TcpStream, body: Document) -> Document {
    send(stream, body);
    receive(stream)
}

/// One encoded request and its reply.
pub fn call_raw(stream: &mut TcpStream, body: &RawDocumentBuf) -> Document {
    send_raw(stream, body);
    receive(stream)
}
