//! mongod's `toString` rendering of BSON values, as its error messages show
//! them (`{a: 1}`, `{ $set: { a: 1 } }`, `[ 1, 2 ]`), so our messages read
//! exactly like the server's.

use bson::Bson;

/// A value as mongod prints it inside error messages.
pub fn value(v: &Bson) -> String {
    match v {
        Bson::Int32(n) => n.to_string(),
        Bson::Int64(n) => n.to_string(),
        Bson::Double(d) => double(*d),
        Bson::Decimal128(d) => format!("NumberDecimal(\"{d}\")"),
        Bson::String(s) | Bson::Symbol(s) => format!("\"{s}\""),
        Bson::Boolean(b) => b.to_string(),
        Bson::Null => "null".into(),
        Bson::Undefined => "undefined".into(),
        Bson::MinKey => "MinKey".into(),
        Bson::MaxKey => "MaxKey".into(),
        Bson::ObjectId(o) => format!("ObjectId('{o}')"),
        Bson::DateTime(d) => format!("new Date({})", d.timestamp_millis()),
        Bson::Timestamp(t) => format!("Timestamp({}, {})", t.time, t.increment),
        Bson::RegularExpression(r) => format!("/{}/{}", r.pattern, r.options),
        Bson::Document(d) => {
            if d.is_empty() {
                return "{}".into();
            }
            let parts: Vec<String> = d.iter().map(|(k, v)| element(k, v)).collect();
            format!("{{ {} }}", parts.join(", "))
        }
        Bson::Array(a) => {
            if a.is_empty() {
                return "[]".into();
            }
            let parts: Vec<String> = a.iter().map(value).collect();
            format!("[ {} ]", parts.join(", "))
        }
        Bson::Binary(b) => {
            let hex: String = b.bytes.iter().map(|x| format!("{x:02X}")).collect();
            format!("BinData({}, {hex})", u8::from(b.subtype))
        }
        other => format!("{other}"),
    }
}

/// An element (`name: value`), as `BSONElement::toString` prints it.
pub fn element(name: &str, v: &Bson) -> String {
    format!("{name}: {}", value(v))
}

/// The `{_id: …}` (or `{no id}`) mongod appends to per-document errors.
pub fn id_braced(id: Option<&Bson>) -> String {
    match id {
        Some(v) => format!("{{{}}}", element("_id", v)),
        None => "{no id}".into(),
    }
}

fn double(d: f64) -> String {
    if d.is_nan() {
        "nan".into()
    } else if d.is_infinite() {
        if d > 0.0 { "inf".into() } else { "-inf".into() }
    } else if d.fract() == 0.0 && d.abs() < 1e16 {
        format!("{d:.1}")
    } else {
        d.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    #[test]
    fn renders_like_mongod() {
        let u = Bson::Document(doc! {"$set": {"a": 1, "b": [1, "x"], "c": {}}});
        assert_eq!(value(&u), "{ $set: { a: 1, b: [ 1, \"x\" ], c: {} } }");
        assert_eq!(element("a", &Bson::Double(2.0)), "a: 2.0");
        assert_eq!(id_braced(None), "{no id}");
    }
}
