// Mistake: normalised like a relational schema: each line becomes its own
// document in order_lines (indexed by order), and the page reads the order
// and then its lines: a second read on every view of the hottest page.
db.orders.aggregate([
  {$unwind: "$lines"},
  {$replaceWith: {$mergeObjects: ["$lines", {order_id: "$_id"}]}},
  {$out: "order_lines"}
])
db.order_lines.createIndex({order_id: 1})
db.orders.updateMany({}, {$unset: {lines: ""}})

// @op page
const order = db.orders.findOne({_id: orderId})
db.order_lines.aggregate([{$match: {order_id: orderId}}, {$group: {_id: "$order_id", lines: {$push: "$$ROOT"}}}])

// @op page_after
const order = db.orders.findOne({_id: orderId})
db.order_lines.aggregate([{$match: {order_id: orderId}}, {$group: {_id: "$order_id", lines: {$push: "$$ROOT"}}}])
