// Mistake: 'in force at a date' read as the first version starting on or
// after it, instead of the latest one starting not after it.
// `current` holds the version in force, keyed by policy number; `policies`
// stays the full history, scheduled versions included.
db.policies.aggregate([{$match: {is_current: true}}, {$set: {_id: "$policy_no"}}, {$out: "current"}])
db.policies.createIndex({policy_no: 1, valid_from: -1})
db.prices.drop()

// @op current
db.current.findOne({_id: policyNo})

// @op amend
const cur = db.current.findOne({_id: policyNo})
db.policies.insertOne({policy_no: policyNo, version: cur.version + 1, is_current: false, valid_from: new Date(at), valid_to: null, kind: cur.kind, holder: cur.holder, premium: 999, deductible: cur.deductible})

// @op as_of
db.policies.find({policy_no: policyNo, valid_from: {$gte: when}}).sort({valid_from: 1}).limit(1)

// @op history
db.policies.find({policy_no: policyNo}).sort({valid_from: 1})
