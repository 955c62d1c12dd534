// The version in force goes to `current`, keyed by policy number; every
// superseded version goes to `archive`.
db.policies.aggregate([
  {$match: {valid_to: null}},
  {$set: {_id: "$policy_no"}},
  {$out: "current"}
])
db.policies.aggregate([
  {$match: {valid_to: {$ne: null}}},
  {$out: "archive"}
])
db.policies.drop()
db.prices.drop()
db.current.createIndex({kind: 1})
db.archive.createIndex({policy_no: 1, valid_from: -1})
