//! A subset of `$jsonSchema`: the keywords collection validators in schema
//! design lessons use (`bsonType`, `type`, `required`, `properties`,
//! `enum`, numeric and length bounds, `pattern`, `items`,
//! `additionalProperties`, and the `allOf`/`anyOf`/`oneOf`/`not`
//! combinators). As in mongod, a keyword only constrains values of the type
//! it is about: `minimum` says nothing about a string.

use bson::{Bson, Document};

use super::TypeSel;
use super::regex::Pattern;
use crate::error::{EngineError, Result};
use crate::value::{self, compare};

/// A parsed schema.
#[derive(Debug, Clone, Default)]
pub(crate) struct Schema {
    types: Option<Vec<TypeSel>>,
    required: Vec<String>,
    properties: Vec<(String, Schema)>,
    additional_properties: Option<bool>,
    enumeration: Option<Vec<Bson>>,
    minimum: Option<(Bson, bool)>,
    maximum: Option<(Bson, bool)>,
    min_length: Option<usize>,
    max_length: Option<usize>,
    pattern: Option<Pattern>,
    min_items: Option<usize>,
    max_items: Option<usize>,
    items: Option<Box<Schema>>,
    min_properties: Option<usize>,
    max_properties: Option<usize>,
    all_of: Vec<Schema>,
    any_of: Vec<Schema>,
    one_of: Vec<Schema>,
    not: Option<Box<Schema>>,
}

fn bad(msg: impl Into<String>) -> EngineError {
    EngineError::failed_to_parse(msg)
}

fn count(v: &Bson, key: &str) -> Result<usize> {
    value::as_i64(v)
        .filter(|n| *n >= 0)
        .map(|n| n as usize)
        .ok_or_else(|| {
            bad(format!(
                "{key} must be a representable as a non-negative integer"
            ))
        })
}

fn schema_list(v: &Bson, key: &str) -> Result<Vec<Schema>> {
    match v {
        Bson::Array(items) if !items.is_empty() => items
            .iter()
            .map(|i| match i {
                Bson::Document(d) => Schema::parse(d),
                _ => Err(bad(format!(
                    "$jsonSchema keyword '{key}' must be an array of objects"
                ))),
            })
            .collect(),
        _ => Err(bad(format!(
            "$jsonSchema keyword '{key}' must be a nonempty array"
        ))),
    }
}

fn json_type(name: &str) -> Result<Vec<TypeSel>> {
    Ok(match name {
        "object" => vec![TypeSel::Code(3)],
        "array" => vec![TypeSel::Code(4)],
        "string" => vec![TypeSel::Code(2)],
        "number" => vec![TypeSel::Number],
        "boolean" => vec![TypeSel::Code(8)],
        "null" => vec![TypeSel::Code(10)],
        "integer" => {
            return Err(bad(
                "$jsonSchema type 'integer' is not currently supported.",
            ));
        }
        other => return Err(bad(format!("Unknown type name alias: {other}"))),
    })
}

fn bson_type(name: &str) -> Result<TypeSel> {
    if name == "number" {
        return Ok(TypeSel::Number);
    }
    value::type_number_of_alias(name)
        .map(TypeSel::Code)
        .ok_or_else(|| bad(format!("Unknown type name alias: {name}")))
}

