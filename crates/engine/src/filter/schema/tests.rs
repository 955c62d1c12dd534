use bson::{Bson, Document, doc};

use super::{Schema, code_of};

fn schema(spec: Document) -> Schema {
    Schema::parse(&spec).unwrap()
}

fn ok(spec: Document, d: Document) -> bool {
    schema(spec).matches_document(&d)
}

/// The rules a document breaks, as `schemaRulesNotSatisfied`.
fn rules(spec: Document, d: Document) -> Vec<Bson> {
    let details = schema(spec).details(&d);
    assert_eq!(details.get_str("operatorName").unwrap(), "$jsonSchema");
    details
        .get_array("schemaRulesNotSatisfied")
        .unwrap()
        .clone()
}

#[test]
fn bson_type_takes_a_list_and_checks_nested_values_only() {
    let s = doc! {"properties": {"a": {"bsonType": ["int", "long"]}}};
    assert!(ok(s.clone(), doc! {"a": 1}));
    assert!(ok(s.clone(), doc! {"a": 1_i64}));
    assert!(ok(s.clone(), doc! {}));
    assert!(!ok(s.clone(), doc! {"a": 1.5}));
    let r = rules(s, doc! {"_id": 1, "a": "x"});
    assert_eq!(
        r,
        vec![Bson::Document(doc! {
            "operatorName": "properties",
            "propertiesNotSatisfied": [{
                "propertyName": "a",
                "details": [{
                    "operatorName": "bsonType",
                    "specifiedAs": {"bsonType": ["int", "long"]},
                    "reason": "type did not match",
                    "consideredValue": "x",
                    "consideredType": "string",
                }],
            }],
        })]
    );
}

#[test]
fn top_level_type_without_object_rejects_everything() {
    let s = doc! {"bsonType": "string"};
    assert!(!ok(s.clone(), doc! {"a": 1}));
    let d = schema(s.clone()).details(&doc! {"a": 1});
    assert_eq!(
        d,
        doc! {
            "operatorName": "$jsonSchema",
            "specifiedAs": {"$jsonSchema": s},
            "reason": "expression always evaluates to false",
        }
    );
    assert!(ok(doc! {"bsonType": ["object", "string"]}, doc! {"a": 1}));
}

#[test]
fn required_reports_missing_properties_sorted() {
    let s = doc! {"required": ["z", "a", "m"]};
    assert!(ok(s.clone(), doc! {"a": 1, "m": 1, "z": 1}));
    let r = rules(s, doc! {"m": 1});
    assert_eq!(
        r,
        vec![Bson::Document(doc! {
            "operatorName": "required",
            "specifiedAs": {"required": ["z", "a", "m"]},
            "missingProperties": ["a", "z"],
        })]
    );
}

#[test]
fn rules_come_in_mongod_order_with_annotations() {
    let s = doc! {
        "title": "t",
        "required": ["name"],
        "properties": {"age": {"bsonType": "int", "minimum": 0, "description": "an age"}},
        "minProperties": 3,
    };
    let d = schema(s).details(&doc! {"_id": 1, "age": -4});
    assert_eq!(
        d,
        doc! {
            "operatorName": "$jsonSchema",
            "title": "t",
            "schemaRulesNotSatisfied": [
                {"operatorName": "properties", "propertiesNotSatisfied": [{
                    "propertyName": "age",
                    "description": "an age",
                    "details": [{
                        "operatorName": "minimum",
                        "specifiedAs": {"minimum": 0},
                        "reason": "comparison failed",
                        "consideredValue": -4,
                    }],
                }]},
                {"operatorName": "required", "specifiedAs": {"required": ["name"]}, "missingProperties": ["name"]},
                {"operatorName": "minProperties", "specifiedAs": {"minProperties": 3},
                 "reason": "specified number of properties was not satisfied", "numberOfProperties": 2},
            ],
        }
    );
}

