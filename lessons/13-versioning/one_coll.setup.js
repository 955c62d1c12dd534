// Every version side by side. valid_to is null for the version in force.
db.policies.createIndex({policy_no: 1, valid_from: -1})
// The "now" read asks for policy_no with valid_to: null: a competent
// engineer indexes exactly that.
db.policies.createIndex({policy_no: 1, valid_to: 1})
db.policies.createIndex({kind: 1, valid_to: 1})
db.prices.drop()
