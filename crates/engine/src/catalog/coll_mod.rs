//! `collMod`: changing a collection's validation settings and an index's
//! `hidden` flag or TTL after the fact, as mongod 7.0 does, with its checks
//! in its order (the index first, then the validator, level and action)
//! and its reply (`hidden_old`/`hidden_new`,
//! `expireAfterSeconds_old`/`expireAfterSeconds_new` for what changed).
//! Everything is checked before anything changes.

use bson::{Bson, Document};

use super::validation::Validator;
use super::{Collection, Store, ns_not_found};
use crate::error::{EngineError, ErrorCode, Result};
use crate::update::display;
use crate::value;

/// The fields of mongod 7.0's `collMod` besides the generic ones.
const FIELDS: &[&str] = &[
    "collMod",
    "index",
    "validator",
    "validationLevel",
    "validationAction",
    "viewOn",
    "pipeline",
    "expireAfterSeconds",
    "timeseries",
    "changeStreamPreAndPostImages",
    "recordPreImages",
    "cappedSize",
    "cappedMax",
    "collectionUUID",
];

const INDEX_FIELDS: &[&str] = &[
    "name",
    "keyPattern",
    "expireAfterSeconds",
    "hidden",
    "unique",
    "prepareUnique",
    "forceNonUnique",
];

fn invalid(msg: impl Into<String>) -> EngineError {
    EngineError::new(ErrorCode::INVALID_OPTIONS, msg)
}

fn wrong_type(field: &str, v: &Bson, expected: &str) -> EngineError {
    EngineError::type_mismatch(format!(
        "BSON field '{field}' is the wrong type '{}', expected type '{expected}'",
        value::type_alias(v)
    ))
}

fn flag(index: &Document, key: &str) -> Result<Option<bool>> {
    match index.get(key) {
        None => Ok(None),
        Some(Bson::Boolean(b)) => Ok(Some(*b)),
        Some(other) => Err(wrong_type(&format!("collMod.index.{key}"), other, "bool")),
    }
}

/// The index change a `collMod` asks for.
struct IndexChange {
    name: Option<String>,
    key: Option<Document>,
    ttl: Option<i64>,
    hidden: Option<bool>,
    unique: Option<bool>,
}

fn parse_index(v: &Bson) -> Result<IndexChange> {
    let Bson::Document(index) = v else {
        return Err(wrong_type("collMod.index", v, "object"));
    };
    for key in index.keys() {
        if !INDEX_FIELDS.contains(&key.as_str()) {
            return Err(EngineError::new(
                ErrorCode(40415),
                format!("BSON field 'collMod.index.{key}' is an unknown field."),
            ));
        }
    }
    let name = match index.get("name") {
        None => None,
        Some(Bson::String(s)) => Some(s.clone()),
        Some(other) => return Err(wrong_type("collMod.index.name", other, "string")),
    };
    let key = match index.get("keyPattern") {
        None => None,
        Some(Bson::Document(d)) => Some(d.clone()),
        Some(other) => return Err(wrong_type("collMod.index.keyPattern", other, "object")),
    };
    let ttl = match index.get("expireAfterSeconds") {
        None => None,
        Some(v) if value::is_number(v) => Some(v),
        Some(other) => {
            return Err(wrong_type(
                "collMod.index.expireAfterSeconds",
                other,
                "long",
            ));
        }
    };
    let hidden = flag(index, "hidden")?;
    let unique = flag(index, "unique")?;
    let prepare_unique = flag(index, "prepareUnique")?;
    let force_non_unique = flag(index, "forceNonUnique")?;
    if name.is_some() && key.is_some() {
        return Err(invalid("Cannot specify both key pattern and name."));
    }
    if name.is_none() && key.is_none() {
        return Err(invalid("Must specify either index name or key pattern."));
    }
    if ttl.is_none()
        && hidden.is_none()
        && unique.is_none()
        && prepare_unique.is_none()
        && force_non_unique.is_none()
    {
        return Err(invalid(
            "no expireAfterSeconds, hidden, unique, or prepareUnique field",
        ));
    }
    if prepare_unique.is_some() || force_non_unique.is_some() {
        return Err(EngineError::not_implemented(
            "collMod index options 'prepareUnique' and 'forceNonUnique'",
        ));
    }
    let ttl = match ttl {
        Some(v) => Some(crate::index::validate_ttl(v).map_err(|e| invalid(e.message))?),
        None => None,
    };
    Ok(IndexChange {
        name,
        key,
        ttl,
        hidden,
        unique,
    })
}

