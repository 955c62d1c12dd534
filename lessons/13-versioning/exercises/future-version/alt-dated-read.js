// An alternative correct design, written apart from the reference: no
// second collection; the version in force at a date is always the
// history entry with the latest valid_from not after it, read through one
// index, "today" included.
db.policies.createIndex({policy_no: 1, valid_from: -1})

// @op current
db.policies.find({policy_no: policyNo, valid_from: {$lte: today}}).sort({valid_from: -1}).limit(1)

// @op amend
const last = db.policies.find({policy_no: policyNo}).sort({valid_from: -1}).limit(1).toArray()[0]
db.policies.insertOne({policy_no: policyNo, version: last.version + 1, is_current: false, valid_from: new Date(at), valid_to: null, kind: last.kind, holder: last.holder, premium: 999, deductible: last.deductible, terms: last.terms, change_reason: "scheduled"})

// @op as_of
db.policies.find({policy_no: policyNo, valid_from: {$lte: when}}).sort({valid_from: -1}).limit(1)

// @op history
db.policies.find({policy_no: policyNo}, {version: 1, valid_from: 1}).sort({valid_from: 1})
