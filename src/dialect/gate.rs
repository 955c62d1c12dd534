//! The write gate: the one place every command the dialect sends passes
//! through, checked against the session's [`WritePolicy`] *after*
//! evaluation, on the command document about to go on the wire. It reads
//! the namespaces the command really names (its `$db`, `$out`/`$merge`
//! targets wherever they sit, `renameCollection` source and target,
//! `applyOps`/`bulkWrite` namespaces …), so no spelling in the source (a
//! target held in a variable, an object built in a loop) can reach a
//! database the policy does not admit.
//!
//! Commands are classified by name: a fixed list is known to only read;
//! every other command (including ones this module has never heard of)
//! counts as a write to its database, so the gate fails closed.

use bson::{Bson, Document};

use crate::locale::Message;

/// Which databases a session may touch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WritePolicy {
    /// Anything: the shell on the embedded engine, or `--allow-writes`.
    #[default]
    Unrestricted,
    /// Writes only to databases whose names start with the prefix (reads
    /// anywhere): `schemalab shell --uri` without `--allow-writes`.
    Prefix(String),
    /// Lesson and exercise content: reads and writes in exactly this one
    /// database (plus server-wide status reads such as `show dbs`).
    Only(String),
}

/// Commands that never write. Anything else is treated as a write.
const READS: &[&str] = &[
    "find",
    "aggregate",
    "count",
    "distinct",
    "explain",
    "getMore",
    "killCursors",
    "listCollections",
    "listIndexes",
    "listDatabases",
    "dbStats",
    "collStats",
    "dataSize",
    "validate",
    "hello",
    "isMaster",
    "ismaster",
    "ping",
    "buildInfo",
    "buildinfo",
    "serverStatus",
    "hostInfo",
    "getParameter",
    "connectionStatus",
    "whatsmyuri",
    "getCmdLineOpts",
    "listCommands",
    "getLog",
    "currentOp",
    "top",
    "lockInfo",
    "features",
];

/// Reads that describe the server, not a database: allowed from lesson
/// content whatever database they are sent to.
const SERVER_READS: &[&str] = &[
    "listDatabases",
    "hello",
    "isMaster",
    "ismaster",
    "ping",
    "buildInfo",
    "buildinfo",
    "serverStatus",
    "hostInfo",
    "getParameter",
    "connectionStatus",
    "whatsmyuri",
    "listCommands",
];

impl WritePolicy {
    /// Check `cmd`, about to be sent to database `db`. The error says
    /// which database it would have reached and why that is refused.
    pub fn check(&self, db: &str, cmd: &Document) -> Result<(), Message> {
        let name = cmd.keys().next().map_or("", String::as_str);
        match self {
            WritePolicy::Unrestricted => Ok(()),
            WritePolicy::Prefix(prefix) => {
                for target in write_targets(db, cmd) {
                    if !target.starts_with(prefix.as_str()) {
                        return Err(Message::new(
                            "refusing to write to database '{target}' ({name}): this shell writes only databases whose names start with '{prefix}' (start it with --allow-writes to write anywhere)",
                        )
                        .arg("target", &target)
                        .arg("name", name)
                        .arg("prefix", prefix));
                    }
                }
                Ok(())
            }
            WritePolicy::Only(only) => {
                for target in write_targets(db, cmd) {
                    if target != *only {
                        return Err(Message::new(
                            "refusing to write to database '{target}' ({name}): lesson content writes only its variant's database {only}",
                        )
                        .arg("target", &target)
                        .arg("name", name)
                        .arg("only", only));
                    }
                }
                if db != only && !SERVER_READS.contains(&name) {
                    return Err(Message::new(
                        "refusing to read database '{db}' ({name}): lesson content reads only its variant's database {only}",
                    )
                    .arg("db", db)
                    .arg("name", name)
                    .arg("only", only));
                }
                Ok(())
            }
        }
    }
}

/// The databases `cmd` (sent to `db`) would write, as named in the command
/// itself. Empty for a pure read.
pub fn write_targets(db: &str, cmd: &Document) -> Vec<String> {
    let name = cmd.keys().next().map_or("", String::as_str);
    let mut out = Vec::new();
    // `$out`/`$merge` anywhere in the command (a pipeline, an explained
    // command, a view definition): each names the database it writes.
    output_stage_targets(db, cmd, &mut out);
    match name {
        "explain" => {
            if let Ok(inner) = cmd.get_document("explain") {
                out.extend(write_targets(db, inner));
            }
        }
        _ if READS.contains(&name) => {}
        "renameCollection" => {
            for key in ["renameCollection", "to"] {
                out.push(namespace_db(cmd.get(key)));
            }
        }
        "applyOps" => {
            out.push(db.to_string());
            if let Ok(ops) = cmd.get_array("applyOps") {
                for op in ops {
                    let ns = op.as_document().and_then(|o| o.get("ns"));
                    out.push(namespace_db(ns));
                }
            }
        }
        "bulkWrite" => {
            out.push(db.to_string());
            if let Ok(infos) = cmd.get_array("nsInfo") {
                for info in infos {
                    let ns = info.as_document().and_then(|o| o.get("ns"));
                    out.push(namespace_db(ns));
                }
            }
        }
        "mapReduce" => {
            out.push(db.to_string());
            if let Ok(o) = cmd.get_document("out")
                && let Some(d) = o.get("db")
            {
                out.push(string_or_unknown(Some(d)));
            }
        }
        _ => out.push(db.to_string()),
    }
    out
}

/// The database part of a `db.collection` namespace; a value that is not
/// a string names no database we could admit.
fn namespace_db(ns: Option<&Bson>) -> String {
    match ns {
        Some(Bson::String(s)) => s.split_once('.').map_or(s.as_str(), |(d, _)| d).to_string(),
        _ => "<not a namespace>".to_string(),
    }
}

