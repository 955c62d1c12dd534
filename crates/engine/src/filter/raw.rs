//! Matching a stored record's raw BSON against a parsed filter, without
//! decoding it into a `Document` first.
//!
//! A collection scan examines every record and most of them do not match,
//! so building a `Document` for each (map inserts, key strings, allocation)
//! is most of a scan's cost. The raw matcher walks paths through the
//! record's bytes (`codec::walk`, which looks a field up without building
//! anything for the elements it passes) with the same traversal code as the
//! decoded matcher (`path::View` has both views) and brackets comparisons
//! by the stored
//! element type before touching the value: a string stored where the query
//! compares numbers is rejected from its type byte. Integers compared with
//! integers are compared in place; other values that need a comparison are
//! decoded one at a time (numbers without allocating) and
//! handed to the decoded matcher's own predicates (`compare_match`,
//! `Pred::matches_value`), so the semantics are the decoded matcher's, not
//! a copy of them. Predicates on whole sub-values that are rare in scans
//! (`$type`, `$size`, `$elemMatch`, `$mod`, bit tests) decode the value they
//! test; `$expr` and `$jsonSchema` read the whole document, so a filter
//! containing them is not matched raw at all ([`Filter::match_raw`] answers
//! `None` and the caller decodes the record).

use bson::spec::ElementType;
use bson::{Bson, RawDocument};

use super::path::{self, Candidate, visit_candidates};
use super::{CmpOp, Filter, MatchDetails, Node, Pred, bracket_mismatch, compare_match};
use super::{ordering_matches, value};
use crate::codec::walk::{self, Value};
use crate::collation::{Collation, compare_strings};
use crate::error::Result;

impl Node {
    /// Whether the raw matcher can evaluate this node: all but `$expr` and
    /// `$jsonSchema`, which read the decoded document.
    pub(super) fn raw_capable(&self) -> bool {
        match self {
            Node::And(c) | Node::Or(c) | Node::Nor(c) => c.iter().all(Node::raw_capable),
            Node::Path { .. } | Node::Const(_) => true,
            Node::Expr(_) | Node::Schema(_) => false,
        }
    }

    /// [`Node::eval`] on a raw document (for nodes that are
    /// [`Node::raw_capable`]); positions are reported the same way.
    fn eval_raw(&self, doc: walk::Doc<'_>, coll: Option<&Collation>) -> (bool, Option<usize>) {
        match self {
            Node::And(children) => {
                let mut pos = None;
                for child in children {
                    let (ok, p) = child.eval_raw(doc, coll);
                    if !ok {
                        return (false, None);
                    }
                    pos = p.or(pos);
                }
                (true, pos)
            }
            Node::Or(children) => (children.iter().any(|c| c.eval_raw(doc, coll).0), None),
            Node::Nor(children) => (!children.iter().any(|c| c.eval_raw(doc, coll).0), None),
            Node::Path { path, pred, .. } => pred.matches_path_raw(doc, path, coll),
            Node::Const(b) => (*b, None),
            // Not raw-capable: `Filter::match_raw` never gets here.
            Node::Expr(_) | Node::Schema(_) => (false, None),
        }
    }
}

/// Decode one raw value for a decoded predicate; malformed BSON marks the
/// match as undecided (see `path::take_malformed`).
fn decode(v: Value<'_>) -> Option<Bson> {
    path::malformed(v.decode())
}

/// The integer operand of a comparison, if it is one (int32 or int64).
fn int_operand(rhs: &Bson) -> Option<i64> {
    match rhs {
        Bson::Int32(n) => Some(i64::from(*n)),
        Bson::Int64(n) => Some(*n),
        _ => None,
    }
}

/// [`compare_match`] on a raw value: the type bracket is decided from the
/// element type, strings and integers are compared in place, and anything
/// else is decoded (numbers without allocating) and compared by
/// `compare_match`.
fn compare_match_raw(
    op: CmpOp,
    rhs: &Bson,
    v: Option<Value<'_>>,
    coll: Option<&Collation>,
) -> bool {
    let Some(v) = v else {
        return compare_match(op, rhs, None, coll);
    };
    if value::rank_of_type(v.element_type()) != value::canonical_rank(rhs) {
        return bracket_mismatch(op, rhs);
    }
    // Two integers: `compare_match` would find no NaN and compare them
    // exactly as integers (`value::compare_numbers`).
    if let (Some(x), Some(y)) = (v.as_int(), int_operand(rhs)) {
        return ordering_matches(op, x.cmp(&y));
    }
    match (v.as_str(), rhs) {
        (Some(x), Bson::String(y) | Bson::Symbol(y)) => {
            ordering_matches(op, compare_strings(x, y, coll))
        }
        _ => decode(v).is_some_and(|b| compare_match(op, rhs, Some(&b), coll)),
    }
}

