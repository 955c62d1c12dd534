// Mistake: the lines keep their snapshot, but the page "refreshes" each
// unit_price from the catalogue, so a price rise rewrites what the
// customer paid.

// @op page
db.orders.aggregate([
  {$match: {_id: orderId}},
  {$unwind: "$lines"},
  {$lookup: {from: "products", localField: "lines.product_id", foreignField: "_id", as: "p"}},
  {$set: {"lines.unit_price": {$first: "$p.price"}}},
  {$group: {_id: "$_id", lines: {$push: "$lines"}}}
])

// @op page_after
db.orders.aggregate([
  {$match: {_id: orderId}},
  {$unwind: "$lines"},
  {$lookup: {from: "products", localField: "lines.product_id", foreignField: "_id", as: "p"}},
  {$set: {"lines.unit_price": {$first: "$p.price"}}},
  {$group: {_id: "$_id", lines: {$push: "$lines"}}}
])
