//! The unified test format's value matching: special `$$` operators,
//! numeric equality across int/long/double, and the rule that only
//! root-level documents may carry fields the expectation does not name.

use bson::{Bson, Document};

/// Why a match failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Mismatch {
    /// The values differ; the message names the path.
    Differ(String),
    /// The expectation uses a matcher this runner does not implement.
    Unsupported(String),
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mismatch::Differ(m) | Mismatch::Unsupported(m) => f.write_str(m),
        }
    }
}

type MatchResult = Result<(), Mismatch>;

fn differ(path: &str, msg: impl std::fmt::Display) -> MatchResult {
    Err(Mismatch::Differ(format!(
        "at {}: {msg}",
        if path.is_empty() { "<root>" } else { path }
    )))
}

/// Matches `actual` (absent when `None`) against `expected`; `root` allows
/// extra fields in a document at this level (and only at this level).
pub fn matches(expected: &Bson, actual: Option<&Bson>, root: bool, path: &str) -> MatchResult {
    if let Some((op, arg)) = special_operator(expected) {
        return match_operator(op, arg, actual, root, path);
    }
    let Some(actual) = actual else {
        return differ(path, format!("missing, expected {expected}"));
    };
    match (expected, actual) {
        (Bson::Document(e), Bson::Document(a)) => match_document(e, a, root, path),
        (Bson::Document(_), _) => differ(
            path,
            format!("expected a document {expected}, got {actual}"),
        ),
        (Bson::Array(e), Bson::Array(a)) => {
            if e.len() != a.len() {
                return differ(
                    path,
                    format!("expected {} elements, got {}: {actual}", e.len(), a.len()),
                );
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                // Elements of a root-level array (a find result) are
                // themselves root-level documents.
                matches(ev, Some(av), root, &format!("{path}.{i}"))?;
            }
            Ok(())
        }
        (Bson::Array(_), _) => differ(path, format!("expected an array {expected}, got {actual}")),
        _ => {
            if scalar_equal(expected, actual) {
                Ok(())
            } else {
                differ(path, format!("expected {expected}, got {actual}"))
            }
        }
    }
}

/// Matches two documents, honouring per-key operators such as `$$exists`.
pub fn match_document(
    expected: &Document,
    actual: &Document,
    root: bool,
    path: &str,
) -> MatchResult {
    for (k, ev) in expected {
        let p = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}.{k}")
        };
        matches(ev, actual.get(k), false, &p)?;
    }
    if !root && let Some(extra) = actual.keys().find(|k| !expected.contains_key(*k)) {
        return differ(path, format!("unexpected field {extra:?} in {actual}"));
    }
    Ok(())
}

const OPERATORS: &[&str] = &[
    "$$exists",
    "$$type",
    "$$unsetOrMatches",
    "$$matchesEntity",
    "$$matchesHexBytes",
    "$$sessionLsid",
    "$$lte",
    "$$matchAsDocument",
    "$$matchAsRoot",
];

/// A document `{ "$$op": arg }` naming a known operator. Other `$$` keys
/// (`$$ROOT`, `let` variables) are ordinary values.
fn special_operator(expected: &Bson) -> Option<(&str, &Bson)> {
    let Bson::Document(d) = expected else {
        return None;
    };
    if d.len() != 1 {
        return None;
    }
    let (k, v) = d.iter().next()?;
    OPERATORS.contains(&k.as_str()).then_some((k.as_str(), v))
}

fn match_operator(
    op: &str,
    arg: &Bson,
    actual: Option<&Bson>,
    root: bool,
    path: &str,
) -> MatchResult {
    match op {
        "$$exists" => {
            let want = arg.as_bool().unwrap_or(true);
            if want == actual.is_some() {
                Ok(())
            } else if want {
                differ(path, "expected the field to exist")
            } else {
                differ(
                    path,
                    format!(
                        "expected no field, got {}",
                        actual.cloned().unwrap_or(Bson::Null)
                    ),
                )
            }
        }
        "$$type" => {
            let Some(actual) = actual else {
                return differ(path, format!("missing, expected type {arg}"));
            };
            let names: Vec<&str> = match arg {
                Bson::String(s) => vec![s.as_str()],
                Bson::Array(a) => a.iter().filter_map(Bson::as_str).collect(),
                _ => return Err(Mismatch::Unsupported(format!("$$type argument {arg}"))),
            };
            let actual_type = type_name(actual);
            let ok = names.iter().any(|n| {
                *n == actual_type
                    || (*n == "number"
                        && matches!(actual_type, "int" | "long" | "double" | "decimal"))
            });
            if ok {
                Ok(())
            } else {
                differ(
                    path,
                    format!("expected type {arg}, got {actual_type} ({actual})"),
                )
            }
        }
        "$$unsetOrMatches" => match actual {
            None => Ok(()),
            Some(a) => matches(arg, Some(a), root, path),
        },
        "$$lte" => {
            let (Some(e), Some(a)) = (as_f64(arg), actual.and_then(as_f64)) else {
                return differ(path, format!("$$lte needs numbers, got {actual:?}"));
            };
            if a <= e {
                Ok(())
            } else {
                differ(path, format!("{a} > {e}"))
            }
        }
        "$$matchAsRoot" => matches(arg, actual, true, path),
        "$$matchAsDocument" => {
            let Some(Bson::String(s)) = actual else {
                return differ(path, "$$matchAsDocument needs a string");
            };
            let parsed = serde_json::from_str::<serde_json::Value>(s)
                .ok()
                .and_then(|v| Bson::try_from(v).ok());
            match parsed {
                Some(doc @ Bson::Document(_)) => matches(arg, Some(&doc), false, path),
                _ => differ(path, "not a JSON document"),
            }
        }
        other => Err(Mismatch::Unsupported(format!("matcher {other}"))),
    }
}

