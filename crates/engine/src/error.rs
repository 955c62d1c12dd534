//! Errors of the embedded engine, shaped like mongod's.
//!
//! Every failure the engine reports carries the numeric `code` and `codeName` a
//! real mongod would send for the same mistake, so drivers and learners see the
//! familiar error (`E11000 duplicate key …`, `BSONObjectTooLarge`, …). The wire
//! layer turns an [`EngineError`] into `{ok: 0, errmsg, code, codeName}` or a
//! `writeErrors` entry without having to know what went wrong.

use bson::Document;

/// A MongoDB error code with its `codeName`.
///
/// A newtype rather than an enum: mongod has hundreds of codes, most of them
/// "Location" codes that are only ever named by number, and the engine needs to
/// produce a handful of each kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    pub const INTERNAL_ERROR: Self = Self(1);
    pub const BAD_VALUE: Self = Self(2);
    pub const NO_SUCH_KEY: Self = Self(4);
    pub const FAILED_TO_PARSE: Self = Self(9);
    pub const UNAUTHORIZED: Self = Self(13);
    pub const TYPE_MISMATCH: Self = Self(14);
    pub const OVERFLOW: Self = Self(15);
    pub const ILLEGAL_OPERATION: Self = Self(20);
    pub const NAMESPACE_NOT_FOUND: Self = Self(26);
    pub const INDEX_NOT_FOUND: Self = Self(27);
    pub const PATH_NOT_VIABLE: Self = Self(28);
    pub const CONFLICTING_UPDATE_OPERATORS: Self = Self(40);
    pub const CURSOR_NOT_FOUND: Self = Self(43);
    pub const NAMESPACE_EXISTS: Self = Self(48);
    pub const DOLLAR_PREFIXED_FIELD_NAME: Self = Self(52);
    pub const INVALID_ID_FIELD: Self = Self(53);
    pub const NOT_SINGLE_VALUE_FIELD: Self = Self(54);
    pub const EMPTY_FIELD_NAME: Self = Self(56);
    pub const COMMAND_NOT_FOUND: Self = Self(59);
    pub const IMMUTABLE_FIELD: Self = Self(66);
    pub const CANNOT_CREATE_INDEX: Self = Self(67);
    pub const INDEX_ALREADY_EXISTS: Self = Self(68);
    pub const INVALID_OPTIONS: Self = Self(72);
    pub const INVALID_NAMESPACE: Self = Self(73);
    pub const INDEX_OPTIONS_CONFLICT: Self = Self(85);
    pub const INDEX_KEY_SPECS_CONFLICT: Self = Self(86);
    pub const OPERATION_FAILED: Self = Self(96);
    /// A yielding operation whose collection was dropped or renamed under it.
    pub const QUERY_PLAN_KILLED: Self = Self(175);
    pub const DOCUMENT_VALIDATION_FAILURE: Self = Self(121);
    pub const NOT_IMPLEMENTED: Self = Self(238);
    pub const INVALID_PIPELINE_OPERATOR: Self = Self(168);
    pub const INVALID_INDEX_SPECIFICATION_OPTION: Self = Self(197);
    pub const CANNOT_INDEX_PARALLEL_ARRAYS: Self = Self(171);
    pub const MAX_TIME_MS_EXPIRED: Self = Self(50);
    pub const EXCEEDED_MEMORY_LIMIT: Self = Self(146);
    pub const CLIENT_DISCONNECT: Self = Self(279);
    pub const INTERRUPTED: Self = Self(11601);
    pub const NO_QUERY_EXECUTION_PLANS: Self = Self(291);
    pub const QUERY_EXCEEDED_MEMORY_LIMIT: Self = Self(292);
    pub const UNSUPPORTED_OP_QUERY_COMMAND: Self = Self(352);
    pub const BSON_OBJECT_TOO_LARGE: Self = Self(10334);
    pub const DUPLICATE_KEY: Self = Self(11000);
    /// `$merge` with `whenMatched: "fail"` found a match.
    pub const MERGE_STAGE_NO_MATCHING_DOCUMENT: Self = Self(13113);
    /// Unrecognized pipeline stage name.
    pub const UNRECOGNIZED_STAGE: Self = Self(40324);

    /// The numeric code.
    pub fn code(self) -> i32 {
        self.0
    }

    /// The `codeName` mongod sends with this code (`Location<code>` for codes
    /// that have no symbolic name).
    pub fn name(self) -> String {
        let named = match self.0 {
            1 => "InternalError",
            2 => "BadValue",
            4 => "NoSuchKey",
            9 => "FailedToParse",
            13 => "Unauthorized",
            14 => "TypeMismatch",
            15 => "Overflow",
            20 => "IllegalOperation",
            26 => "NamespaceNotFound",
            27 => "IndexNotFound",
            28 => "PathNotViable",
            40 => "ConflictingUpdateOperators",
            43 => "CursorNotFound",
            48 => "NamespaceExists",
            52 => "DollarPrefixedFieldName",
            53 => "InvalidIdField",
            54 => "NotSingleValueField",
            56 => "EmptyFieldName",
            59 => "CommandNotFound",
            66 => "ImmutableField",
            67 => "CannotCreateIndex",
            68 => "IndexAlreadyExists",
            72 => "InvalidOptions",
            73 => "InvalidNamespace",
            85 => "IndexOptionsConflict",
            86 => "IndexKeySpecsConflict",
            96 => "OperationFailed",
            121 => "DocumentValidationFailure",
            168 => "InvalidPipelineOperator",
            171 => "CannotIndexParallelArrays",
            175 => "QueryPlanKilled",
            197 => "InvalidIndexSpecificationOption",
            224 => "QueryFeatureNotAllowed",
            238 => "NotImplemented",
            241 => "ConversionFailure",
            50 => "MaxTimeMSExpired",
            146 => "ExceededMemoryLimit",
            279 => "ClientDisconnect",
            11601 => "Interrupted",
            291 => "NoQueryExecutionPlans",
            292 => "QueryExceededMemoryLimitNoDiskUseAllowed",
            352 => "UnsupportedOpQueryCommand",
            10334 => "BSONObjectTooLarge",
            11000 => "DuplicateKey",
            13113 => "MergeStageNoMatchingDocument",
            other => return format!("Location{other}"),
        };
        named.to_string()
    }
}

