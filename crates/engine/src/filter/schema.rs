//! `$jsonSchema`: the draft-4 subset MongoDB supports, with mongod's
//! semantics and its detailed validation errors.
//!
//! Every keyword mongod accepts is here: `bsonType`/`type` (a name or a list
//! of names), `required`, `properties`, `patternProperties`,
//! `additionalProperties` (a boolean or a schema), `dependencies` (property
//! lists and schemas), `minProperties`/`maxProperties`, `items` (one schema
//! or a list), `additionalItems`, `uniqueItems`, `minItems`/`maxItems`,
//! `enum`, `minimum`/`maximum` with their exclusive forms, `multipleOf`,
//! `minLength`/`maxLength`, `pattern`, `allOf`/`anyOf`/`oneOf`/`not`, and the
//! annotations `title`/`description`. The draft-4 keywords mongod refuses
//! (`$ref`, `$schema`, `default`, `definitions`, `format`, `id`) are refused
//! with its 9 FailedToParse, and mistyped keyword values with its codes.
//!
//! As in mongod, a keyword only constrains values of the type it is about
//! (`minimum` says nothing about a string), and a schema applies its rules in
//! mongod's order (scalar, array, object, logical keywords, then the type),
//! which is also the order of `schemaRulesNotSatisfied` in the `errInfo` a
//! failed validation reports ([`Schema::details`]). At the top level the
//! scalar and array keywords have no effect (a stored document is an
//! object), and a `bsonType` without `object` rejects every document.

use std::cmp::Ordering;

use bson::{Bson, Document, doc};

use super::TypeSel;
use super::regex::Pattern;
use crate::error::{EngineError, Result};
use crate::value::{self, compare};

/// The draft-4 keywords mongod refuses by name.
const UNSUPPORTED: &[&str] = &["$ref", "$schema", "default", "definitions", "format", "id"];

/// Every keyword mongod knows.
const KNOWN: &[&str] = &[
    "additionalItems",
    "additionalProperties",
    "allOf",
    "anyOf",
    "bsonType",
    "dependencies",
    "description",
    "encrypt",
    "encryptMetadata",
    "enum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "not",
    "oneOf",
    "pattern",
    "patternProperties",
    "properties",
    "required",
    "title",
    "type",
    "uniqueItems",
];

/// `items` as one schema for every element or a schema per position.
#[derive(Debug, Clone)]
enum Items {
    One(Box<Schema>),
    List(Vec<Schema>),
}

/// `additionalItems` / `additionalProperties`: a boolean or a schema.
#[derive(Debug, Clone)]
enum Extra {
    Bool(bool),
    Schema(Box<Schema>),
}

/// One entry of `dependencies`.
#[derive(Debug, Clone)]
enum Dependency {
    Properties(Vec<String>),
    Schema(Box<Schema>),
}

/// A numeric bound: the value, whether it is exclusive, and its
/// `specifiedAs` as mongod reports it.
#[derive(Debug, Clone)]
struct Bound {
    value: Bson,
    exclusive: bool,
    spec: Document,
}

/// A count keyword (`minLength`, `maxItems`, …): as written and as read.
type Count = Option<(Bson, usize)>;

/// Whether a count breaks a bound (`above` for the `max…` keywords).
type Check = fn(usize, usize) -> bool;

fn above(n: usize, m: usize) -> bool {
    n > m
}

fn below(n: usize, m: usize) -> bool {
    n < m
}

/// A parsed schema.
#[derive(Debug, Clone, Default)]
pub(crate) struct Schema {
    /// The schema as written (for the always-false top-level error).
    spec: Document,
    /// `title` and `description`, as mongod appends them to errors.
    annotations: Document,
    /// `type` or `bsonType`: keyword, as written, the selectors.
    types: Option<(&'static str, Bson, Vec<TypeSel>)>,
    pattern: Option<(Bson, Pattern)>,
    max_length: Count,
    min_length: Count,
    multiple_of: Option<Bson>,
    maximum: Option<Bound>,
    minimum: Option<Bound>,
    min_items: Count,
    max_items: Count,
    unique_items: bool,
    items: Option<Items>,
    additional_items: Option<Extra>,
    properties: Vec<(String, Schema)>,
    pattern_properties: Vec<(String, Pattern, Schema)>,
    additional_properties: Option<Extra>,
    /// As written, and the names sorted (mongod's order of
    /// `missingProperties`).
    required: Option<(Bson, Vec<String>)>,
    min_properties: Count,
    max_properties: Count,
    /// The `dependencies` object's own annotations, and its entries.
    dependencies: Option<(Document, Vec<(String, Dependency)>)>,
    all_of: Vec<Schema>,
    any_of: Vec<Schema>,
    one_of: Vec<Schema>,
    not: Option<Box<Schema>>,
    enumeration: Option<(Bson, Vec<Bson>)>,
}

fn failed(msg: impl Into<String>) -> EngineError {
    EngineError::failed_to_parse(msg)
}

fn mistyped(msg: impl Into<String>) -> EngineError {
    EngineError::type_mismatch(msg)
}

/// A value as mongod prints a `BSONElement` in parse errors.
fn shown(key: &str, v: &Bson) -> String {
    match v {
        Bson::String(s) => format!("{key}: \"{s}\""),
        other => format!("{key}: {other}"),
    }
}

/// mongod's `parseIntegerElementToNonNegativeLong`.
fn count(v: &Bson, key: &str) -> Result<usize> {
    if !value::is_number(v) {
        return Err(failed(format!("Expected a number in: {}", shown(key, v))));
    }
    let f = value::as_f64(v).unwrap_or(f64::NAN);
    if f.fract() != 0.0 || f.is_nan() {
        return Err(failed(format!("Expected an integer: {}", shown(key, v))));
    }
    if f < 0.0 {
        return Err(failed(format!(
            "Expected a positive number in: {}",
            shown(key, v)
        )));
    }
    Ok(value::as_i64(v).map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX)))
}