#[test]
fn exclusive_bounds_and_multiple_of() {
    let s = doc! {"properties": {"n": {"minimum": 0, "exclusiveMinimum": true, "maximum": 10, "multipleOf": 2}}};
    assert!(!ok(s.clone(), doc! {"n": 0}));
    assert!(ok(s.clone(), doc! {"n": 2}));
    assert!(ok(s.clone(), doc! {"n": 10}));
    assert!(!ok(s.clone(), doc! {"n": 12}));
    assert!(!ok(s.clone(), doc! {"n": 3}));
    assert!(ok(s.clone(), doc! {"n": 4.0}));
    assert!(ok(s.clone(), doc! {"n": "not a number"}));
    let r = rules(s, doc! {"n": 0});
    let details = r[0]
        .as_document()
        .unwrap()
        .get_array("propertiesNotSatisfied")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .get_array("details")
        .unwrap()
        .clone();
    assert_eq!(
        details,
        vec![Bson::Document(doc! {
            "operatorName": "minimum",
            "specifiedAs": {"minimum": 0, "exclusiveMinimum": true},
            "reason": "comparison failed",
            "consideredValue": 0,
        })]
    );
}

#[test]
fn strings_lengths_and_patterns() {
    let s = doc! {"properties": {"s": {"minLength": 2, "maxLength": 3, "pattern": "^a"}}};
    assert!(ok(s.clone(), doc! {"s": "ab"}));
    assert!(!ok(s.clone(), doc! {"s": "a"}));
    assert!(!ok(s.clone(), doc! {"s": "abcd"}));
    assert!(!ok(s.clone(), doc! {"s": "ba"}));
    // Code points, not bytes.
    assert!(ok(s.clone(), doc! {"s": "aé"}));
    assert!(ok(s, doc! {"s": 5}));
}

#[test]
fn pattern_and_additional_properties() {
    let s = doc! {
        "properties": {"_id": {}, "name": {}},
        "patternProperties": {"^x_": {"bsonType": "int"}},
        "additionalProperties": false,
    };
    assert!(ok(s.clone(), doc! {"_id": 1, "name": "n", "x_a": 1}));
    assert!(!ok(s.clone(), doc! {"_id": 1, "x_a": "no"}));
    assert!(!ok(s.clone(), doc! {"_id": 1, "other": 1}));
    let r = rules(s, doc! {"_id": 1, "other": 1, "x_a": "no"});
    assert_eq!(
        r,
        vec![
            Bson::Document(doc! {
                "operatorName": "additionalProperties",
                "specifiedAs": {"additionalProperties": false},
                "additionalProperties": ["other"],
            }),
            Bson::Document(doc! {
                "operatorName": "patternProperties",
                "details": [{
                    "propertyName": "x_a",
                    "regexMatched": "^x_",
                    "details": [{
                        "operatorName": "bsonType",
                        "specifiedAs": {"bsonType": "int"},
                        "reason": "type did not match",
                        "consideredValue": "no",
                        "consideredType": "string",
                    }],
                }],
            }),
        ]
    );
}

#[test]
fn additional_properties_as_a_schema() {
    let s = doc! {"properties": {"_id": {}}, "additionalProperties": {"bsonType": "string"}};
    assert!(ok(s.clone(), doc! {"_id": 1, "a": "x", "b": "y"}));
    assert!(!ok(s.clone(), doc! {"_id": 1, "a": "x", "b": 2}));
    let r = rules(s, doc! {"_id": 1, "a": "x", "b": 2});
    assert_eq!(
        r[0].as_document()
            .unwrap()
            .get_str("failingProperty")
            .unwrap(),
        "b"
    );
    assert_eq!(
        r[0].as_document().unwrap().get_str("reason").unwrap(),
        "at least one additional property did not match the subschema"
    );
}

