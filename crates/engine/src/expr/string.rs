//! String operators. mongod counts `$substrBytes`/`$indexOfBytes` in UTF-8
//! bytes and the `CP` variants in code points; both are kept apart here.

use bson::{Bson, Document};

use super::convert::to_string_value;
use super::{NamedVals, err, nullish, type_name};
use crate::error::Result;
use crate::value;

fn int_arg(v: Option<&Bson>) -> Option<i64> {
    v.filter(|b| value::is_number(b)).and_then(value::as_i64)
}

/// `$toUpper`/`$toLower`/`$substr` coerce numbers, dates and the like.
fn coerce(_op: &str, v: &Option<Bson>) -> Result<String> {
    match v {
        x if nullish(x.as_ref()) => Ok(String::new()),
        Some(Bson::String(s)) => Ok(s.clone()),
        Some(b) => to_string_value(b).ok_or_else(|| {
            err(
                16007,
                format!(
                    "can't convert from BSON type {} to String",
                    value::type_alias(b)
                ),
            )
        }),
        None => Ok(String::new()),
    }
}

/// mongod's 16 MiB limit on a string built by an expression (its
/// `RCString::create`, error 16493).
pub(super) fn check_string_len(len: usize) -> Result<()> {
    if len >= crate::limits::MAX_STRING_BYTES {
        return Err(err(16493, "Tried to create string longer than 16MB"));
    }
    Ok(())
}

pub(super) fn call(op: &str, vals: &[Option<Bson>]) -> Option<Result<Option<Bson>>> {
    Some(match op {
        "$concat" => {
            // Sized first, so that a string over mongod's limit is refused
            // before it is built.
            let total: usize = vals
                .iter()
                .map(|v| match v {
                    Some(Bson::String(s)) => s.len(),
                    _ => 0,
                })
                .sum();
            if let Err(e) = check_string_len(total)
                && vals.iter().all(|v| matches!(v, Some(Bson::String(_))))
            {
                return Some(Err(e));
            }
            let mut out = String::new();
            for v in vals {
                match v {
                    x if nullish(x.as_ref()) => return Some(Ok(Some(Bson::Null))),
                    Some(Bson::String(s)) => out.push_str(s),
                    other => {
                        return Some(Err(err(
                            16702,
                            format!(
                                "$concat only supports strings, not {}",
                                type_name(other.as_ref())
                            ),
                        )));
                    }
                }
            }
            Ok(Some(Bson::String(out)))
        }
        // mongod maps bytes with the C locale: only ASCII letters change.
        "$toUpper" => coerce(op, &vals[0]).map(|s| Some(Bson::String(s.to_ascii_uppercase()))),
        "$toLower" => coerce(op, &vals[0]).map(|s| Some(Bson::String(s.to_ascii_lowercase()))),
        "$substr" | "$substrBytes" => substr_bytes(op, vals),
        "$substrCP" => substr_cp(vals),
        "$strLenCP" | "$strLenBytes" => match &vals[0] {
            Some(Bson::String(s)) => {
                let n = if op == "$strLenCP" {
                    s.chars().count()
                } else {
                    s.len()
                };
                match i32::try_from(n) {
                    Ok(n) => Ok(Some(Bson::Int32(n))),
                    Err(_) => Err(err(
                        if op == "$strLenCP" { 34472 } else { 34470 },
                        "string length could not be represented as an int.",
                    )),
                }
            }
            other => Err(err(
                if op == "$strLenCP" { 34471 } else { 34473 },
                format!(
                    "{op} requires a string argument, found: {}",
                    type_name(other.as_ref())
                ),
            )),
        },
        "$split" => split(vals),
        "$indexOfBytes" | "$indexOfCP" => index_of(op, vals),
        "$strcasecmp" => {
            let a = coerce(op, &vals[0]).map(|s| s.to_uppercase());
            let b = coerce(op, &vals[1]).map(|s| s.to_uppercase());
            match (a, b) {
                (Ok(a), Ok(b)) => Ok(Some(Bson::Int32(match a.cmp(&b) {
                    std::cmp::Ordering::Less => -1,
                    std::cmp::Ordering::Equal => 0,
                    std::cmp::Ordering::Greater => 1,
                }))),
                (Err(e), _) | (_, Err(e)) => Err(e),
            }
        }
        _ => return None,
    })
}

