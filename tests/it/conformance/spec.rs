//! Loading the unified test files and deciding which tests a standalone
//! MongoDB 7.0 would run (`runOnRequirements`), and which of those this runner
//! must skip because they need a feature it does not provide.

use std::path::Path;

use bson::{Bson, Document};

/// The server version the embedded engine stands in for.
const SERVER_VERSION: (u32, u32, u32) = (7, 0, 0);

/// One parsed test file.
pub struct SpecFile {
    /// File name, e.g. `insertMany.json`.
    pub name: String,
    pub doc: Document,
}

/// Reads every `*.json` file of `dir`, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<SpecFile>, String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    let mut files = Vec::new();
    for path in names {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        // Extended JSON v2 (relaxed): small integers become Int32, `$oid` an
        // ObjectId, and key order is kept (bson enables serde_json's
        // `preserve_order`), which sort specifications depend on.
        let doc = match Bson::try_from(json) {
            Ok(Bson::Document(d)) => d,
            Ok(_) => return Err(format!("{}: not a document", path.display())),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        files.push(SpecFile { name, doc });
    }
    Ok(files)
}

fn parse_version(s: &str) -> (u32, u32, u32) {
    let mut parts = s.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// Why one requirement document is not met by a 7.0 standalone, if it is not.
fn unmet(req: &Document) -> Option<String> {
    if let Ok(min) = req.get_str("minServerVersion")
        && parse_version(min) > SERVER_VERSION
    {
        return Some(format!("requires server >= {min}"));
    }
    if let Ok(max) = req.get_str("maxServerVersion")
        && parse_version(max) < SERVER_VERSION
    {
        return Some(format!("requires server <= {max}"));
    }
    if let Ok(tops) = req.get_array("topologies")
        && !tops.iter().any(|t| t.as_str() == Some("single"))
    {
        let names: Vec<_> = tops.iter().filter_map(Bson::as_str).collect();
        return Some(format!("requires topology {}", names.join("/")));
    }
    if req.get_str("serverless") == Ok("require") || req.get_str("serverless") == Ok("required") {
        return Some("requires serverless".into());
    }
    if req.get_bool("auth") == Ok(true) {
        return Some("requires auth".into());
    }
    if req.contains_key("csfle") {
        return Some("requires csfle".into());
    }
    if req.contains_key("serverParameters") {
        return Some("requires serverParameters".into());
    }
    None
}

/// `Err(reason)` when no requirement of `reqs` is met (an absent or empty
/// list is always met).
pub fn eligible(reqs: Option<&Bson>) -> Result<(), String> {
    let Some(Bson::Array(list)) = reqs else {
        return Ok(());
    };
    let mut reasons = Vec::new();
    for req in list {
        let Bson::Document(req) = req else { continue };
        match unmet(req) {
            None => return Ok(()),
            Some(r) => reasons.push(r),
        }
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(reasons.join(" or "))
    }
}

/// Operation names the runner executes.
const SUPPORTED_OPS: &[&str] = &[
    "insertOne",
    "insertMany",
    "find",
    "findOne",
    "aggregate",
    "countDocuments",
    "estimatedDocumentCount",
    "count",
    "distinct",
    "updateOne",
    "updateMany",
    "replaceOne",
    "deleteOne",
    "deleteMany",
    "findOneAndUpdate",
    "findOneAndReplace",
    "findOneAndDelete",
    "bulkWrite",
    "createIndex",
    "dropIndex",
    "listIndexes",
    "runCommand",
    "createCollection",
    "dropCollection",
    "modifyCollection",
];

/// Why the runner cannot run `test` (given its file), if it cannot.
pub fn unsupported(file: &Document, test: &Document) -> Option<String> {
    if let Ok(ents) = file.get_array("createEntities") {
        for e in ents.iter().filter_map(Bson::as_document) {
            for kind in e.keys() {
                if !matches!(kind.as_str(), "client" | "database" | "collection") {
                    return Some(format!("entity type {kind} unsupported"));
                }
            }
            if let Ok(c) = e.get_document("client")
                && (c.contains_key("observeLogMessages") || c.contains_key("storeEventsAsEntities"))
            {
                return Some("client log/event entities unsupported".into());
            }
        }
    }
    let ops = test.get_array("operations").ok()?;
    for op in ops.iter().filter_map(Bson::as_document) {
        let name = op.get_str("name").unwrap_or("");
        let object = op.get_str("object").unwrap_or("");
        if object == "testRunner" {
            return Some(format!("needs testRunner.{name} (failPoint etc.)"));
        }
        if name == "clientBulkWrite" {
            return Some("client.bulkWrite needs wire version 25 (8.0)".into());
        }
        if !SUPPORTED_OPS.contains(&name) {
            return Some(format!("operation {name} unsupported by the runner"));
        }
        if let Ok(args) = op.get_document("arguments") {
            if args.contains_key("session") {
                return Some("sessions/transactions unsupported".into());
            }
            if args.contains_key("timeoutMS") {
                return Some("timeoutMS (CSOT) unsupported".into());
            }
        }
        if op.contains_key("saveResultAsEntity") {
            return Some("saveResultAsEntity unsupported".into());
        }
        if let Ok(err) = op.get_document("expectError") {
            if err.contains_key("writeErrors") || err.contains_key("writeConcernErrors") {
                return Some("client bulkWrite error assertions unsupported".into());
            }
            if err.contains_key("isTimeoutError") {
                return Some("timeout errors unsupported".into());
            }
        }
    }
    if let Ok(evs) = test.get_array("expectEvents") {
        for ev in evs.iter().filter_map(Bson::as_document) {
            if let Ok(t) = ev.get_str("eventType")
                && t != "command"
            {
                return Some(format!("{t} events unsupported"));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn requirements() {
        assert!(eligible(None).is_ok());
        assert!(
            eligible(Some(&Bson::Array(vec![
                doc! {"minServerVersion": "4.2"}.into()
            ])))
            .is_ok()
        );
        let new = Bson::Array(vec![doc! {"minServerVersion": "8.0"}.into()]);
        assert_eq!(eligible(Some(&new)), Err("requires server >= 8.0".into()));
        let old = Bson::Array(vec![doc! {"maxServerVersion": "4.2.99"}.into()]);
        assert!(eligible(Some(&old)).is_err());
        let seven = Bson::Array(vec![doc! {"maxServerVersion": "7.0"}.into()]);
        assert!(eligible(Some(&seven)).is_ok());
        let rs = Bson::Array(vec![
            doc! {"topologies": ["replicaset"]}.into(),
            doc! {"topologies": ["single", "sharded"]}.into(),
        ]);
        assert!(eligible(Some(&rs)).is_ok());
        let rs_only = Bson::Array(vec![doc! {"topologies": ["replicaset"]}.into()]);
        assert!(eligible(Some(&rs_only)).is_err());
    }
}
