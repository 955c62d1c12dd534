//! Where a request runs: on its connection's task, or off the async workers.
//!
//! Most requests a driver sends are tiny: the handshake and its heartbeats
//! (`hello`), `ping`, `endSessions`, `killCursors`, and point lookups by
//! `_id`. Handing each of them to another thread (`block_in_place` or the
//! blocking pool) costs more than running them: a thread wake-up or two and
//! about as much CPU again as the command itself. So a request is sorted by
//! its kind, read from the raw command before anything is parsed:
//!
//! - [`Weight::Light`]: bounded work that touches no collection, or an
//!   `_id` point lookup (mongod's IDHACK: one index probe, at most one
//!   document). It runs on the connection's task.
//! - [`Weight::Heavy`]: anything that may scan, sort, group, write many
//!   documents or build an index. It runs where it cannot hold up the async
//!   workers that serve every other connection and the drivers' heartbeats.
//!
//! A point lookup reads a snapshot of the catalog, which waits while a
//! writer holds the catalog lock; the server checks that lock just before
//! and sends the lookup off the workers when a write is under way, or when
//! the database's profiler is on (recording the lookup is a write). Either way the command runs through the same
//! [`super::cmd::execute`]: its panics still become `InternalError`, and
//! `maxTimeMS` and the client-disconnect probe still apply.

use bson::{RawBsonRef, RawDocument};

use super::frame::Frame;

/// How much work a request may do, by its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weight {
    /// Touches no collection: answer on the connection's task.
    Light,
    /// An `_id` point lookup: one index probe, at most one document. Light
    /// unless a writer holds the catalog.
    PointLookup,
    /// May run long: run off the async workers.
    Heavy,
}

/// Commands whose work does not depend on the data: the handshake, session
/// and cursor bookkeeping, server parameters.
const LIGHT_COMMANDS: [&str; 13] = [
    "hello",
    "isMaster",
    "ismaster",
    "ping",
    "buildInfo",
    "buildinfo",
    "getParameter",
    "setParameter",
    "getLog",
    "connectionStatus",
    "whatsmyuri",
    "endSessions",
    "killCursors",
];

/// The fields of a `find` that keep it a point lookup: generic command
/// arguments and options that cannot make it read more than one document.
const POINT_LOOKUP_FIELDS: [&str; 17] = [
    "find",
    "filter",
    "projection",
    "limit",
    "skip",
    "batchSize",
    "singleBatch",
    "maxTimeMS",
    "comment",
    "readConcern",
    "lsid",
    "$db",
    "$clusterTime",
    "$readPreference",
    "apiVersion",
    "apiStrict",
    "apiDeprecationErrors",
];

impl Weight {
    /// The weight of a request frame. OP_QUERY only carries the handshake
    /// (anything else is refused at once), so it is always light.
    pub fn of(frame: &Frame) -> Weight {
        match frame {
            Frame::Msg(msg) if msg.sequences.is_empty() => Weight::of_command(&msg.body),
            // Document sequences carry bulk writes.
            Frame::Msg(_) => Weight::Heavy,
            Frame::Query(_) => Weight::Light,
        }
    }

    /// The weight of an OP_MSG body, by its first key. Every command not
    /// named light is heavy, so a new command is safe by default.
    pub fn of_command(body: &RawDocument) -> Weight {
        let Some(Ok((name, _))) = body.into_iter().next() else {
            // No command name: refused at once.
            return Weight::Light;
        };
        if LIGHT_COMMANDS.contains(&name) {
            Weight::Light
        } else if name == "find" && is_point_lookup(body) {
            Weight::PointLookup
        } else {
            Weight::Heavy
        }
    }
}

/// The `$db` of an OP_MSG request.
pub fn database(frame: &Frame) -> Option<&str> {
    match frame {
        Frame::Msg(msg) => msg.body.get_str("$db").ok(),
        Frame::Query(_) => None,
    }
}

/// The collection a `find` names (`find: <coll>`).
pub fn collection(frame: &Frame) -> Option<&str> {
    match frame {
        Frame::Msg(msg) => msg.body.get_str("find").ok(),
        Frame::Query(_) => None,
    }
}

/// `find: <coll>, filter: {_id: <scalar>}` with at most a plain projection,
/// `limit`, `skip` and generic arguments: one `_id` index probe. Anything
/// that could widen the read (a `sort`, a `hint`, a collation, an operator
/// in the filter, a computed projection) or a `system.*` collection (which
/// may lack an `_id` index) is not.
fn is_point_lookup(body: &RawDocument) -> bool {
    let mut filter_ok = false;
    for element in body {
        let Ok((key, value)) = element else {
            return false;
        };
        if !POINT_LOOKUP_FIELDS.contains(&key) {
            return false;
        }
        match (key, value) {
            ("find", RawBsonRef::String(coll)) if coll.starts_with("system.") => return false,
            ("find", RawBsonRef::String(_)) => {}
            ("find", _) => return false,
            ("filter", RawBsonRef::Document(filter)) => filter_ok = is_id_equality(filter),
            ("filter", _) => return false,
            ("projection", RawBsonRef::Document(p)) if !is_plain_projection(p) => return false,
            _ => {}
        }
    }
    filter_ok
}