/// The `$type` alias of a value.
pub fn type_name(v: &Bson) -> &'static str {
    match v {
        Bson::Double(_) => "double",
        Bson::String(_) => "string",
        Bson::Document(_) => "object",
        Bson::Array(_) => "array",
        Bson::Binary(_) => "binData",
        Bson::Undefined => "undefined",
        Bson::ObjectId(_) => "objectId",
        Bson::Boolean(_) => "bool",
        Bson::DateTime(_) => "date",
        Bson::Null => "null",
        Bson::RegularExpression(_) => "regex",
        Bson::DbPointer(_) => "dbPointer",
        Bson::JavaScriptCode(_) => "javascript",
        Bson::Symbol(_) => "symbol",
        Bson::JavaScriptCodeWithScope(_) => "javascriptWithScope",
        Bson::Int32(_) => "int",
        Bson::Timestamp(_) => "timestamp",
        Bson::Int64(_) => "long",
        Bson::Decimal128(_) => "decimal",
        Bson::MinKey => "minKey",
        Bson::MaxKey => "maxKey",
    }
}

fn as_f64(v: &Bson) -> Option<f64> {
    match v {
        Bson::Int32(i) => Some(f64::from(*i)),
        // Precision loss beyond 2^53 is irrelevant to the counts compared here.
        #[allow(clippy::cast_precision_loss)]
        Bson::Int64(i) => Some(*i as f64),
        Bson::Double(d) => Some(*d),
        _ => None,
    }
}

/// Equality of non-container values; int, long and double compare by value.
fn scalar_equal(e: &Bson, a: &Bson) -> bool {
    match (e, a) {
        (Bson::Int32(_) | Bson::Int64(_), Bson::Int32(_) | Bson::Int64(_)) => {
            let x = match e {
                Bson::Int32(i) => i64::from(*i),
                Bson::Int64(i) => *i,
                _ => return false,
            };
            let y = match a {
                Bson::Int32(i) => i64::from(*i),
                Bson::Int64(i) => *i,
                _ => return false,
            };
            x == y
        }
        (
            Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_),
            Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_),
        ) => as_f64(e) == as_f64(a),
        _ => e == a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{Bson, doc};

    fn m(e: Bson, a: Option<Bson>, root: bool) -> bool {
        matches(&e, a.as_ref(), root, "").is_ok()
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(m(Bson::Int32(1), Some(Bson::Int64(1)), true));
        assert!(m(Bson::Int32(1), Some(Bson::Double(1.0)), true));
        assert!(!m(Bson::Int32(1), Some(Bson::Double(1.5)), true));
        assert!(!m(Bson::Int32(1), Some(Bson::String("1".into())), true));
    }

    #[test]
    fn extra_fields_only_at_root() {
        let e = Bson::Document(doc! {"_id": 1, "a": {"b": 1}});
        assert!(m(
            e.clone(),
            Some(doc! {"_id": 1, "a": {"b": 1}, "x": 2}.into()),
            true
        ));
        assert!(!m(
            e.clone(),
            Some(doc! {"_id": 1, "a": {"b": 1, "c": 2}}.into()),
            true
        ));
        assert!(!m(
            e,
            Some(doc! {"_id": 1, "a": {"b": 1}, "x": 2}.into()),
            false
        ));
        // Documents inside a root-level array are root-level.
        let arr = Bson::Array(vec![doc! {"_id": 1}.into()]);
        assert!(m(
            arr.clone(),
            Some(Bson::Array(vec![doc! {"_id": 1, "x": 1}.into()])),
            true
        ));
        assert!(!m(arr, Some(Bson::Array(vec![])), true));
    }

    #[test]
    fn operators() {
        let e = Bson::Document(doc! {"a": {"$$exists": false}, "b": {"$$exists": true}});
        assert!(m(e.clone(), Some(doc! {"b": 1}.into()), true));
        assert!(!m(e.clone(), Some(doc! {"a": 1, "b": 1}.into()), true));
        assert!(!m(e, Some(doc! {}.into()), true));
        let t = Bson::Document(doc! {"n": {"$$type": ["int", "long"]}});
        assert!(m(t.clone(), Some(doc! {"n": 5_i64}.into()), true));
        assert!(!m(t, Some(doc! {"n": 5.0}.into()), true));
        let u = Bson::Document(doc! {"$$unsetOrMatches": {"insertedId": 1}});
        assert!(m(u.clone(), None, true));
        assert!(m(u.clone(), Some(doc! {"insertedId": 1}.into()), true));
        assert!(!m(u, Some(doc! {"insertedId": 2}.into()), true));
        // `$$ROOT` is an aggregation variable, not a matcher.
        let root = Bson::Document(doc! {"$$ROOT": 1});
        assert!(m(root, Some(doc! {"$$ROOT": 1}.into()), false));
        let lsid = Bson::Document(doc! {"$$sessionLsid": "s"});
        assert!(matches!(
            matches(&lsid, None, true, ""),
            Err(Mismatch::Unsupported(_))
        ));
    }
}
