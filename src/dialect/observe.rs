//! A window on what a session sends. An [`Observer`] given to a
//! [`Session`](super::Session) sees every command after the write gate
//! admitted it and before the driver sends it, and again when the reply
//! came back: the measurement path records reads to explain them, and
//! snapshots data around writes whose replies carry no counts. The dialect
//! knows nothing of what an observer does with it.

use bson::Document;
use futures_util::future::BoxFuture;
use mongodb::Client;

/// What a command returned, as an observer sees it.
#[derive(Debug, Clone, Copy)]
pub enum Reply<'a> {
    /// A plain command's reply document.
    Document(&'a Document),
    /// The command opened a cursor (find, aggregate, listIndexes …); its
    /// batches go to the statement, not to the observer.
    Cursor,
    /// The command failed; the statement sees the error.
    Failed,
}

/// Sees each command a session sends.
pub trait Observer: Send {
    /// `cmd` is about to be sent to database `db` through `client`.
    fn before<'a>(
        &'a mut self,
        client: &'a Client,
        db: &'a str,
        cmd: &'a Document,
    ) -> BoxFuture<'a, ()>;

    /// `cmd`, sent to `db`, returned `reply`.
    fn after<'a>(
        &'a mut self,
        client: &'a Client,
        db: &'a str,
        cmd: &'a Document,
        reply: Reply<'a>,
    ) -> BoxFuture<'a, ()>;
}