fn sub_schema(v: &Bson, what: impl FnOnce() -> EngineError) -> Result<Schema> {
    match v {
        Bson::Document(d) => Schema::parse(d),
        _ => Err(what()),
    }
}

fn schema_list(v: &Bson, key: &str) -> Result<Vec<Schema>> {
    let Bson::Array(items) = v else {
        return Err(mistyped(format!(
            "$jsonSchema keyword '{key}' must be an array"
        )));
    };
    if items.is_empty() {
        return Err(EngineError::bad_value(format!(
            "$jsonSchema keyword '{key}' must be a non-empty array"
        )));
    }
    items
        .iter()
        .map(|i| {
            sub_schema(i, || {
                mistyped(format!(
                    "$jsonSchema keyword '{key}' must be an array of objects, but found an element of type {}",
                    value::type_alias(i)
                ))
            })
        })
        .collect()
}

fn type_set(key: &'static str, v: &Bson) -> Result<Vec<TypeSel>> {
    let names: Vec<&str> = match v {
        Bson::String(n) => vec![n.as_str()],
        Bson::Array(a) => {
            let mut names = Vec::with_capacity(a.len());
            for entry in a {
                let Bson::String(n) = entry else {
                    return Err(mistyped(format!(
                        "$jsonSchema keyword '{key}' array elements must be strings"
                    )));
                };
                if n == "integer" {
                    return Err(failed(
                        "$jsonSchema type 'integer' is not currently supported.",
                    ));
                }
                if names.contains(&n.as_str()) {
                    return Err(failed(format!(
                        "$jsonSchema keyword '{key}' has duplicate value: {n}"
                    )));
                }
                names.push(n.as_str());
            }
            names
        }
        _ => {
            return Err(mistyped(format!(
                "$jsonSchema keyword '{key}' must be either a string or an array of strings"
            )));
        }
    };
    if names.contains(&"integer") {
        return Err(failed(
            "$jsonSchema type 'integer' is not currently supported.",
        ));
    }
    let mut sels = Vec::with_capacity(names.len());
    for n in names {
        let sel = if key == "type" {
            match n {
                "object" => TypeSel::Code(3),
                "array" => TypeSel::Code(4),
                "string" => TypeSel::Code(2),
                "number" => TypeSel::Number,
                "boolean" => TypeSel::Code(8),
                "null" => TypeSel::Code(10),
                other => {
                    return Err(EngineError::bad_value(format!(
                        "Unknown type name alias: {other}"
                    )));
                }
            }
        } else if n == "number" {
            TypeSel::Number
        } else {
            value::type_number_of_alias(n)
                .map(TypeSel::Code)
                .ok_or_else(|| EngineError::bad_value(format!("Unknown type name alias: {n}")))?
        };
        sels.push(sel);
    }
    if sels.is_empty() {
        return Err(failed(format!(
            "$jsonSchema keyword '{key}' must name at least one type"
        )));
    }
    Ok(sels)
}

fn bound(spec: &Document, key: &str, exclusive_key: &str) -> Result<Option<Bound>> {
    let exclusive = match spec.get(exclusive_key) {
        None => None,
        Some(Bson::Boolean(b)) => Some(*b),
        Some(_) => {
            return Err(mistyped(format!(
                "$jsonSchema keyword '{exclusive_key}' must be a boolean"
            )));
        }
    };
    let Some(v) = spec.get(key) else {
        if exclusive.is_some() {
            return Err(failed(format!(
                "$jsonSchema keyword '{key}' must be a present if {exclusive_key} is present"
            )));
        }
        return Ok(None);
    };
    if !value::is_number(v) {
        return Err(mistyped(format!(
            "$jsonSchema keyword '{key}' must be a number"
        )));
    }
    let exclusive = exclusive.unwrap_or(false);
    let mut shown = doc! {key: v.clone()};
    if exclusive {
        shown.insert(exclusive_key, true);
    }
    Ok(Some(Bound {
        value: v.clone(),
        exclusive,
        spec: shown,
    }))
}

/// `enum` values equal as mongod's `InternalSchemaEq` compares them.
fn enum_equal(a: &Bson, b: &Bson) -> bool {
    value::canonical_rank(a) == value::canonical_rank(b) && value::values_equal(a, b, None)
}

