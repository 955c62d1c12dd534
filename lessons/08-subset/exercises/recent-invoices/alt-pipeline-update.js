// An alternative correct design, written apart from the reference: the
// subset holds only what the page shows (number and date), the reads are
// aggregations, and a new invoice is prepended by a pipeline update that
// cuts the array back to five.
db.invoices.createIndex({customer_id: 1, issued_at: -1, number: 1})
db.invoices.aggregate([
  {$sort: {customer_id: 1, issued_at: -1}},
  {$group: {_id: "$customer_id", recent_invoices: {$firstN: {n: 5, input: {number: "$number", issued_at: "$issued_at"}}}}},
  {$merge: {into: "customers", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])

// @op account
db.customers.aggregate([{$match: {_id: customerId}}, {$project: {recent_invoices: 1}}])

// @op history
db.invoices.aggregate([{$match: {customer_id: customerId}}, {$sort: {issued_at: -1}}, {$project: {_id: 0, number: 1, issued_at: 1}}])

// @op new_invoice
db.invoices.insertMany([{customer_id: customerId, number: "INV-NEW-" + n, issued_at: new Date(at), amount: 10, status: "issued"}])
db.customers.updateOne({_id: customerId}, [{$set: {recent_invoices: {$slice: [{$concatArrays: [[{number: "INV-NEW-" + n, issued_at: new Date(at)}], "$recent_invoices"]}, 5]}}}])