impl Collection {
    /// Apply `collMod` to this collection (`ns` for messages); the reply's
    /// fields besides `ok`.
    fn modify(&mut self, ns: &str, cmd: &Document) -> Result<Document> {
        let mut reply = Document::new();
        let change = cmd.get("index").map(parse_index).transpose()?;
        let mut index_at = None;
        if let Some(change) = &change {
            let at = match (&change.name, &change.key) {
                (Some(name), _) => self
                    .indexes
                    .iter()
                    .position(|i| &i.spec.name == name)
                    .ok_or_else(|| {
                        EngineError::new(
                            ErrorCode::INDEX_NOT_FOUND,
                            format!("cannot find index {name} for ns {ns}"),
                        )
                    })?,
                (None, Some(key)) => {
                    let found: Vec<usize> = (0..self.indexes.len())
                        .filter(|&i| &self.indexes[i].spec.key == key)
                        .collect();
                    match found.as_slice() {
                        [one] => *one,
                        [] => {
                            return Err(EngineError::new(
                                ErrorCode::INDEX_NOT_FOUND,
                                format!(
                                    "cannot find index {} for ns {ns}",
                                    display::value(&Bson::Document(key.clone()))
                                ),
                            ));
                        }
                        many => {
                            return Err(EngineError::new(
                                ErrorCode(19),
                                format!(
                                    "index keyPattern {} matches {} indexes, must use index name.",
                                    display::value(&Bson::Document(key.clone())),
                                    many.len()
                                ),
                            ));
                        }
                    }
                }
                (None, None) => {
                    return Err(invalid("Must specify either index name or key pattern."));
                }
            };
            let spec = &self.indexes[at].spec;
            let is_id = spec.name == "_id_";
            if change.ttl.is_some() && spec.expire_after_seconds.is_none() {
                if is_id {
                    return Err(invalid("the _id field does not support TTL indexes"));
                }
                if spec.fields.len() != 1 {
                    return Err(invalid(
                        "TTL indexes are single-field indexes, compound indexes do not support TTL",
                    ));
                }
            }
            if let Some(unique) = change.unique {
                if !unique {
                    return Err(EngineError::bad_value("Cannot make index non-unique"));
                }
                if !spec.unique {
                    return Err(invalid(
                        "Cannot make index unique with 'prepareUnique=false'. Run collMod to set it first.",
                    ));
                }
            }
            if change.hidden.is_some() && is_id {
                return Err(EngineError::bad_value("can't hide _id index"));
            }
            index_at = Some(at);
        }
        let validation_changed = ["validator", "validationLevel", "validationAction"]
            .iter()
            .any(|k| cmd.contains_key(*k));
        let mut options = self.options.clone();
        let validator = if validation_changed {
            for key in ["validator", "validationLevel", "validationAction"] {
                if let Some(v) = cmd.get(key) {
                    options.insert(key, v.clone());
                }
            }
            // The new settings are checked together, as they will be
            // used; what the collection had stays as it was.
            let mut given = Document::new();
            for key in ["validator", "validationLevel", "validationAction"] {
                if let Some(v) = cmd.get(key) {
                    given.insert(key, v.clone());
                }
            }
            Validator::from_options(&given, "collMod")?;
            Some(Validator::from_options(&options, "collMod")?)
        } else {
            None
        };
        // Checked: apply.
        if let (Some(change), Some(at)) = (&change, index_at) {
            let spec = &mut self.indexes[at].spec;
            if let Some(ttl) = change.ttl {
                let old = spec.expire_after_seconds;
                if old != Some(ttl) {
                    if let Some(old) = old {
                        reply.insert("expireAfterSeconds_old", old);
                    }
                    reply.insert("expireAfterSeconds_new", ttl);
                    spec.expire_after_seconds = Some(ttl);
                }
            }
            if let Some(hidden) = change.hidden
                && spec.hidden != hidden
            {
                reply.insert("hidden_old", spec.hidden);
                reply.insert("hidden_new", hidden);
                spec.hidden = hidden;
            }
        }
        if let Some(validator) = validator {
            self.options = options;
            self.validator = validator;
        }
        self.version += 1;
        Ok(reply)
    }
}

impl Store {
    /// `collMod` on `db.coll`: `cmd` without the generic arguments.
    pub fn coll_mod(&self, db: &str, coll: &str, cmd: &Document) -> Result<Document> {
        for key in cmd.keys() {
            if !FIELDS.contains(&key.as_str()) {
                return Err(EngineError::new(
                    ErrorCode(40415),
                    format!("BSON field 'collMod.{key}' is an unknown field."),
                ));
            }
        }
        for key in ["viewOn", "pipeline"] {
            if cmd.contains_key(key) {
                return Err(invalid(format!("option only supported on a view: {key}")));
            }
        }
        if cmd.contains_key("timeseries") {
            return Err(invalid(
                "option only supported on a time-series collection: timeseries",
            ));
        }
        if cmd.contains_key("expireAfterSeconds") {
            return Err(invalid(
                "'expireAfterSeconds' option is only supported on collections clustered by _id",
            ));
        }
        for key in [
            "changeStreamPreAndPostImages",
            "recordPreImages",
            "cappedSize",
            "cappedMax",
        ] {
            if cmd.contains_key(key) {
                return Err(EngineError::not_implemented(format!("collMod '{key}'")));
            }
        }
        let ns = format!("{db}.{coll}");
        self.write_existing(db, coll, |c| c.modify(&ns, cmd))
            .ok_or_else(|| ns_not_found(db, coll))?
    }
}