impl Schema {
    /// Parse a schema, refusing what mongod refuses with its codes.
    pub(crate) fn parse(spec: &Document) -> Result<Schema> {
        for key in spec.keys() {
            if UNSUPPORTED.contains(&key.as_str()) {
                return Err(failed(format!(
                    "$jsonSchema keyword '{key}' is not currently supported"
                )));
            }
            if !KNOWN.contains(&key.as_str()) {
                return Err(failed(format!("Unknown $jsonSchema keyword: {key}")));
            }
        }
        let mut s = Schema {
            spec: spec.clone(),
            ..Schema::default()
        };
        for key in ["description", "title"] {
            match spec.get(key) {
                None => {}
                Some(Bson::String(_)) => {}
                Some(_) => {
                    return Err(mistyped(format!(
                        "$jsonSchema keyword '{key}' must be of type string"
                    )));
                }
            }
        }
        for key in ["title", "description"] {
            if let Some(v) = spec.get(key) {
                s.annotations.insert(key, v.clone());
            }
        }
        match (spec.get("type"), spec.get("bsonType")) {
            (Some(_), Some(_)) => {
                return Err(failed(
                    "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'",
                ));
            }
            (Some(t), None) => s.types = Some(("type", t.clone(), type_set("type", t)?)),
            (None, Some(t)) => s.types = Some(("bsonType", t.clone(), type_set("bsonType", t)?)),
            (None, None) => {}
        }
        if spec.contains_key("encrypt") || spec.contains_key("encryptMetadata") {
            return Err(EngineError::not_implemented(
                "$jsonSchema keywords 'encrypt' and 'encryptMetadata'",
            ));
        }
        s.parse_scalar(spec)?;
        s.parse_array(spec)?;
        s.parse_object(spec)?;
        s.parse_logical(spec)?;
        Ok(s)
    }

    fn parse_scalar(&mut self, spec: &Document) -> Result<()> {
        if let Some(p) = spec.get("pattern") {
            let Bson::String(text) = p else {
                return Err(mistyped("$jsonSchema keyword 'pattern' must be a string"));
            };
            self.pattern = Some((p.clone(), Pattern::new(text, "")?));
        }
        if let Some(v) = spec.get("maxLength") {
            self.max_length = Some((v.clone(), count(v, "maxLength")?));
        }
        if let Some(v) = spec.get("minLength") {
            self.min_length = Some((v.clone(), count(v, "minLength")?));
        }
        if let Some(v) = spec.get("multipleOf") {
            if !value::is_number(v) {
                return Err(mistyped(
                    "$jsonSchema keyword 'multipleOf' must be a number",
                ));
            }
            if value::as_f64(v).is_none_or(|f| f.is_nan() || f <= 0.0) {
                return Err(failed(
                    "$jsonSchema keyword 'multipleOf' must have a positive value",
                ));
            }
            self.multiple_of = Some(v.clone());
        }
        self.maximum = bound(spec, "maximum", "exclusiveMaximum")?;
        self.minimum = bound(spec, "minimum", "exclusiveMinimum")?;
        Ok(())
    }

    fn parse_array(&mut self, spec: &Document) -> Result<()> {
        if let Some(v) = spec.get("minItems") {
            self.min_items = Some((v.clone(), count(v, "minItems")?));
        }
        if let Some(v) = spec.get("maxItems") {
            self.max_items = Some((v.clone(), count(v, "maxItems")?));
        }
        if let Some(v) = spec.get("uniqueItems") {
            let Bson::Boolean(b) = v else {
                return Err(mistyped(
                    "$jsonSchema keyword 'uniqueItems' must be a boolean",
                ));
            };
            self.unique_items = *b;
        }
        if let Some(v) = spec.get("items") {
            self.items = Some(match v {
                Bson::Document(d) => Items::One(Box::new(Schema::parse(d)?)),
                Bson::Array(list) => Items::List(
                    list.iter()
                        .map(|i| {
                            sub_schema(i, || {
                                mistyped(format!(
                                    "$jsonSchema keyword 'items' requires that each element of the array is an object, but found a {}",
                                    value::type_alias(i)
                                ))
                            })
                        })
                        .collect::<Result<_>>()?,
                ),
                other => {
                    return Err(mistyped(format!(
                        "$jsonSchema keyword 'items' must be an array or an object, not {}",
                        value::type_alias(other)
                    )));
                }
            });
        }
        if let Some(v) = spec.get("additionalItems") {
            self.additional_items = Some(match v {
                Bson::Boolean(b) => Extra::Bool(*b),
                Bson::Document(d) => Extra::Schema(Box::new(Schema::parse(d)?)),
                other => {
                    return Err(mistyped(format!(
                        "$jsonSchema keyword 'additionalItems' must be either an object or a boolean, but got a {}",
                        value::type_alias(other)
                    )));
                }
            });
        }
        Ok(())
    }

