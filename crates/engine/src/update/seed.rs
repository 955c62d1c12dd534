//! The document an upsert starts from: the equality conditions of the
//! filter (`{a: 1}`, `{a: {$eq: 1}}`, a one-element `$in`, and those inside a
//! top-level `$and`; a one-element `$in`/`$all`), with dotted paths expanded into embedded documents.

use bson::{Bson, Document};

use crate::error::{EngineError, ErrorCode, Result};

/// The document an upsert starts from: the filter's equality fields (dotted
/// paths expanded into subdocuments, `_id` first). Conflicting paths fail
/// as mongod does (NotSingleValueField, 54).
pub fn upsert_seed(filter: &Document) -> Result<Document> {
    let mut equalities: Vec<(String, Bson)> = Vec::new();
    collect(filter, &mut equalities);
    seed_from(equalities)
}

/// The seed of a replacement upsert: only `_id` comes from the filter.
pub fn id_seed(filter: &Document) -> Result<Document> {
    let mut equalities: Vec<(String, Bson)> = Vec::new();
    collect(filter, &mut equalities);
    equalities.retain(|(p, _)| p == "_id");
    seed_from(equalities)
}

fn seed_from(mut equalities: Vec<(String, Bson)>) -> Result<Document> {
    // mongod canonicalises the query (sorting its clauses by path) and keeps
    // the equalities in a path-ordered map: fields are added in that order
    // and conflicts are reported against the shorter, earlier path.
    equalities.sort_by(|a, b| a.0.cmp(&b.0));
    for (i, (p, _)) in equalities.iter().enumerate() {
        for (q, _) in &equalities[..i] {
            if p == q {
                return Err(EngineError::new(
                    ErrorCode::NOT_SINGLE_VALUE_FIELD,
                    format!("cannot infer query fields to set, path '{p}' is matched twice"),
                ));
            }
            if p.len() > q.len() && p.starts_with(q.as_str()) && p.as_bytes()[q.len()] == b'.' {
                return Err(EngineError::new(
                    ErrorCode::NOT_SINGLE_VALUE_FIELD,
                    format!(
                        "cannot infer query fields to set, both paths '{p}' and '{q}' are matched"
                    ),
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
                        // A one-element `$in` or `$all` is an equality once
                        // mongod has simplified the query.
                        ("$in" | "$all", Bson::Array(items))
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