impl Pred {
    /// [`Pred::matches_path`] on a raw document.
    fn matches_path_raw(
        &self,
        doc: walk::Doc<'_>,
        path: &[String],
        coll: Option<&Collation>,
    ) -> (bool, Option<usize>) {
        if let Pred::Not(inner) = self {
            let all = inner.iter().all(|p| p.matches_path_raw(doc, path, coll).0);
            return (!all, None);
        }
        let mut found = None;
        visit_candidates::<Value<'_>>(doc, path, self.expands_leaf(), &mut |c: Candidate<
            Value<'_>,
        >| {
            let (ok, inner_pos) = self.matches_raw(c.value, coll);
            if ok {
                found = Some(c.position.or(inner_pos));
            }
            ok
        });
        match found {
            Some(pos) => (true, pos),
            None => (false, None),
        }
    }

    /// [`Pred::matches_value`] on a raw value.
    fn matches_raw(&self, v: Option<Value<'_>>, coll: Option<&Collation>) -> (bool, Option<usize>) {
        let plain = |b: bool| (b, None);
        match self {
            Pred::Cmp(op, rhs) => plain(compare_match_raw(*op, rhs, v, coll)),
            Pred::In {
                values,
                patterns,
                sorted,
            } if patterns.is_empty() => match v {
                // A short list compares a string in place against each
                // operand.
                _ if sorted.is_none() && v.is_none_or(|raw| raw.as_str().is_some()) => plain(
                    values
                        .iter()
                        .any(|rhs| compare_match_raw(CmpOp::Eq, rhs, v, coll)),
                ),
                None => self.matches_value(None, coll),
                // Anything else is decoded once, not once per operand (an
                // `$in` of thousands of ids), and only when some operand
                // shares its type bracket: equality never crosses brackets.
                Some(raw) => {
                    let rank = value::rank_of_type(raw.element_type());
                    let bracket = |rhs: &Bson| value::canonical_rank(rhs) == rank;
                    let shared = match sorted {
                        // Sorted by type bracket first: a binary search.
                        Some(sorted) => sorted
                            .binary_search_by(|rhs| value::canonical_rank(rhs).cmp(&rank))
                            .is_ok(),
                        None => values.iter().any(bracket),
                    };
                    if !shared {
                        return plain(false);
                    }
                    match decode(raw) {
                        Some(b) => self.matches_value(Some(&b), coll),
                        None => plain(false),
                    }
                }
            },
            Pred::Regex(p) => match v {
                None => plain(false),
                Some(raw) => match raw.as_str() {
                    Some(s) => plain(p.is_match(s)),
                    None if raw.element_type() == ElementType::RegularExpression => {
                        self.matches_decoded(v, coll)
                    }
                    None => plain(false),
                },
            },
            Pred::Exists => plain(v.is_some()),
            Pred::Not(inner) => plain(!inner.iter().all(|p| p.matches_raw(v, coll).0)),
            Pred::Never => plain(false),
            _ => self.matches_decoded(v, coll),
        }
    }

    /// The decoded predicate on the value, decoded.
    fn matches_decoded(
        &self,
        v: Option<Value<'_>>,
        coll: Option<&Collation>,
    ) -> (bool, Option<usize>) {
        match v {
            None => self.matches_value(None, coll),
            Some(raw) => match decode(raw) {
                Some(b) => self.matches_value(Some(&b), coll),
                None => (false, None),
            },
        }
    }
}

impl Filter {
    /// Match a stored record's raw BSON, as [`Filter::match_details`] would
    /// match its decoded document. `None` when the raw matcher cannot
    /// answer (the filter reads the whole document, or the record is
    /// malformed): decode and call `match_details` instead.
    pub fn match_raw(&self, doc: &RawDocument) -> Result<Option<MatchDetails>> {
        if !self.raw {
            return Ok(None);
        }
        let (matched, pos) = self
            .root
            .eval_raw(walk::Doc::from_raw(doc), self.collation.as_ref());
        if path::take_malformed() {
            // A regex budget spent on a malformed record is the decoded
            // path's to report.
            let _ = crate::limits::take_pending();
            return Ok(None);
        }
        // A regex that ran out of budget deep in a predicate is an error,
        // not a non-match.
        crate::limits::take_pending()?;
        Ok(Some(MatchDetails {
            matched,
            array_position: if matched { pos } else { None },
        }))
    }
}