#[test]
fn dependencies_of_both_kinds() {
    let s = doc! {"dependencies": {"card": ["billing"], "vip": {"required": ["level"]}}};
    assert!(ok(s.clone(), doc! {"a": 1}));
    assert!(ok(s.clone(), doc! {"card": 1, "billing": 1}));
    assert!(!ok(s.clone(), doc! {"card": 1}));
    assert!(!ok(s.clone(), doc! {"vip": true}));
    let r = rules(s, doc! {"card": 1, "vip": true});
    assert_eq!(
        r,
        vec![Bson::Document(doc! {
            "operatorName": "dependencies",
            "failingDependencies": [
                {"conditionalProperty": "card", "missingProperties": ["billing"]},
                {"conditionalProperty": "vip", "details": [{
                    "operatorName": "required",
                    "specifiedAs": {"required": ["level"]},
                    "missingProperties": ["level"],
                }]},
            ],
        })]
    );
}

#[test]
fn items_as_a_list_with_additional_items() {
    let s = doc! {"properties": {"t": {
        "items": [{"bsonType": "string"}, {"bsonType": "int"}],
        "additionalItems": false,
    }}};
    assert!(ok(s.clone(), doc! {"t": ["a", 1]}));
    assert!(ok(s.clone(), doc! {"t": ["a"]}));
    assert!(!ok(s.clone(), doc! {"t": [1, 1]}));
    assert!(!ok(s.clone(), doc! {"t": ["a", 1, 2]}));
    let r = rules(s.clone(), doc! {"t": ["a", 1, 2]});
    let details = r[0]
        .as_document()
        .unwrap()
        .get_array("propertiesNotSatisfied")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .get_array("details")
        .unwrap()
        .clone();
    assert_eq!(
        details,
        vec![Bson::Document(doc! {
            "operatorName": "additionalItems",
            "specifiedAs": {"additionalItems": false},
            "reason": "found additional items",
            "additionalItems": [2],
        })]
    );
    let r = rules(s, doc! {"t": [1, 1]});
    let details = r[0]
        .as_document()
        .unwrap()
        .get_array("propertiesNotSatisfied")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .get_array("details")
        .unwrap()
        .clone();
    assert_eq!(
        details[0]
            .as_document()
            .unwrap()
            .get_str("operatorName")
            .unwrap(),
        "items"
    );
    assert_eq!(
        details[0]
            .as_document()
            .unwrap()
            .get_array("details")
            .unwrap()[0]
            .as_document()
            .unwrap()
            .get_i32("itemIndex")
            .unwrap(),
        0
    );
}

#[test]
fn items_as_one_schema_unique_items_and_counts() {
    let s = doc! {"properties": {"t": {"items": {"bsonType": "int"}, "uniqueItems": true, "minItems": 1, "maxItems": 3}}};
    assert!(ok(s.clone(), doc! {"t": [1, 2]}));
    assert!(!ok(s.clone(), doc! {"t": []}));
    assert!(!ok(s.clone(), doc! {"t": [1, 2, 3, 4]}));
    assert!(!ok(s.clone(), doc! {"t": [1, 1.0]}));
    assert!(!ok(s.clone(), doc! {"t": [1, "x"]}));
    let r = rules(s, doc! {"t": [3, 2, 3]});
    let details = r[0]
        .as_document()
        .unwrap()
        .get_array("propertiesNotSatisfied")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .get_array("details")
        .unwrap()
        .clone();
    assert_eq!(
        details,
        vec![Bson::Document(doc! {
            "operatorName": "uniqueItems",
            "specifiedAs": {"uniqueItems": true},
            "reason": "found a duplicate item",
            "consideredValue": [3, 2, 3],
            "duplicatedValue": 3,
        })]
    );
}

