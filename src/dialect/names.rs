//! Database names as mongod admits them, checked where the shell takes a
//! name from the user (`use <db>`, `db.getSiblingDB(name)`, `--db`), so a
//! bad name is refused at the place it was typed, with mongod's own error,
//! instead of on the first command sent there.

use super::DialectError;

/// The longest database name mongod accepts, in bytes.
pub const MAX_DB_NAME_BYTES: usize = 63;

/// mongod's error code and name for a bad namespace.
const INVALID_NAMESPACE: (i32, &str) = (73, "InvalidNamespace");

/// Whether mongod (on Linux and macOS) accepts `name` as a database name:
/// not empty, at most 63 bytes, and none of `/ \ . " $`, a space or NUL
/// (the MongoDB manual's "Restrictions on Database Names for Unix and Linux
/// Systems"). Hyphens, digits first, non-ASCII letters are all fine.
pub fn is_valid_db_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_DB_NAME_BYTES
        && !name.contains(['/', '\\', '.', ' ', '"', '$', '\0'])
}

/// [`is_valid_db_name`], failing with the error mongod gives for a command
/// sent to such a database:
/// `MongoServerError[InvalidNamespace]: Invalid database name: 'a.b'`.
pub fn check_db_name(name: &str) -> Result<(), DialectError> {
    if is_valid_db_name(name) {
        return Ok(());
    }
    let (code, code_name) = INVALID_NAMESPACE;
    Err(DialectError::server(
        code,
        code_name,
        format!("Invalid database name: '{name}'"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mongod_rules() {
        for ok in [
            "schemalab_one-to-few_embedded",
            "test",
            "1st",
            "données",
            "a'b",
            "a-b+c@d",
            &"x".repeat(63),
        ] {
            assert!(is_valid_db_name(ok), "{ok}");
        }
        for bad in [
            "",
            "a.b",
            "a/b",
            "a\\b",
            "a b",
            "a\"b",
            "a$b",
            "a\0b",
            &"x".repeat(64),
        ] {
            assert!(!is_valid_db_name(bad), "{bad:?}");
        }
        // Bytes, not characters: 32 two-byte letters are 64 bytes.
        assert!(!is_valid_db_name(&"é".repeat(32)));
        assert_eq!(
            check_db_name("a.b").unwrap_err().to_string(),
            "MongoServerError[InvalidNamespace]: Invalid database name: 'a.b'"
        );
    }
}