/// `{_id: v}` with `v` a scalar that equality on the `_id` index answers
/// (no operators, regexes, arrays or nulls).
fn is_id_equality(filter: &RawDocument) -> bool {
    let mut elements = filter.into_iter();
    let Some(Ok(("_id", value))) = elements.next() else {
        return false;
    };
    elements.next().is_none()
        && matches!(
            value,
            RawBsonRef::Int32(_)
                | RawBsonRef::Int64(_)
                | RawBsonRef::Double(_)
                | RawBsonRef::String(_)
                | RawBsonRef::ObjectId(_)
                | RawBsonRef::Boolean(_)
                | RawBsonRef::DateTime(_)
                | RawBsonRef::Decimal128(_)
        )
}

/// Inclusions and exclusions of plain fields only.
fn is_plain_projection(projection: &RawDocument) -> bool {
    projection.into_iter().all(|element| {
        element.is_ok_and(|(key, value)| {
            !key.starts_with('$')
                && matches!(
                    value,
                    RawBsonRef::Int32(_)
                        | RawBsonRef::Int64(_)
                        | RawBsonRef::Double(_)
                        | RawBsonRef::Boolean(_)
                )
        })
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use bson::rawdoc;

    use super::*;

    #[test]
    fn handshake_and_bookkeeping_are_light() {
        for body in [
            rawdoc! {"hello": 1, "$db": "admin"},
            rawdoc! {"isMaster": 1, "helloOk": true, "$db": "admin"},
            rawdoc! {"ping": 1, "$db": "admin"},
            rawdoc! {"buildInfo": 1, "$db": "admin"},
            rawdoc! {"endSessions": [], "$db": "admin"},
            rawdoc! {"killCursors": "c", "cursors": [1_i64], "$db": "t"},
            rawdoc! {},
        ] {
            assert_eq!(Weight::of_command(&body), Weight::Light, "{body:?}");
        }
    }

    #[test]
    fn an_id_equality_is_a_point_lookup() {
        for body in [
            rawdoc! {"find": "c", "filter": {"_id": 7}, "limit": 1, "$db": "t"},
            rawdoc! {"find": "c", "filter": {"_id": "k"}, "singleBatch": true, "$db": "t"},
            rawdoc! {"find": "c", "filter": {"_id": 7_i64}, "projection": {"a": 1, "_id": 0}, "$db": "t"},
        ] {
            assert_eq!(Weight::of_command(&body), Weight::PointLookup, "{body:?}");
        }
    }

    #[test]
    fn anything_that_may_scan_is_heavy() {
        for body in [
            rawdoc! {"find": "c", "filter": {}, "$db": "t"},
            rawdoc! {"find": "c", "$db": "t"},
            rawdoc! {"find": "c", "filter": {"a": 7}, "$db": "t"},
            rawdoc! {"find": "c", "filter": {"_id": {"$gt": 7}}, "$db": "t"},
            rawdoc! {"find": "c", "filter": {"_id": 7, "a": 1}, "$db": "t"},
            rawdoc! {"find": "c", "filter": {"_id": [1, 2]}, "$db": "t"},
            rawdoc! {"find": "c", "filter": {"_id": null}, "$db": "t"},
            rawdoc! {"find": "c", "filter": {"_id": 7}, "hint": {"$natural": 1}, "$db": "t"},
            rawdoc! {"find": "c", "filter": {"_id": 7}, "sort": {"$natural": 1}, "$db": "t"},
            rawdoc! {"find": "c", "filter": {"_id": "k"}, "collation": {"locale": "fr"}, "$db": "t"},
            rawdoc! {"find": "c", "filter": {"_id": 7}, "projection": {"x": {"$range": [0, 9]}}, "$db": "t"},
            rawdoc! {"find": "system.profile", "filter": {"_id": 7}, "$db": "t"},
            rawdoc! {"aggregate": "c", "pipeline": [], "cursor": {}, "$db": "t"},
            rawdoc! {"insert": "c", "documents": [{}], "$db": "t"},
            rawdoc! {"getMore": 1_i64, "collection": "c", "$db": "t"},
            rawdoc! {"createIndexes": "c", "indexes": [], "$db": "t"},
            rawdoc! {"count": "c", "$db": "t"},
            rawdoc! {"explain": {"find": "c", "filter": {"_id": 1}}, "$db": "t"},
            rawdoc! {"someFutureCommand": 1, "$db": "t"},
        ] {
            assert_eq!(Weight::of_command(&body), Weight::Heavy, "{body:?}");
        }
    }
}