fn substr_bytes(op: &str, vals: &[Option<Bson>]) -> Result<Option<Bson>> {
    let s = coerce(op, &vals[0])?;
    let start = int_arg(vals[1].as_ref()).ok_or_else(|| {
        err(
            16034,
            format!(
                "{op}:  starting index must be a numeric type (is BSON type {})",
                type_name(vals[1].as_ref())
            ),
        )
    })?;
    let len = int_arg(vals[2].as_ref()).ok_or_else(|| {
        err(
            16035,
            format!(
                "{op}:  length must be a numeric type (is BSON type {})",
                type_name(vals[2].as_ref())
            ),
        )
    })?;
    if start < 0 || start as usize >= s.len() {
        return Ok(Some(Bson::String(String::new())));
    }
    let start = start as usize;
    let end = if len < 0 {
        s.len()
    } else {
        start.saturating_add(len as usize).min(s.len())
    };
    if !s.is_char_boundary(start) {
        return Err(err(
            28656,
            format!("{op}:  Invalid range, starting index is a UTF-8 continuation byte."),
        ));
    }
    if !s.is_char_boundary(end) {
        return Err(err(
            28657,
            format!("{op}:  Invalid range, ending index is in the middle of a UTF-8 character."),
        ));
    }
    Ok(Some(Bson::String(s[start..end].to_string())))
}

fn substr_cp(vals: &[Option<Bson>]) -> Result<Option<Bson>> {
    let s = coerce("$substrCP", &vals[0])?;
    let start = match vals[1].as_ref() {
        Some(v) if value::is_number(v) => value::as_i64(v).ok_or_else(|| {
            err(
                34452,
                "$substrCP: starting index cannot be represented as a 32-bit integral value",
            )
        })?,
        other => {
            return Err(err(
                34450,
                format!(
                    "$substrCP: starting index must be a numeric type (is BSON type {})",
                    type_name(other)
                ),
            ));
        }
    };
    let len = match vals[2].as_ref() {
        Some(v) if value::is_number(v) => value::as_i64(v).ok_or_else(|| {
            err(
                34453,
                "$substrCP: length cannot be represented as a 32-bit integral value",
            )
        })?,
        other => {
            return Err(err(
                34451,
                format!(
                    "$substrCP: length must be a numeric type (is BSON type {})",
                    type_name(other)
                ),
            ));
        }
    };
    if start < 0 {
        return Err(err(
            34455,
            "$substrCP: the starting index must be nonnegative integer.",
        ));
    }
    if len < 0 {
        return Err(err(
            34454,
            "$substrCP: length must be a nonnegative integer.",
        ));
    }
    Ok(Some(Bson::String(
        s.chars().skip(start as usize).take(len as usize).collect(),
    )))
}

fn split(vals: &[Option<Bson>]) -> Result<Option<Bson>> {
    if nullish(vals[0].as_ref()) || nullish(vals[1].as_ref()) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::String(s)) = &vals[0] else {
        return Err(err(
            40085,
            format!(
                "$split requires an expression that evaluates to a string as a first argument, found: {}",
                type_name(vals[0].as_ref())
            ),
        ));
    };
    let Some(Bson::String(d)) = &vals[1] else {
        return Err(err(
            40086,
            format!(
                "$split requires an expression that evaluates to a string as a second argument, found: {}",
                type_name(vals[1].as_ref())
            ),
        ));
    };
    if d.is_empty() {
        return Err(err(40087, "$split requires a non-empty separator"));
    }
    // Sized as it grows: a 15 MB string split into single characters is
    // 15 million values, which stop at 16 MiB instead of being built.
    let mut size = crate::limits::Growing::default();
    let mut out = Vec::new();
    for p in s.split(d.as_str()) {
        size.add(p.len() as u64 + 5)?;
        out.push(Bson::String(p.to_string()));
    }
    Ok(Some(Bson::Array(out)))
}

