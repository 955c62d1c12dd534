// Mistake: the subset is right, but the history relies on there being
// "only a few invoices per customer" and has no index: every history read
// scans all invoices.
db.invoices.aggregate([
  {$sort: {issued_at: -1}},
  {$group: {_id: "$customer_id", recent_invoices: {$push: {number: "$number", issued_at: "$issued_at", amount: "$amount", status: "$status"}}}},
  {$set: {recent_invoices: {$slice: ["$recent_invoices", 5]}}},
  {$merge: {into: "customers", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])

// @op account
db.customers.findOne({_id: customerId})

// @op history
db.invoices.find({customer_id: customerId}).sort({issued_at: -1})

// @op new_invoice
db.invoices.insertOne({number: "INV-NEW-" + n, customer_id: customerId, issued_at: new Date(at), amount: 10, status: "issued"})
db.customers.updateOne({_id: customerId}, {$push: {recent_invoices: {$each: [{number: "INV-NEW-" + n, issued_at: new Date(at), amount: 10, status: "issued"}], $position: 0, $slice: 5}}})
