// Mistake: the new invoice is appended at the end of the subset and
// $slice: 5 keeps the first five, so the subset keeps the oldest and the
// new invoices never show on the account page.
db.invoices.createIndex({customer_id: 1, issued_at: -1})
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
db.customers.updateOne({_id: customerId}, {$push: {recent_invoices: {$each: [{number: "INV-NEW-" + n, issued_at: new Date(at), amount: 10, status: "issued"}], $slice: 5}}})