fn string_or_unknown(v: Option<&Bson>) -> String {
    match v {
        Some(Bson::String(s)) => s.clone(),
        _ => "<not a database name>".to_string(),
    }
}

/// Every `$out`/`$merge` in `doc`, however deep, walked without recursion.
fn output_stage_targets(db: &str, doc: &Document, out: &mut Vec<String>) {
    let mut docs: Vec<&Document> = vec![doc];
    let mut arrays: Vec<&Vec<Bson>> = Vec::new();
    loop {
        if let Some(d) = docs.pop() {
            for (k, v) in d {
                match k.as_str() {
                    "$out" => out.push(out_target(db, v)),
                    "$merge" => out.push(merge_target(db, v)),
                    _ => {}
                }
                match v {
                    Bson::Document(inner) => docs.push(inner),
                    Bson::Array(items) => arrays.push(items),
                    _ => {}
                }
            }
        } else if let Some(items) = arrays.pop() {
            for v in items {
                match v {
                    Bson::Document(inner) => docs.push(inner),
                    Bson::Array(inner) => arrays.push(inner),
                    _ => {}
                }
            }
        } else {
            return;
        }
    }
}

/// `$out: 'coll'` writes `db`; `$out: {db, coll}` writes `db` there.
fn out_target(db: &str, spec: &Bson) -> String {
    match spec {
        Bson::String(_) => db.to_string(),
        Bson::Document(d) => match d.get("db") {
            None => db.to_string(),
            some => string_or_unknown(some),
        },
        _ => "<not a $out target>".to_string(),
    }
}

/// `$merge: 'coll'` or `{into: 'coll'}` writes `db`; `{into: {db, coll}}`
/// writes `db` there.
fn merge_target(db: &str, spec: &Bson) -> String {
    match spec {
        Bson::String(_) => db.to_string(),
        Bson::Document(d) => match d.get("into") {
            Some(Bson::String(_)) => db.to_string(),
            Some(Bson::Document(into)) => match into.get("db") {
                None => db.to_string(),
                some => string_or_unknown(some),
            },
            _ => "<not a $merge target>".to_string(),
        },
        _ => "<not a $merge target>".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn prefix() -> WritePolicy {
        WritePolicy::Prefix("schemalab_".into())
    }

    #[test]
    fn reads_pass_writes_are_checked() {
        let p = prefix();
        assert!(p.check("victim", &doc! { "find": "x" }).is_ok());
        assert!(p.check("victim", &doc! { "insert": "x" }).is_err());
        assert!(p.check("schemalab_a", &doc! { "insert": "x" }).is_ok());
        // Unknown commands count as writes.
        assert!(p.check("victim", &doc! { "frobnicate": 1 }).is_err());
        assert!(p.check("victim", &doc! { "dropDatabase": 1 }).is_err());
    }

    #[test]
    fn output_stages_name_their_database() {
        let p = prefix();
        let merge = doc! { "aggregate": "s", "pipeline": [
            { "$match": {} },
            { "$merge": { "into": { "db": "victim", "coll": "x" } } },
        ], "cursor": {} };
        let e = p.check("schemalab_a", &merge).unwrap_err();
        assert!(e.to_string().contains("'victim'"), "{e}");
        let out =
            doc! { "aggregate": "s", "pipeline": [{ "$out": { "db": "victim", "coll": "x" } }] };
        assert!(p.check("schemalab_a", &out).is_err());
        let local = doc! { "aggregate": "s", "pipeline": [{ "$out": "x" }] };
        assert!(p.check("schemalab_a", &local).is_ok());
        assert!(p.check("victim", &local).is_err());
        // Buried in an explain or a nested pipeline, still found.
        let explained = doc! { "explain": out.clone(), "verbosity": "queryPlanner" };
        assert!(p.check("schemalab_a", &explained).is_err());
        let nested = doc! { "aggregate": "s", "pipeline": [{ "$facet": { "f": [{ "$merge": { "into": { "db": "victim", "coll": "y" } } }] } }] };
        assert!(p.check("schemalab_a", &nested).is_err());
        // A database that is not a string is never admitted.
        let odd = doc! { "aggregate": "s", "pipeline": [{ "$out": { "db": 1, "coll": "x" } }] };
        assert!(p.check("schemalab_a", &odd).is_err());
    }

    #[test]
    fn rename_checks_both_namespaces() {
        let p = prefix();
        let into_victim = doc! { "renameCollection": "schemalab_a.x", "to": "victim.x" };
        assert!(p.check("admin", &into_victim).is_err());
        let from_victim = doc! { "renameCollection": "victim.x", "to": "schemalab_a.x" };
        assert!(p.check("admin", &from_victim).is_err());
        let inside = doc! { "renameCollection": "schemalab_a.x", "to": "schemalab_b.y" };
        assert!(p.check("admin", &inside).is_ok());
    }

    #[test]
    fn lesson_content_stays_in_one_database() {
        let p = WritePolicy::Only("schemalab_l_v".into());
        assert!(p.check("schemalab_l_v", &doc! { "insert": "x" }).is_ok());
        assert!(p.check("schemalab_l_w", &doc! { "insert": "x" }).is_err());
        assert!(p.check("schemalab_l_w", &doc! { "find": "x" }).is_err());
        assert!(p.check("admin", &doc! { "listDatabases": 1 }).is_ok());
        assert!(
            WritePolicy::Unrestricted
                .check("victim", &doc! { "drop": "x" })
                .is_ok()
        );
    }
}
