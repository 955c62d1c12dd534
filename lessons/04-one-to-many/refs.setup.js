// Orders reference their products by id only: the line snapshots (name,
// price) are the subject of a later lesson, so here they are reduced to ids.
db.orders.aggregate([
  {$set: {product_ids: "$lines.product_id"}},
  {$unset: ["lines"]},
  {$out: "orders"}
])
db.invoices.drop()
db.customers.drop()
// A multikey index: one entry per product id in each order.
db.orders.createIndex({product_ids: 1})
