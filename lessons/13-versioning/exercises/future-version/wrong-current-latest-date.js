// Mistake: "the current version is the newest one": the read takes the
// latest valid_from without asking whether it has started, so the
// scheduled 2030 version is shown as in force today.
db.policies.createIndex({policy_no: 1, valid_from: -1})

// @op current
db.policies.find({policy_no: policyNo}).sort({valid_from: -1}).limit(1)

// @op amend
const last = db.policies.find({policy_no: policyNo}).sort({valid_from: -1}).limit(1).toArray()[0]
db.policies.insertOne({policy_no: policyNo, version: last.version + 1, is_current: false, valid_from: new Date(at), valid_to: null, kind: last.kind, holder: last.holder, premium: 999, deductible: last.deductible})

// @op as_of
db.policies.find({policy_no: policyNo, valid_from: {$lte: when}}).sort({valid_from: -1}).limit(1)

// @op history
db.policies.find({policy_no: policyNo}).sort({valid_from: 1})
