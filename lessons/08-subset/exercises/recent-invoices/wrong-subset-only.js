// Mistake: the new invoice goes into the customer's subset only; it is
// never written to invoices, so the full history loses it.
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
db.customers.updateOne({_id: customerId}, {$push: {recent_invoices: {$each: [{number: "INV-NEW-" + n, issued_at: new Date(at), amount: 10, status: "issued"}], $position: 0, $slice: 5}}})