impl Schema {
    pub(crate) fn parse(spec: &Document) -> Result<Schema> {
        let mut s = Schema::default();
        for (key, v) in spec {
            match key.as_str() {
                "bsonType" | "type" => {
                    if s.types.is_some() {
                        return Err(bad("$jsonSchema cannot contain both 'type' and 'bsonType'"));
                    }
                    let names: Vec<&str> = match v {
                        Bson::String(n) => vec![n.as_str()],
                        Bson::Array(a) => a.iter().filter_map(Bson::as_str).collect(),
                        _ => {
                            return Err(bad(format!(
                                "$jsonSchema keyword '{key}' must be a string or an array of strings"
                            )));
                        }
                    };
                    let mut sels = Vec::new();
                    for n in names {
                        if key == "type" {
                            sels.extend(json_type(n)?);
                        } else {
                            sels.push(bson_type(n)?);
                        }
                    }
                    s.types = Some(sels);
                }
                "required" => {
                    let Bson::Array(a) = v else {
                        return Err(bad("$jsonSchema keyword 'required' must be an array"));
                    };
                    for r in a {
                        match r {
                            Bson::String(name) => s.required.push(name.clone()),
                            _ => {
                                return Err(bad(
                                    "$jsonSchema keyword 'required' must be an array of strings",
                                ));
                            }
                        }
                    }
                }
                "properties" => {
                    let Bson::Document(d) = v else {
                        return Err(bad("$jsonSchema keyword 'properties' must be an object"));
                    };
                    for (name, sub) in d {
                        let Bson::Document(sub) = sub else {
                            return Err(bad(format!(
                                "Nested schema for $jsonSchema property '{name}' must be an object"
                            )));
                        };
                        s.properties.push((name.clone(), Schema::parse(sub)?));
                    }
                }
                "additionalProperties" => match v {
                    Bson::Boolean(b) => s.additional_properties = Some(*b),
                    _ => {
                        return Err(EngineError::not_implemented(
                            "$jsonSchema additionalProperties with a schema",
                        ));
                    }
                },
                "enum" => match v {
                    Bson::Array(a) if !a.is_empty() => s.enumeration = Some(a.clone()),
                    _ => return Err(bad("$jsonSchema keyword 'enum' cannot be an empty array")),
                },
                "minimum" | "maximum" => {
                    if !value::is_number(v) {
                        return Err(bad(format!("$jsonSchema keyword '{key}' must be a number")));
                    }
                    let exclusive = spec
                        .get(if key == "minimum" {
                            "exclusiveMinimum"
                        } else {
                            "exclusiveMaximum"
                        })
                        .is_some_and(|e| matches!(e, Bson::Boolean(true)));
                    if key == "minimum" {
                        s.minimum = Some((v.clone(), exclusive));
                    } else {
                        s.maximum = Some((v.clone(), exclusive));
                    }
                }
                "exclusiveMinimum" | "exclusiveMaximum" => {}
                "minLength" => s.min_length = Some(count(v, key)?),
                "maxLength" => s.max_length = Some(count(v, key)?),
                "minItems" => s.min_items = Some(count(v, key)?),
                "maxItems" => s.max_items = Some(count(v, key)?),
                "minProperties" => s.min_properties = Some(count(v, key)?),
                "maxProperties" => s.max_properties = Some(count(v, key)?),
                "pattern" => match v {
                    Bson::String(p) => s.pattern = Some(Pattern::new(p, "")?),
                    _ => return Err(bad("$jsonSchema keyword 'pattern' must be a string")),
                },
                "items" => match v {
                    Bson::Document(d) => s.items = Some(Box::new(Schema::parse(d)?)),
                    _ => {
                        return Err(EngineError::not_implemented(
                            "$jsonSchema items as an array",
                        ));
                    }
                },
                "allOf" => s.all_of = schema_list(v, key)?,
                "anyOf" => s.any_of = schema_list(v, key)?,
                "oneOf" => s.one_of = schema_list(v, key)?,
                "not" => match v {
                    Bson::Document(d) => s.not = Some(Box::new(Schema::parse(d)?)),
                    _ => return Err(bad("$jsonSchema keyword 'not' must be an object")),
                },
                "title" | "description" => {}
                "dependencies" | "patternProperties" | "multipleOf" | "uniqueItems"
                | "additionalItems" | "encrypt" | "encryptMetadata" => {
                    return Err(EngineError::not_implemented(format!(
                        "$jsonSchema keyword '{key}'"
                    )));
                }
                other => return Err(bad(format!("Unknown $jsonSchema keyword: {other}"))),
            }
        }
        Ok(s)
    }

    /// Validate a whole document.
    pub(crate) fn matches_document(&self, doc: &Document) -> bool {
        self.matches_object(doc) && self.matches_common(&Bson::Document(doc.clone()))
    }

    fn matches_object(&self, doc: &Document) -> bool {
        if !self.required.iter().all(|r| doc.contains_key(r)) {
            return false;
        }
        for (name, sub) in &self.properties {
            if let Some(v) = doc.get(name)
                && !sub.matches(v)
            {
                return false;
            }
        }
        if self.additional_properties == Some(false)
            && doc
                .keys()
                .any(|k| !self.properties.iter().any(|(n, _)| n == k))
        {
            return false;
        }
        if self.min_properties.is_some_and(|m| doc.len() < m)
            || self.max_properties.is_some_and(|m| doc.len() > m)
        {
            return false;
        }
        true
    }

    fn matches(&self, v: &Bson) -> bool {
        if let Bson::Document(d) = v
            && !self.matches_object(d)
        {
            return false;
        }
        self.matches_common(v)
    }

    fn matches_common(&self, v: &Bson) -> bool {
        if let Some(types) = &self.types
            && !types.iter().any(|t| t.matches(v))
        {
            return false;
        }
        if let Some(e) = &self.enumeration
            && !e.iter().any(|x| {
                value::values_equal(x, v, None)
                    && value::canonical_rank(x) == value::canonical_rank(v)
            })
        {
            return false;
        }
        if value::is_number(v) {
            if let Some((m, excl)) = &self.minimum {
                let c = compare(v, m, None);
                if c.is_lt() || (*excl && c.is_eq()) {
                    return false;
                }
            }
            if let Some((m, excl)) = &self.maximum {
                let c = compare(v, m, None);
                if c.is_gt() || (*excl && c.is_eq()) {
                    return false;
                }
            }
        }
        if let Bson::String(s) = v {
            let n = s.chars().count();
            if self.min_length.is_some_and(|m| n < m) || self.max_length.is_some_and(|m| n > m) {
                return false;
            }
            if let Some(p) = &self.pattern
                && !p.is_match(s)
            {
                return false;
            }
        }
        if let Bson::Array(a) = v {
            if self.min_items.is_some_and(|m| a.len() < m)
                || self.max_items.is_some_and(|m| a.len() > m)
            {
                return false;
            }
            if let Some(items) = &self.items
                && !a.iter().all(|x| items.matches(x))
            {
                return false;
            }
        }
        self.all_of.iter().all(|s| s.matches(v))
            && (self.any_of.is_empty() || self.any_of.iter().any(|s| s.matches(v)))
            && (self.one_of.is_empty() || self.one_of.iter().filter(|s| s.matches(v)).count() == 1)
            && !self.not.as_ref().is_some_and(|s| s.matches(v))
    }
}