/// An error the engine reports to its caller, with mongod's code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct EngineError {
    /// mongod's code for this failure.
    pub code: ErrorCode,
    /// The human-readable `errmsg`.
    pub message: String,
    /// Extra fields mongod attaches (`keyPattern`/`keyValue` for duplicate
    /// keys, `errInfo` for validation failures).
    pub info: Option<Document>,
}

impl EngineError {
    /// An error with `code` and `message` and nothing else.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            info: None,
        }
    }

    /// `BadValue` (2), the most common complaint about a malformed request.
    pub fn bad_value(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BAD_VALUE, message)
    }

    /// `FailedToParse` (9).
    pub fn failed_to_parse(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::FAILED_TO_PARSE, message)
    }

    /// `TypeMismatch` (14).
    pub fn type_mismatch(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::TYPE_MISMATCH, message)
    }

    /// A feature that mongod has and the embedded engine does not.
    pub fn not_implemented(what: impl Into<String>) -> Self {
        Self::new(
            ErrorCode::NOT_IMPLEMENTED,
            format!(
                "{} is not supported by schemalab's embedded engine (see COMPAT.md)",
                what.into()
            ),
        )
    }

    /// Attach mongod's extra error fields.
    pub fn with_info(mut self, info: Document) -> Self {
        self.info = Some(info);
        self
    }

    /// The `codeName`.
    pub fn code_name(&self) -> String {
        self.code.name()
    }
}

/// Result alias used throughout the engine.
pub type Result<T> = std::result::Result<T, EngineError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_and_location_codes() {
        assert_eq!(ErrorCode::DUPLICATE_KEY.name(), "DuplicateKey");
        assert_eq!(ErrorCode::UNRECOGNIZED_STAGE.name(), "Location40324");
        let e = EngineError::not_implemented("$text");
        assert_eq!(e.code.code(), 238);
        assert!(e.message.contains("$text"));
    }
}
