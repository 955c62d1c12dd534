//! The document an upsert starts from: the equality conditions of the
//! filter (`{a: 1}`, `{a: {$eq: 1}}`, a one-element `$in`, and those inside a
//! top-level `$and`), with dotted paths expanded into embedded documents.

use bson::{Bson, Document};

use crate::engine::error::{EngineError, ErrorCode, Result};

/// The document an upsert starts from: the filter's equality fields (dotted
/// paths expanded into subdocuments, `_id` first). Conflicting paths fail
/// as mongod does (NotSingleValueField, 54).
pub fn upsert_seed(filter: &Document) -> Result<Document> {
    let mut equalities: Vec<(String, Bson)> = Vec::new();
    collect(filter, &mut equalities);
    for (i, (p, _)) in equalities.iter().enumerate() {
        for (q, _) in &equalities[..i] {
            if p == q {
                return Err(EngineError::new(
                    ErrorCode::NOT_SINGLE_VALUE_FIELD,
                    format!("cannot infer query fields to set, path '{p}' is matched twice"),
                ));
            }
            let nested = |a: &str, b: &str| b.len() > a.len() && b.starts_with(a) && b.as_bytes()[a.len()] == b'.';
            if nested(p, q) || nested(q, p) {
                return Err(EngineError::new(
                    ErrorCode::NOT_SINGLE_VALUE_FIELD,
                    format!("cannot infer query fields to set, both paths '{q}' and '{p}' are matched"),
                ));
            }
        }
    }
    let mut seed = Document::new();
    // mongod stores `_id` first; put an `_id` condition there from the start.
    if let Some(pos) = equalities.iter().position(|(p, _)| p == "_id") {
        let (p, v) = equalities.remove(pos);
        seed.insert(p, v);
    }
    for (path, value) in equalities {
        insert_path(&mut seed, &path, value)?;
    }
    Ok(seed)
}

fn collect(filter: &Document, out: &mut Vec<(String, Bson)>) {
    for (key, value) in filter {
        if key == "$and" {
            if let Bson::Array(clauses) = value {
                for c in clauses {
                    if let Bson::Document(d) = c {
                        collect(d, out);
                    }
                }
            }
            continue;
        }
        if key.starts_with('$') {
            continue;
        }
        match value {
            Bson::Document(d) if d.keys().next().is_some_and(|k| k.starts_with('$')) => {
                for (op, arg) in d {
                    match (op.as_str(), arg) {
                        ("$eq", v) if !matches!(v, Bson::RegularExpression(_)) => {
                            out.push((key.clone(), v.clone()));
                        }
                        ("$in", Bson::Array(items))
                            if items.len() == 1
                                && !matches!(items[0], Bson::RegularExpression(_)) =>
                        {
                            out.push((key.clone(), items[0].clone()));
                        }
                        _ => {}
                    }
                }
            }
            Bson::RegularExpression(_) => {}
            v => out.push((key.clone(), v.clone())),
        }
    }
}

fn insert_path(doc: &mut Document, path: &str, value: Bson) -> Result<()> {
    match path.split_once('.') {
        None => {
            doc.insert(path, value);
            Ok(())
        }
        Some((head, rest)) => {
            let entry = doc
                .entry(head.to_string())
                .or_insert_with(|| Bson::Document(Document::new()));
            match entry {
                Bson::Document(sub) => insert_path(sub, rest, value),
                _ => Err(EngineError::new(
                    ErrorCode::NOT_SINGLE_VALUE_FIELD,
                    format!("cannot infer query fields to set, path '{path}' is matched twice"),
                )),
            }
        }
    }
}