#[test]
fn logical_keywords() {
    let s = doc! {"properties": {"v": {"oneOf": [{"bsonType": "int"}, {"minimum": 5}]}}};
    assert!(ok(s.clone(), doc! {"v": 1}));
    // 7 is an int and at least 5: both match.
    assert!(!ok(s.clone(), doc! {"v": 7}));
    assert!(ok(s.clone(), doc! {"v": 7.5}));
    let r = rules(s, doc! {"v": 7});
    let details = r[0]
        .as_document()
        .unwrap()
        .get_array("propertiesNotSatisfied")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .get_array("details")
        .unwrap()
        .clone();
    assert_eq!(
        details,
        vec![Bson::Document(doc! {
            "operatorName": "oneOf",
            "reason": "more than one subschema matched",
            "matchingSchemaIndexes": [0, 1],
        })]
    );
    let s = doc! {"anyOf": [{"required": ["a"]}, {"required": ["b"]}], "not": {"required": ["c"]}};
    assert!(ok(s.clone(), doc! {"a": 1}));
    assert!(!ok(s.clone(), doc! {"x": 1}));
    assert!(!ok(s.clone(), doc! {"a": 1, "c": 1}));
    let r = rules(s, doc! {"c": 1});
    assert_eq!(r.len(), 2);
    assert_eq!(
        r[1],
        Bson::Document(doc! {"operatorName": "not", "reason": "child expression matched"})
    );
    let any = r[0].as_document().unwrap();
    assert_eq!(any.get_str("operatorName").unwrap(), "anyOf");
    assert_eq!(any.get_array("schemasNotSatisfied").unwrap().len(), 2);
}

#[test]
fn enum_compares_numbers_by_value() {
    let s = doc! {"properties": {"e": {"enum": [1, "a", null]}}};
    assert!(ok(s.clone(), doc! {"e": 1.0}));
    assert!(ok(s.clone(), doc! {"e": Bson::Null}));
    assert!(!ok(s.clone(), doc! {"e": "b"}));
}

#[test]
fn refused_keywords_and_values_carry_mongod_codes() {
    for k in ["$ref", "$schema", "default", "definitions", "format", "id"] {
        assert_eq!(code_of(doc! {k: "x"}), 9, "{k}");
    }
    assert_eq!(code_of(doc! {"foo": 1}), 9);
    assert_eq!(code_of(doc! {"bsonType": "integer"}), 9);
    assert_eq!(code_of(doc! {"type": "integer"}), 9);
    assert_eq!(code_of(doc! {"type": "string", "bsonType": "string"}), 9);
    assert_eq!(code_of(doc! {"bsonType": "nope"}), 2);
    assert_eq!(code_of(doc! {"bsonType": 1}), 14);
    assert_eq!(code_of(doc! {"minimum": "1"}), 14);
    assert_eq!(code_of(doc! {"exclusiveMinimum": true}), 9);
    assert_eq!(code_of(doc! {"minimum": 1, "exclusiveMinimum": 1}), 14);
    assert_eq!(code_of(doc! {"multipleOf": 0}), 9);
    assert_eq!(code_of(doc! {"minLength": -1}), 9);
    assert_eq!(code_of(doc! {"required": []}), 9);
    assert_eq!(code_of(doc! {"required": ["a", "a"]}), 9);
    assert_eq!(code_of(doc! {"enum": []}), 9);
    assert_eq!(code_of(doc! {"enum": [1, 1.0]}), 9);
    assert_eq!(code_of(doc! {"allOf": []}), 2);
    assert_eq!(code_of(doc! {"anyOf": [1]}), 14);
    assert_eq!(code_of(doc! {"items": 1}), 14);
    assert_eq!(code_of(doc! {"additionalItems": 1}), 14);
    assert_eq!(code_of(doc! {"additionalProperties": 1}), 14);
    assert_eq!(code_of(doc! {"dependencies": {"a": []}}), 9);
    assert_eq!(code_of(doc! {"dependencies": {"a": 1}}), 14);
    assert_eq!(code_of(doc! {"uniqueItems": 1}), 14);
    assert_eq!(code_of(doc! {"title": 1}), 14);
    assert_eq!(code_of(doc! {"title": "t", "description": "d"}), 0);
}