fn index_of(op: &str, vals: &[Option<Bson>]) -> Result<Option<Bson>> {
    let s = match &vals[0] {
        x if nullish(x.as_ref()) => return Ok(Some(Bson::Null)),
        Some(Bson::String(s)) => s,
        other => {
            return Err(err(
                if op == "$indexOfBytes" { 40091 } else { 40093 },
                format!(
                    "{op} requires a string as the first argument, found: {}",
                    type_name(other.as_ref())
                ),
            ));
        }
    };
    let Some(Bson::String(needle)) = &vals[1] else {
        return Err(err(
            if op == "$indexOfBytes" { 40092 } else { 40094 },
            format!(
                "{op} requires a string as the second argument, found: {}",
                type_name(vals[1].as_ref())
            ),
        ));
    };
    let bound = |i: usize, default: usize| -> Result<usize> {
        match vals.get(i) {
            None => Ok(default),
            Some(v) => match int_arg(v.as_ref()) {
                Some(n) if n >= 0 => Ok(n as usize),
                Some(_) => Err(err(
                    40097,
                    format!("{op} requires a nonnegative start index"),
                )),
                None => Err(err(
                    40096,
                    format!(
                        "{op} requires an integral starting index, found a value of type: {}",
                        type_name(v.as_ref())
                    ),
                )),
            },
        }
    };
    if op == "$indexOfBytes" {
        let bytes = s.as_bytes();
        let start = bound(2, 0)?;
        let end = bound(3, bytes.len())?.min(bytes.len());
        let nb = needle.as_bytes();
        if start > end {
            return Ok(Some(Bson::Int32(-1)));
        }
        let found = (start..=end.saturating_sub(nb.len()))
            .filter(|&i| i + nb.len() <= end)
            .find(|&i| &bytes[i..i + nb.len()] == nb);
        Ok(Some(Bson::Int32(found.map_or(-1, |i| i as i32))))
    } else {
        let chars: Vec<char> = s.chars().collect();
        let nc: Vec<char> = needle.chars().collect();
        let start = bound(2, 0)?;
        let end = bound(3, chars.len())?.min(chars.len());
        if start > end {
            return Ok(Some(Bson::Int32(-1)));
        }
        let found = (start..=end)
            .filter(|&i| i + nc.len() <= end)
            .find(|&i| chars[i..i + nc.len()] == nc[..]);
        Ok(Some(Bson::Int32(found.map_or(-1, |i| i as i32))))
    }
}

fn regex_of(a: &NamedVals, op: &str) -> Result<Option<(regex::Regex, String)>> {
    let (pattern, mut flags) = match a.get("regex") {
        None | Some(Bson::Null | Bson::Undefined) => return Ok(None),
        Some(Bson::String(s)) => (s.clone(), String::new()),
        Some(Bson::RegularExpression(r)) => (r.pattern.clone(), r.options.clone()),
        Some(other) => {
            return Err(err(
                51105,
                format!(
                    "{op} needs 'regex' to be of type string or regex, found: {}",
                    value::type_alias(other)
                ),
            ));
        }
    };
    match a.get("options") {
        Some(Bson::String(o)) => {
            if !flags.is_empty() && !o.is_empty() {
                return Err(err(
                    51075,
                    format!("{op}: regex option(s) specified in both 'regex' and 'option' fields"),
                ));
            }
            flags.push_str(o);
        }
        None | Some(Bson::Null | Bson::Undefined) => {}
        Some(other) => {
            return Err(err(
                51106,
                format!(
                    "{op} needs 'options' to be of type string, found: {}",
                    value::type_alias(other)
                ),
            ));
        }
    }
    if pattern.contains('\0') {
        return Err(err(
            51109,
            format!("{op}: regular expression cannot contain an embedded null byte"),
        ));
    }
    if flags.contains('\0') {
        return Err(err(
            51110,
            format!("{op}: regular expression options cannot contain an embedded null byte"),
        ));
    }
    if pattern.len() > crate::filter::MAX_REGEX_PATTERN_BYTES {
        return Err(err(
            51111,
            format!(
                "Invalid Regex in {op}: pattern string is longer than the limit set by the application"
            ),
        ));
    }
    let mut builder = regex::RegexBuilder::new(&pattern);
    for f in flags.chars() {
        match f {
            'i' => {
                builder.case_insensitive(true);
            }
            'm' => {
                builder.multi_line(true);
            }
            's' => {
                builder.dot_matches_new_line(true);
            }
            'x' => {
                builder.ignore_whitespace(true);
            }
            'u' => {}
            other => {
                return Err(err(
                    51108,
                    format!("{op} invalid flag in regex options: {other}"),
                ));
            }
        }
    }
    let re = builder
        .build()
        .map_err(|e| err(51111, format!("Invalid Regex in {op}: {e}")))?;
    Ok(Some((re, flags)))
}

