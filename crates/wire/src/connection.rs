//! Buffered message I/O on one TCP stream.
//!
//! Reads fill a `BytesMut` until [`frame::decode`] finds a whole message;
//! writes go straight out (one `write_all` per reply, which is one syscall
//! for the usual small reply and keeps latency low for point lookups).

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::frame::{self, FrameError, Request};

/// A new connection's read buffer.
const INITIAL_CAPACITY: usize = 64 * 1024;
/// Past this, an emptied read buffer is given back rather than kept.
const RETAINED_CAPACITY: usize = 1024 * 1024;

/// Why reading a message failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("connection reset mid-message")]
    ResetMidMessage,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// One client's stream and read buffer.
#[derive(Debug)]
pub struct Connection {
    stream: TcpStream,
    /// Bytes read but not yet decoded; a message may arrive in many reads.
    buffer: BytesMut,
}

impl Connection {
    /// A probe that tells whether the client has closed its end or reset
    /// the connection, without reading what it may have sent: it peeks at a
    /// duplicate of the socket, which tokio keeps non-blocking, so a live
    /// idle client answers "would block" at once.
    pub fn disconnect_probe(&self) -> Option<schemalab_engine::limits::Probe> {
        use std::os::fd::AsFd;
        let fd = self.stream.as_fd().try_clone_to_owned().ok()?;
        let socket = std::net::TcpStream::from(fd);
        Some(schemalab_engine::limits::Probe(std::sync::Arc::new(
            move || {
                let mut byte = [0u8; 1];
                match socket.peek(&mut byte) {
                    Ok(0) => true,
                    Ok(_) => false,
                    Err(e) => !matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                    ),
                }
            },
        )))
    }

    /// Wrap an accepted stream.
    pub fn new(stream: TcpStream) -> Self {
        // Replies are written whole; Nagle would only add delay.
        let _ = stream.set_nodelay(true);
        Self {
            stream,
            buffer: BytesMut::with_capacity(INITIAL_CAPACITY),
        }
    }

    /// The peer's address, for `whatsmyuri`.
    pub fn peer_addr(&self) -> Option<std::net::SocketAddr> {
        self.stream.peer_addr().ok()
    }

    /// The server's end of the connection.
    pub fn local_addr(&self) -> Option<std::net::SocketAddr> {
        self.stream.local_addr().ok()
    }

    /// Read the next request. `Ok(None)` on a clean close between messages.
    pub async fn read_request(&mut self) -> Result<Option<Request>, ConnectionError> {
        loop {
            if let Some((request, used)) = frame::decode(&self.buffer)? {
                self.buffer.advance(used);
                // A bulk insert can grow the buffer to the 48 MB message
                // limit; an idle connection should not keep that much.
                if self.buffer.is_empty() && self.buffer.capacity() > RETAINED_CAPACITY {
                    self.buffer = BytesMut::with_capacity(INITIAL_CAPACITY);
                }
                return Ok(Some(request));
            }
            // `decode` has vetted the length prefix by now (it is within
            // the message size limit), so reserving for the whole message
            // at once is safe and spares repeated reallocation on bulk loads.
            let wanted = match self.buffer.get(..4) {
                Some(b) => {
                    let len = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    usize::try_from(len)
                        .unwrap_or(0)
                        .saturating_sub(self.buffer.len())
                }
                None => 0,
            };
            self.buffer.reserve(wanted.max(4096));
            if self.stream.read_buf(&mut self.buffer).await? == 0 {
                return if self.buffer.is_empty() {
                    Ok(None)
                } else {
                    Err(ConnectionError::ResetMidMessage)
                };
            }
        }
    }

    /// Send an encoded reply.
    pub async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes).await
    }
}