    fn parse_object(&mut self, spec: &Document) -> Result<()> {
        if let Some(v) = spec.get("required") {
            let Bson::Array(a) = v else {
                return Err(mistyped(format!(
                    "$jsonSchema keyword 'required' must be an array, but found an element of type {}",
                    value::type_alias(v)
                )));
            };
            let mut names: Vec<String> = Vec::with_capacity(a.len());
            for r in a {
                let Bson::String(name) = r else {
                    return Err(mistyped(format!(
                        "$jsonSchema keyword 'required' must be an array of strings, but found an element of type: {}",
                        value::type_alias(r)
                    )));
                };
                if names.contains(name) {
                    return Err(failed(
                        "$jsonSchema keyword 'required' array cannot contain duplicate values",
                    ));
                }
                names.push(name.clone());
            }
            if names.is_empty() {
                return Err(failed(
                    "$jsonSchema keyword 'required' cannot be an empty array",
                ));
            }
            names.sort();
            self.required = Some((v.clone(), names));
        }
        if let Some(v) = spec.get("properties") {
            let Bson::Document(d) = v else {
                return Err(mistyped(
                    "$jsonSchema keyword 'properties' must be an object",
                ));
            };
            for (name, sub) in d {
                let parsed = sub_schema(sub, || {
                    mistyped(format!(
                        "Nested schema for $jsonSchema property '{name}' must be an object"
                    ))
                })?;
                self.properties.push((name.clone(), parsed));
            }
        }
        if let Some(v) = spec.get("patternProperties") {
            let Bson::Document(d) = v else {
                return Err(mistyped(
                    "$jsonSchema keyword 'patternProperties' must be an object",
                ));
            };
            for (raw, sub) in d {
                let parsed = sub_schema(sub, || {
                    mistyped(format!(
                        "$jsonSchema keyword 'patternProperties' has property '{raw}' which is not an object"
                    ))
                })?;
                self.pattern_properties
                    .push((raw.clone(), Pattern::new(raw, "")?, parsed));
            }
        }
        if let Some(v) = spec.get("additionalProperties") {
            self.additional_properties = Some(match v {
                Bson::Boolean(b) => Extra::Bool(*b),
                Bson::Document(d) => Extra::Schema(Box::new(Schema::parse(d)?)),
                _ => {
                    return Err(mistyped(
                        "$jsonSchema keyword 'additionalProperties' must be an object or a boolean",
                    ));
                }
            });
        }
        if let Some(v) = spec.get("minProperties") {
            self.min_properties = Some((v.clone(), count(v, "minProperties")?));
        }
        if let Some(v) = spec.get("maxProperties") {
            self.max_properties = Some((v.clone(), count(v, "maxProperties")?));
        }
        if let Some(v) = spec.get("dependencies") {
            let Bson::Document(d) = v else {
                return Err(mistyped(
                    "$jsonSchema keyword 'dependencies' must be an object",
                ));
            };
            let mut annotations = Document::new();
            let mut entries = Vec::new();
            for (name, dep) in d {
                match dep {
                    Bson::Document(sub) => {
                        entries.push((
                            name.clone(),
                            Dependency::Schema(Box::new(Schema::parse(sub)?)),
                        ));
                    }
                    Bson::Array(list) => {
                        if list.is_empty() {
                            return Err(failed(format!(
                                "property '{name}' in $jsonSchema keyword 'dependencies' cannot be an empty array"
                            )));
                        }
                        let mut names: Vec<String> = Vec::with_capacity(list.len());
                        for p in list {
                            let Bson::String(p) = p else {
                                return Err(mistyped(format!(
                                    "array '{name}' in $jsonSchema keyword 'dependencies' can only contain strings, but found element of type: {}",
                                    value::type_alias(p)
                                )));
                            };
                            if names.contains(p) {
                                return Err(failed(format!(
                                    "array '{name}' in $jsonSchema keyword 'dependencies' contains duplicate element: {p}"
                                )));
                            }
                            names.push(p.clone());
                        }
                        entries.push((name.clone(), Dependency::Properties(names)));
                    }
                    Bson::String(_) if name == "title" || name == "description" => {
                        annotations.insert(name.clone(), dep.clone());
                    }
                    _ => {
                        return Err(mistyped(format!(
                            "property '{name}' in $jsonSchema keyword 'dependencies' must be either an object or an array"
                        )));
                    }
                }
            }
            self.dependencies = Some((annotations, entries));
        }
        Ok(())
    }

    fn parse_logical(&mut self, spec: &Document) -> Result<()> {
        if let Some(v) = spec.get("allOf") {
            self.all_of = schema_list(v, "allOf")?;
        }
        if let Some(v) = spec.get("anyOf") {
            self.any_of = schema_list(v, "anyOf")?;
        }
        if let Some(v) = spec.get("oneOf") {
            self.one_of = schema_list(v, "oneOf")?;
        }
        if let Some(v) = spec.get("not") {
            self.not = Some(Box::new(sub_schema(v, || {
                mistyped(format!(
                    "$jsonSchema keyword 'not' must be an object, but found an element of type {}",
                    value::type_alias(v)
                ))
            })?));
        }
        if let Some(v) = spec.get("enum") {
            let Bson::Array(a) = v else {
                return Err(mistyped(format!(
                    "$jsonSchema keyword 'enum' must be an array, but found an element of type {}",
                    value::type_alias(v)
                )));
            };
            if a.is_empty() {
                return Err(failed(
                    "$jsonSchema keyword 'enum' cannot be an empty array",
                ));
            }
            for (i, x) in a.iter().enumerate() {
                if a[..i].iter().any(|y| enum_equal(x, y)) {
                    return Err(failed(
                        "$jsonSchema keyword 'enum' array cannot contain duplicate values.",
                    ));
                }
            }
            self.enumeration = Some((v.clone(), a.clone()));
        }
        Ok(())
    }