/// One match as `$regexFind` reports it; `idx` is the match's start in
/// characters.
fn match_doc(s: &str, m: &regex::Captures<'_>, idx: usize) -> Bson {
    let whole = m.get(0).map_or(0..0, |g| g.range());
    let idx = i32::try_from(idx).unwrap_or(i32::MAX);
    let captures: Vec<Bson> = m
        .iter()
        .skip(1)
        .map(|g| g.map_or(Bson::Null, |g| Bson::String(g.as_str().to_string())))
        .collect();
    let mut d = Document::new();
    d.insert("match", &s[whole]);
    d.insert("idx", idx);
    d.insert("captures", captures);
    Bson::Document(d)
}

/// Every match of `re` in `s`. Each match's character index is counted on
/// from the last one's, not from the start (which made a long input with
/// many matches quadratic), and each match is a checkpoint of the running
/// operation, so `maxTimeMS` and `killOp` stop a long search.
fn find_all(re: &regex::Regex, s: &str) -> Result<Vec<Bson>> {
    let mut out = Vec::new();
    let (mut byte, mut chars) = (0, 0);
    for m in re.captures_iter(s) {
        crate::limits::checkpoint()?;
        let start = m.get(0).map_or(0, |g| g.start());
        chars += s[byte..start].chars().count();
        byte = start;
        out.push(match_doc(s, &m, chars));
    }
    Ok(out)
}

