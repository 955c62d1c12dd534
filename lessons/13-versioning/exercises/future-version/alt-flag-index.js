// An alternative correct design, written apart from the reference: one
// collection; the version in force keeps its is_current flag, an index on
// {policy_no, is_current} finds it in one document, and a scheduled version
// is stored unflagged until its day comes.
db.policies.createIndex({policy_no: 1, is_current: 1})
db.policies.createIndex({policy_no: 1, valid_from: 1})

// @op current
db.policies.find({policy_no: policyNo, is_current: true}, {policy_no: 1, version: 1, premium: 1, valid_from: 1})

// @op amend
const now = db.policies.findOne({policy_no: policyNo, is_current: true})
db.policies.insertOne({policy_no: policyNo, version: now.version + 1, premium: 999, valid_from: new Date(at), valid_to: null, is_current: false, kind: now.kind, holder: now.holder})

// @op as_of
db.policies.aggregate([
  {$match: {policy_no: policyNo, valid_from: {$lte: when}}},
  {$sort: {valid_from: -1}},
  {$limit: 1},
  {$project: {version: 1, premium: 1}}
])

// @op history
db.policies.aggregate([{$match: {policy_no: policyNo}}, {$sort: {valid_from: 1}}, {$project: {_id: 0, version: 1}}])
