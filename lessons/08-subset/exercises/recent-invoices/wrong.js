// Every invoice embedded in its customer, newest first.
db.invoices.aggregate([
  {$sort: {issued_at: -1}},
  {$group: {_id: "$customer_id", invoices: {$push: {number: "$number", issued_at: "$issued_at", amount: "$amount", status: "$status"}}}},
  {$merge: {into: "customers", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])
db.invoices.drop()

// @op account
db.customers.aggregate([{$match: {_id: customerId}}, {$project: {name: 1, recent_invoices: {$slice: ["$invoices", 5]}}}])

// @op history
db.customers.aggregate([{$match: {_id: customerId}}, {$unwind: "$invoices"}, {$replaceWith: "$invoices"}])

// @op new_invoice
db.customers.updateOne({_id: customerId}, {$push: {invoices: {$each: [{number: "INV-NEW-" + n, issued_at: new Date(at), amount: 10, status: "issued"}], $position: 0}}})