    /// Whether a stored document satisfies the schema (a top-level schema).
    pub(crate) fn matches_document(&self, doc: &Document) -> bool {
        self.failures(Val::Doc(doc), true, false).is_empty()
    }

    /// mongod's `errInfo.details` for a document the schema rejects: the
    /// `$jsonSchema` operator with the rules the document broke
    /// (`schemaRulesNotSatisfied`), each in mongod's shape.
    pub(crate) fn details(&self, doc: &Document) -> Document {
        if let Some(always_false) = self.top_level_false() {
            return always_false;
        }
        let mut out = doc! {"operatorName": "$jsonSchema"};
        out.extend(self.annotations.clone());
        let rules = self.failures(Val::Doc(doc), true, true);
        out.insert(
            "schemaRulesNotSatisfied",
            rules.into_iter().map(Bson::Document).collect::<Vec<_>>(),
        );
        out
    }

    /// A top-level schema whose type leaves out `object` matches nothing:
    /// mongod's always-false error for it.
    fn top_level_false(&self) -> Option<Document> {
        let (_, _, types) = self.types.as_ref()?;
        if types.contains(&TypeSel::Code(3)) {
            return None;
        }
        Some(doc! {
            "operatorName": "$jsonSchema",
            "specifiedAs": {"$jsonSchema": self.spec.clone()},
            "reason": "expression always evaluates to false",
        })
    }

    fn matches(&self, v: Val<'_>, top: bool) -> bool {
        self.failures(v, top, false).is_empty()
    }

    /// The rules `v` breaks, in mongod's order, each as mongod reports it;
    /// with `all` false, stops at the first (an empty document stands for
    /// it), which is how matching runs.
    fn failures(&self, v: Val<'_>, top: bool, all: bool) -> Vec<Document> {
        let mut out = Failures {
            all,
            list: Vec::new(),
        };
        if top && let Some(f) = self.top_level_false() {
            out.fail(|| f);
            return out.list;
        }
        let stop = self.scalar_rules(v, &mut out)
            || self.array_rules(v, &mut out)
            || self.object_rules(v, top, &mut out)
            || self.logical_rules(v, top, &mut out);
        if stop {
            return out.list;
        }
        if !top
            && let Some((keyword, spec, types)) = &self.types
            && !types.iter().any(|t| v.has_type(*t))
        {
            out.fail(|| {
                let b = v.to_bson();
                let kw: &str = keyword;
                doc! {
                    "operatorName": kw,
                    "specifiedAs": {kw: spec.clone()},
                    "reason": "type did not match",
                    "consideredValue": b.clone(),
                    "consideredType": value::type_alias(&b),
                }
            });
        }
        out.list
    }

