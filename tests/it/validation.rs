//! Document validation through the wire, where a driver's error type does
//! not carry what mongod sends: the `errInfo` of a command error
//! (`findAndModify`, `$out`), the warning `validationAction: "warn"` logs
//! (`getLog`), and the options `listCollections` leaves out. The
//! per-command shapes are fixtures in `tests/commands/validation.json`.

use std::time::Duration;

use bson::{Bson, Document, doc};

use crate::support::raw::{Shared, call};

static SERVER: Shared = Shared::new();

fn run(db: &str, mut cmd: Document) -> Document {
    let mut stream = SERVER.connect(Duration::from_secs(30));
    cmd.insert("$db", db);
    call(&mut stream, cmd)
}

#[test]
fn find_and_modify_failure_carries_err_info() {
    let db = "valid_fam";
    run(
        db,
        doc! {"create": "c", "validator": {"$jsonSchema": {"properties": {"qty": {"bsonType": "int", "minimum": 0}}}}},
    );
    run(
        db,
        doc! {"insert": "c", "documents": [{"_id": 1, "qty": 3}]},
    );
    let reply = run(
        db,
        doc! {"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"qty": -5}}},
    );
    assert_eq!(reply.get_f64("ok").unwrap(), 0.0, "{reply}");
    assert_eq!(reply.get_i32("code").unwrap(), 121);
    assert_eq!(
        reply.get_str("codeName").unwrap(),
        "DocumentValidationFailure"
    );
    assert_eq!(
        reply.get_document("errInfo").unwrap(),
        &doc! {
            "failingDocumentId": 1,
            "details": {"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [
                {"operatorName": "properties", "propertiesNotSatisfied": [{
                    "propertyName": "qty",
                    "details": [{"operatorName": "minimum", "specifiedAs": {"minimum": 0},
                                 "reason": "comparison failed", "consideredValue": -2}],
                }]},
            ]},
        }
    );
    // Nothing was written.
    let found = run(db, doc! {"find": "c"});
    let batch = found
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    assert_eq!(batch, &vec![Bson::Document(doc! {"_id": 1, "qty": 3})]);
}

#[test]
fn out_failure_names_the_failing_document() {
    let db = "valid_out";
    run(
        db,
        doc! {"insert": "src", "documents": [{"_id": 1, "a": 1}, {"_id": 2}]},
    );
    run(
        db,
        doc! {"create": "t", "validator": {"a": {"$exists": true}}},
    );
    run(db, doc! {"insert": "t", "documents": [{"_id": 9, "a": 9}]});
    let reply = run(
        db,
        doc! {"aggregate": "src", "pipeline": [{"$out": "t"}], "cursor": {}},
    );
    assert_eq!(reply.get_i32("code").unwrap(), 121, "{reply}");
    let info = reply.get_document("errInfo").unwrap();
    assert_eq!(info.get_i32("failingDocumentId").unwrap(), 2);
    // All or nothing: the target keeps its old contents.
    let count = run(db, doc! {"count": "t"});
    assert_eq!(count.get_i32("n").unwrap(), 1);
}

#[test]
fn warn_writes_and_logs_the_would_be_error() {
    let db = "valid_warn";
    run(
        db,
        doc! {"create": "c", "validator": {"a": {"$exists": true}}, "validationAction": "warn"},
    );
    let before = run("admin", doc! {"getLog": "global"});
    let written_before = before.get_i64("totalLinesWritten").unwrap();
    let reply = run(db, doc! {"insert": "c", "documents": [{"_id": 42, "b": 1}]});
    assert_eq!(reply.get_i32("n").unwrap(), 1, "{reply}");
    assert!(reply.get("writeErrors").is_none(), "{reply}");
    let after = run("admin", doc! {"getLog": "global"});
    assert!(after.get_i64("totalLinesWritten").unwrap() > written_before);
    let lines = after.get_array("log").unwrap();
    let line = lines
        .iter()
        .filter_map(Bson::as_str)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|l| l["attr"]["namespace"] == "valid_warn.c")
        .expect("a warning naming the namespace");
    assert_eq!(line["id"], 20294);
    assert_eq!(line["s"], "W");
    assert_eq!(line["msg"], "Document would fail validation");
    assert_eq!(line["attr"]["document"]["_id"], 42);
    assert_eq!(
        line["attr"]["errInfo"]["details"]["operatorName"],
        "$exists"
    );
    // A valid document logs nothing.
    let total = after.get_i64("totalLinesWritten").unwrap();
    run(db, doc! {"insert": "c", "documents": [{"_id": 43, "a": 1}]});
    let again = run("admin", doc! {"getLog": "global"});
    assert_eq!(again.get_i64("totalLinesWritten").unwrap(), total);
}

#[test]
fn list_collections_shows_only_the_options_given() {
    let db = "valid_list";
    run(
        db,
        doc! {"create": "c", "validator": {"a": {"$exists": true}}},
    );
    let reply = run(db, doc! {"listCollections": 1, "filter": {"name": "c"}});
    let entry = reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(
        entry.get_document("options").unwrap(),
        &doc! {"validator": {"a": {"$exists": true}}}
    );
    run(db, doc! {"collMod": "c", "validationLevel": "moderate"});
    let reply = run(db, doc! {"listCollections": 1, "filter": {"name": "c"}});
    let entry = reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(
        entry.get_document("options").unwrap(),
        &doc! {"validator": {"a": {"$exists": true}}, "validationLevel": "moderate"}
    );
}

#[test]
fn bypass_applies_to_its_own_command_only() {
    let db = "valid_bypass";
    run(
        db,
        doc! {"create": "c", "validator": {"a": {"$exists": true}}},
    );
    let r = run(
        db,
        doc! {"insert": "c", "documents": [{"_id": 1}], "bypassDocumentValidation": true},
    );
    assert_eq!(r.get_i32("n").unwrap(), 1);
    // The next command on the same server thread validates again.
    let r = run(db, doc! {"insert": "c", "documents": [{"_id": 2}]});
    assert_eq!(r.get_i32("n").unwrap(), 0);
    assert_eq!(
        r.get_array("writeErrors").unwrap()[0]
            .as_document()
            .unwrap()
            .get_i32("code")
            .unwrap(),
        121
    );
}