pub(super) fn call_named(op: &str, a: &NamedVals) -> Option<Result<Option<Bson>>> {
    Some(match op {
        "$regexMatch" | "$regexFind" | "$regexFindAll" => (|| {
            if let Some(k) = a.unknown(&["input", "regex", "options"]) {
                return Err(err(31024, format!("{op} found an unknown field: {k}")));
            }
            let input = match a.get("input") {
                None | Some(Bson::Null | Bson::Undefined) => None,
                Some(Bson::String(s)) => Some(s.clone()),
                Some(other) => {
                    return Err(err(
                        51104,
                        format!(
                            "{op} needs 'input' to be of type string, found: {}",
                            value::type_alias(other)
                        ),
                    ));
                }
            };
            let re = regex_of(a, op)?;
            let (Some(s), Some((re, _))) = (input, re) else {
                return Ok(Some(match op {
                    "$regexMatch" => Bson::Boolean(false),
                    "$regexFind" => Bson::Null,
                    _ => Bson::Array(Vec::new()),
                }));
            };
            Ok(Some(match op {
                "$regexMatch" => Bson::Boolean(re.is_match(&s)),
                "$regexFind" => re.captures(&s).map_or(Bson::Null, |m| {
                    let start = m.get(0).map_or(0, |g| g.start());
                    match_doc(&s, &m, s[..start].chars().count())
                }),
                _ => Bson::Array(find_all(&re, &s)?),
            }))
        })(),
        "$trim" | "$ltrim" | "$rtrim" => (|| {
            if let Some(k) = a.unknown(&["input", "chars"]) {
                return Err(err(50694, format!("{op} found an unknown argument: {k}")));
            }
            if !a.has("input") {
                return Err(err(50695, format!("{op} requires an 'input' field")));
            }
            let s = match a.get("input") {
                None | Some(Bson::Null | Bson::Undefined) => return Ok(Some(Bson::Null)),
                Some(Bson::String(s)) => s.clone(),
                Some(other) => {
                    return Err(err(
                        50699,
                        format!(
                            "{op} requires its input to be a string, got {other} (of type {}) instead.",
                            value::type_alias(other)
                        ),
                    ));
                }
            };
            let chars: Option<Vec<char>> = match a.get("chars") {
                None if !a.has("chars") => None,
                None | Some(Bson::Null | Bson::Undefined) => return Ok(Some(Bson::Null)),
                Some(Bson::String(c)) => Some(c.chars().collect()),
                Some(other) => {
                    return Err(err(
                        50700,
                        format!(
                            "{op} requires 'chars' to be a string, got {other} (of type {}) instead.",
                            value::type_alias(other)
                        ),
                    ));
                }
            };
            let is_trim = |c: char| match &chars {
                Some(set) => set.contains(&c),
                // mongod's default set: whitespace and the null character.
                None => c.is_whitespace() || c == '\0',
            };
            let out = match op {
                "$trim" => s.trim_matches(is_trim),
                "$ltrim" => s.trim_start_matches(is_trim),
                _ => s.trim_end_matches(is_trim),
            };
            Ok(Some(Bson::String(out.to_string())))
        })(),
        "$replaceOne" | "$replaceAll" => (|| {
            let parts = ["input", "find", "replacement"];
            let mut strs = Vec::new();
            for p in parts {
                match a.get(p) {
                    None | Some(Bson::Null | Bson::Undefined) => return Ok(Some(Bson::Null)),
                    Some(Bson::String(s)) => strs.push(s.clone()),
                    Some(other) => {
                        return Err(err(
                            51746,
                            format!("{op} requires that '{p}' be a string, found: {other}"),
                        ));
                    }
                }
            }
            let hits = if strs[1].is_empty() {
                strs[0].chars().count() + 1
            } else {
                strs[0].matches(strs[1].as_str()).count()
            };
            let hits = if op == "$replaceOne" {
                hits.min(1)
            } else {
                hits
            };
            let len = strs[0]
                .len()
                .saturating_sub(hits.saturating_mul(strs[1].len()))
                .saturating_add(hits.saturating_mul(strs[2].len()));
            check_string_len(len)?;
            let out = if op == "$replaceOne" {
                strs[0].replacen(strs[1].as_str(), &strs[2], 1)
            } else {
                strs[0].replace(strs[1].as_str(), &strs[2])
            };
            Ok(Some(Bson::String(out)))
        })(),
        _ => return None,
    })
}

#[cfg(test)]
mod regex_tests {
    #![allow(clippy::unwrap_used)]
    use crate::expr::{Expr, Vars};
    use crate::limits::{Operation, run_as};
    use bson::{Bson, Document, doc};

    fn find_all(input: &str, regex: &str) -> crate::error::Result<Option<Bson>> {
        let e = doc! {"$regexFindAll": {"input": input, "regex": regex}};
        Expr::parse(&Bson::Document(e))?.eval(&Document::new(), &Vars::default())
    }

    /// Indexes are counted in characters, multi-byte ones included, and a
    /// long input with a match every few characters is answered in one
    /// pass; an operation whose time is up stops inside it with 50.
    #[test]
    fn find_all_counts_characters_in_one_pass_and_is_interruptible() {
        let got = find_all("é-b-éé-b", "b").unwrap().unwrap();
        let idx: Vec<i32> = got
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_document().unwrap().get_i32("idx").unwrap())
            .collect();
        assert_eq!(idx, [2, 7]);
        let long = "éb".repeat(200_000);
        let all = find_all(&long, "b").unwrap().unwrap();
        let all = all.as_array().unwrap();
        assert_eq!(all.len(), 200_000);
        let last = all[199_999].as_document().unwrap();
        assert_eq!(last.get_i32("idx").unwrap(), 399_999);
        let expired = Operation {
            deadline: Some(std::time::Instant::now()),
            ..Operation::default()
        };
        let e = run_as(expired, || find_all(&long, "b")).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::MAX_TIME_MS_EXPIRED);
    }
}
