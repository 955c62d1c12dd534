// An alternative correct design, written apart from the reference: the
// seeded lines are already snapshots; the page asks find for the lines
// only, by _id.

// @op page
db.orders.find({_id: orderId}, {_id: 0, lines: 1})

// @op page_after
db.orders.find({_id: orderId}, {_id: 0, lines: 1})
