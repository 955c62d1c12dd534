// An alternative correct design, written apart from the reference: the
// subset is built with $topN and kept by a $push that sorts by issue time
// before it slices; the history reads an ascending index backwards.
db.invoices.createIndex({customer_id: 1, issued_at: 1})
db.invoices.aggregate([
  {$group: {_id: "$customer_id", recent_invoices: {$topN: {n: 5, sortBy: {issued_at: -1}, output: {number: "$number", issued_at: "$issued_at", amount: "$amount"}}}}},
  {$merge: {into: "customers", on: "_id", whenMatched: "merge", whenNotMatched: "discard"}}
])

// @op account
db.customers.find({_id: customerId}, {name: 1, recent_invoices: 1})

// @op history
db.invoices.find({customer_id: customerId}, {_id: 0, number: 1, issued_at: 1, amount: 1}).sort({issued_at: -1})

// @op new_invoice
const inv = {number: "INV-NEW-" + n, issued_at: new Date(at), amount: 10}
db.invoices.insertOne({number: inv.number, customer_id: customerId, issued_at: inv.issued_at, amount: inv.amount, status: "open"})
db.customers.updateOne({_id: customerId}, {$push: {recent_invoices: {$each: [inv], $sort: {issued_at: -1}, $slice: 5}}})