    /// `pattern`, `maxLength`, `minLength`, `multipleOf`, `maximum`,
    /// `minimum`; true to stop.
    fn scalar_rules(&self, v: Val<'_>, out: &mut Failures) -> bool {
        if let Val::Bson(Bson::String(s)) = v {
            if let Some((spec, p)) = &self.pattern
                && !p.is_match(s)
                && out.fail(|| {
                    doc! {
                        "operatorName": "pattern",
                        "specifiedAs": {"pattern": spec.clone()},
                        "reason": "regular expression did not match",
                        "consideredValue": s.clone(),
                    }
                })
            {
                return true;
            }
            let n = s.chars().count();
            let checks: [(&str, &Count, Check); 2] = [
                ("maxLength", &self.max_length, above),
                ("minLength", &self.min_length, below),
            ];
            for (key, limit, broken) in checks {
                if let Some((spec, m)) = limit
                    && broken(n, *m)
                    && out.fail(|| {
                        doc! {
                            "operatorName": key,
                            "specifiedAs": {key: spec.clone()},
                            "reason": "specified string length was not satisfied",
                            "consideredValue": s.clone(),
                        }
                    })
                {
                    return true;
                }
            }
        }
        if let Val::Bson(n) = v
            && value::is_number(n)
        {
            if let Some(m) = &self.multiple_of
                && !is_multiple(n, m)
                && out.fail(|| {
                    doc! {
                        "operatorName": "multipleOf",
                        "specifiedAs": {"multipleOf": m.clone()},
                        "reason": "considered value is not a multiple of the specified value",
                        "consideredValue": n.clone(),
                    }
                })
            {
                return true;
            }
            for (key, b, broken) in [
                ("maximum", &self.maximum, Ordering::Greater),
                ("minimum", &self.minimum, Ordering::Less),
            ] {
                if let Some(b) = b {
                    let c = compare(n, &b.value, None);
                    if (c == broken || (b.exclusive && c.is_eq()))
                        && out.fail(|| {
                            doc! {
                                "operatorName": key,
                                "specifiedAs": b.spec.clone(),
                                "reason": "comparison failed",
                                "consideredValue": n.clone(),
                            }
                        })
                    {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// `minItems`, `maxItems`, `uniqueItems`, `items`, `additionalItems`.
    fn array_rules(&self, v: Val<'_>, out: &mut Failures) -> bool {
        let Val::Bson(Bson::Array(a)) = v else {
            return false;
        };
        let checks: [(&str, &Count, Check); 2] = [
            ("minItems", &self.min_items, below),
            ("maxItems", &self.max_items, above),
        ];
        for (key, limit, broken) in checks {
            if let Some((spec, m)) = limit
                && broken(a.len(), *m)
                && out.fail(|| {
                    doc! {
                        "operatorName": key,
                        "specifiedAs": {key: spec.clone()},
                        "reason": "array did not match specified length",
                        "consideredValue": a.clone(),
                        "numberOfItems": i32::try_from(a.len()).unwrap_or(i32::MAX),
                    }
                })
            {
                return true;
            }
        }
        if self.unique_items
            && let Some(dup) = first_duplicate(a)
            && out.fail(|| {
                doc! {
                    "operatorName": "uniqueItems",
                    "specifiedAs": {"uniqueItems": true},
                    "reason": "found a duplicate item",
                    "consideredValue": a.clone(),
                    "duplicatedValue": dup.clone(),
                }
            })
        {
            return true;
        }
        match &self.items {
            Some(Items::One(s)) => {
                if let Some(i) = a.iter().position(|x| !s.matches(Val::Bson(x), false))
                    && out.fail(|| {
                        let mut d = doc! {"operatorName": "items"};
                        d.extend(s.annotations.clone());
                        d.insert("reason", "At least one item did not match the sub-schema");
                        d.insert("itemIndex", index(i));
                        d.insert("details", s.detail_list(&a[i]));
                        d
                    })
                {
                    return true;
                }
            }
            Some(Items::List(list)) => {
                let broken: Vec<usize> = list
                    .iter()
                    .zip(a)
                    .enumerate()
                    .filter(|(_, (s, x))| !s.matches(Val::Bson(x), false))
                    .map(|(i, _)| i)
                    .collect();
                if !broken.is_empty()
                    && out.fail(|| {
                        let details: Vec<Bson> = broken
                            .iter()
                            .map(|&i| {
                                Bson::Document(doc! {
                                    "itemIndex": index(i),
                                    "details": list[i].detail_list(&a[i]),
                                })
                            })
                            .collect();
                        doc! {"operatorName": "items", "details": details}
                    })
                {
                    return true;
                }
                let extra = list.len().min(a.len());
                match &self.additional_items {
                    Some(Extra::Bool(false))
                        if a.len() > extra
                            && out.fail(|| {
                                doc! {
                                    "operatorName": "additionalItems",
                                    "specifiedAs": {"additionalItems": false},
                                    "reason": "found additional items",
                                    "additionalItems": a[extra..].to_vec(),
                                }
                            }) =>
                    {
                        return true;
                    }
                    Some(Extra::Schema(s)) => {
                        if let Some(i) = a[extra..]
                            .iter()
                            .position(|x| !s.matches(Val::Bson(x), false))
                            .map(|i| i + extra)
                            && out.fail(|| {
                                let mut d = doc! {"operatorName": "additionalItems"};
                                d.extend(s.annotations.clone());
                                d.insert(
                                    "reason",
                                    "At least one additional item did not match the sub-schema",
                                );
                                d.insert("itemIndex", index(i));
                                d.insert("details", s.detail_list(&a[i]));
                                d
                            })
                        {
                            return true;
                        }
                    }
                    _ => {}
                }
            }
            None => {}
        }
        false
    }

    /// `properties`, `additionalProperties`/`patternProperties`, `required`,
    /// `minProperties`, `maxProperties`, `dependencies`.
    fn object_rules(&self, v: Val<'_>, top: bool, out: &mut Failures) -> bool {
        let Some(d) = v.as_doc() else {
            return false;
        };
        if !self.properties.is_empty() {
            let broken: Vec<&(String, Schema)> = self
                .properties
                .iter()
                .filter(|(name, s)| d.get(name).is_some_and(|x| !s.matches(Val::Bson(x), false)))
                .collect();
            if !broken.is_empty()
                && out.fail(|| {
                    let list: Vec<Bson> = broken
                        .iter()
                        .map(|(name, s)| {
                            let mut e = doc! {"propertyName": name.clone()};
                            e.extend(s.annotations.clone());
                            if let Some(x) = d.get(name) {
                                e.insert("details", s.detail_list(x));
                            }
                            Bson::Document(e)
                        })
                        .collect();
                    doc! {"operatorName": "properties", "propertiesNotSatisfied": list}
                })
            {
                return true;
            }
        }
        if (self.additional_properties.is_some() || !self.pattern_properties.is_empty())
            && self.allowed_properties(d, out)
        {
            return true;
        }
        if let Some((spec, names)) = &self.required {
            let missing: Vec<&String> = names.iter().filter(|n| !d.contains_key(*n)).collect();
            if !missing.is_empty()
                && out.fail(|| {
                    doc! {
                        "operatorName": "required",
                        "specifiedAs": {"required": spec.clone()},
                        "missingProperties": missing.iter().map(|n| Bson::String((*n).clone())).collect::<Vec<_>>(),
                    }
                })
            {
                return true;
            }
        }
        let checks: [(&str, &Count, Check); 2] = [
            ("minProperties", &self.min_properties, below),
            ("maxProperties", &self.max_properties, above),
        ];
        for (key, limit, broken) in checks {
            if let Some((spec, m)) = limit
                && broken(d.len(), *m)
                && out.fail(|| {
                    doc! {
                        "operatorName": key,
                        "specifiedAs": {key: spec.clone()},
                        "reason": "specified number of properties was not satisfied",
                        "numberOfProperties": i32::try_from(d.len()).unwrap_or(i32::MAX),
                    }
                })
            {
                return true;
            }
        }
        if let Some((annotations, deps)) = &self.dependencies {
            let mut failing = Vec::new();
            for (name, dep) in deps {
                if !d.contains_key(name) {
                    continue;
                }
                match dep {
                    Dependency::Properties(list) => {
                        let missing: Vec<Bson> = list
                            .iter()
                            .filter(|p| !d.contains_key(*p))
                            .map(|p| Bson::String(p.clone()))
                            .collect();
                        if !missing.is_empty() {
                            failing.push(doc! {"conditionalProperty": name.clone(), "missingProperties": missing});
                        }
                    }
                    Dependency::Schema(s) => {
                        if !s.matches(v, top) {
                            failing.push(doc! {
                                "conditionalProperty": name.clone(),
                                "details": docs(s.failures(v, top, out.all)),
                            });
                        }
                    }
                }
                if !failing.is_empty() && !out.all {
                    break;
                }
            }
            if !failing.is_empty()
                && out.fail(|| {
                    let mut e = doc! {"operatorName": "dependencies"};
                    e.extend(annotations.clone());
                    e.insert("failingDependencies", docs(failing));
                    e
                })
            {
                return true;
            }
        }
        false
    }

    /// `additionalProperties` and `patternProperties` together, as mongod's
    /// one allowed-properties rule reports them: the additional-properties
    /// error first, then the pattern-properties one.
    fn allowed_properties(&self, d: &Document, out: &mut Failures) -> bool {
        let additional: Vec<&String> = d
            .keys()
            .filter(|k| {
                !self.properties.iter().any(|(n, _)| n == *k)
                    && !self
                        .pattern_properties
                        .iter()
                        .any(|(_, p, _)| p.is_match(k))
            })
            .collect();
        match &self.additional_properties {
            Some(Extra::Bool(false))
                if !additional.is_empty()
                    && out.fail(|| {
                        doc! {
                            "operatorName": "additionalProperties",
                            "specifiedAs": {"additionalProperties": false},
                            "additionalProperties": additional.iter().map(|k| Bson::String((*k).clone())).collect::<Vec<_>>(),
                        }
                    }) =>
            {
                return true;
            }
            Some(Extra::Schema(s)) => {
                if let Some(k) = additional
                    .iter()
                    .find(|k| d.get(**k).is_some_and(|x| !s.matches(Val::Bson(x), false)))
                    && out.fail(|| {
                        let mut e = doc! {"operatorName": "additionalProperties"};
                        e.extend(s.annotations.clone());
                        e.insert(
                            "reason",
                            "at least one additional property did not match the subschema",
                        );
                        e.insert("failingProperty", (*k).clone());
                        if let Some(x) = d.get(*k) {
                            e.insert("details", s.detail_list(x));
                        }
                        e
                    })
                {
                    return true;
                }
            }
            _ => {}
        }
        let mut entries = Vec::new();
        for (raw, p, s) in &self.pattern_properties {
            if let Some((k, x)) = d
                .iter()
                .find(|(k, x)| p.is_match(k) && !s.matches(Val::Bson(x), false))
            {
                if !out.all {
                    entries.push(Document::new());
                    break;
                }
                let mut e = doc! {"propertyName": k.clone()};
                e.extend(s.annotations.clone());
                e.insert("regexMatched", raw.clone());
                e.insert("details", s.detail_list(x));
                entries.push(e);
            }
        }
        !entries.is_empty()
            && out.fail(|| doc! {"operatorName": "patternProperties", "details": docs(entries)})
    }

    /// `allOf`, `anyOf`, `oneOf`, `not`, `enum`.
    fn logical_rules(&self, v: Val<'_>, top: bool, out: &mut Failures) -> bool {
        let entry = |i: usize, s: &Schema| {
            let mut e = doc! {"index": index(i)};
            e.extend(s.annotations.clone());
            e.insert("details", docs(s.failures(v, top, true)));
            Bson::Document(e)
        };
        if !self.all_of.is_empty() {
            let broken: Vec<usize> = (0..self.all_of.len())
                .filter(|&i| !self.all_of[i].matches(v, top))
                .collect();
            if !broken.is_empty()
                && out.fail(|| {
                    doc! {
                        "operatorName": "allOf",
                        "schemasNotSatisfied": broken.iter().map(|&i| entry(i, &self.all_of[i])).collect::<Vec<_>>(),
                    }
                })
            {
                return true;
            }
        }
        if !self.any_of.is_empty()
            && !self.any_of.iter().any(|s| s.matches(v, top))
            && out.fail(|| {
                doc! {
                    "operatorName": "anyOf",
                    "schemasNotSatisfied": self.any_of.iter().enumerate().map(|(i, s)| entry(i, s)).collect::<Vec<_>>(),
                }
            })
        {
            return true;
        }
        if !self.one_of.is_empty() {
            let matching: Vec<usize> = (0..self.one_of.len())
                .filter(|&i| self.one_of[i].matches(v, top))
                .collect();
            if matching.is_empty()
                && out.fail(|| {
                    doc! {
                        "operatorName": "oneOf",
                        "schemasNotSatisfied": self.one_of.iter().enumerate().map(|(i, s)| entry(i, s)).collect::<Vec<_>>(),
                    }
                })
            {
                return true;
            }
            if matching.len() > 1 && out.fail(|| {
                doc! {
                    "operatorName": "oneOf",
                    "reason": "more than one subschema matched",
                    "matchingSchemaIndexes": matching.iter().map(|&i| index(i)).collect::<Vec<_>>(),
                }
            }) {
                return true;
            }
        }
        if let Some(s) = &self.not
            && s.matches(v, top)
            && out.fail(|| doc! {"operatorName": "not", "reason": "child expression matched"})
        {
            return true;
        }
        if let Some((spec, values)) = &self.enumeration {
            let b = v.to_bson();
            let objects = values.iter().any(|x| matches!(x, Bson::Document(_)));
            if top && !objects {
                return out.fail(|| {
                    doc! {
                        "operatorName": "enum",
                        "specifiedAs": {"enum": spec.clone()},
                        "reason": "expression always evaluates to false",
                    }
                });
            }
            if !values.iter().any(|x| enum_equal(x, &b))
                && out.fail(|| {
                    doc! {
                        "operatorName": "enum",
                        "specifiedAs": {"enum": spec.clone()},
                        "reason": "value was not found in enum",
                        "consideredValue": b.clone(),
                    }
                })
            {
                return true;
            }
        }
        false
    }

    /// A sub-schema's failures for one value, as the `details` array its
    /// parent reports.
    fn detail_list(&self, v: &Bson) -> Vec<Bson> {
        docs(self.failures(Val::Bson(v), false, true))
    }
}

fn docs(list: Vec<Document>) -> Vec<Bson> {
    list.into_iter().map(Bson::Document).collect()
}

fn index(i: usize) -> i32 {
    i32::try_from(i).unwrap_or(i32::MAX)
}

/// The first element equal to an earlier one (mongod's
/// `findFirstDuplicateValue`).
fn first_duplicate(a: &[Bson]) -> Option<&Bson> {
    a.iter()
        .enumerate()
        .find(|(i, x)| a[..*i].iter().any(|y| enum_equal(x, y)))
        .map(|(_, x)| x)
}

/// Whether `n` is a multiple of `m` (mongod's `$_internalSchemaFmod` with
/// remainder 0): exact for integers, by floating-point remainder otherwise.
fn is_multiple(n: &Bson, m: &Bson) -> bool {
    let int = |b: &Bson| match b {
        Bson::Int32(i) => Some(i64::from(*i)),
        Bson::Int64(i) => Some(*i),
        _ => None,
    };
    if let (Some(a), Some(b)) = (int(n), int(m)) {
        return b != 0 && a % b == 0;
    }
    match (value::as_f64(n), value::as_f64(m)) {
        (Some(a), Some(b)) => b != 0.0 && a.is_finite() && (a % b) == 0.0,
        _ => false,
    }
}

/// The failures found so far, or the first one when only matching.
struct Failures {
    all: bool,
    list: Vec<Document>,
}

impl Failures {
    /// Record a failure (built only when every failure is wanted); true
    /// when the caller should stop.
    fn fail(&mut self, make: impl FnOnce() -> Document) -> bool {
        if self.all {
            self.list.push(make());
            false
        } else {
            self.list.push(Document::new());
            true
        }
    }
}

/// The value a schema applies to: the stored document itself at the top
/// (not copied), or a value inside it.
#[derive(Clone, Copy)]
enum Val<'a> {
    Doc(&'a Document),
    Bson(&'a Bson),
}

impl Val<'_> {
    fn as_doc(&self) -> Option<&Document> {
        match *self {
            Val::Doc(d) | Val::Bson(Bson::Document(d)) => Some(d),
            Val::Bson(_) => None,
        }
    }

    fn has_type(&self, t: TypeSel) -> bool {
        match self {
            Val::Doc(_) => t == TypeSel::Code(3),
            Val::Bson(b) => t.matches(b),
        }
    }

    fn to_bson(self) -> Bson {
        match self {
            Val::Doc(d) => Bson::Document(d.clone()),
            Val::Bson(b) => b.clone(),
        }
    }
}

#[cfg(test)]
mod tests;

/// The code of a schema parse error, for tests.
#[cfg(test)]
fn code_of(spec: Document) -> i32 {
    match Schema::parse(&spec) {
        Ok(_) => 0,
        Err(e) => e.code.code(),
    }
}
