// Lines keep only the product and the quantity; the page looks the rest up.
db.orders.updateMany({}, {$unset: {"lines.$[].unit_price": "", "lines.$[].name": "", "lines.$[].sku": ""}})

// @op page
db.orders.aggregate([
  {$match: {_id: orderId}},
  {$unwind: "$lines"},
  {$lookup: {from: "products", localField: "lines.product_id", foreignField: "_id", as: "p"}},
  {$set: {"lines.sku": {$first: "$p.sku"}, "lines.name": {$first: "$p.name"}, "lines.unit_price": {$first: "$p.price"}}},
  {$group: {_id: "$_id", lines: {$push: "$lines"}}}
])

// @op page_after
db.orders.aggregate([
  {$match: {_id: orderId}},
  {$unwind: "$lines"},
  {$lookup: {from: "products", localField: "lines.product_id", foreignField: "_id", as: "p"}},
  {$set: {"lines.sku": {$first: "$p.sku"}, "lines.name": {$first: "$p.name"}, "lines.unit_price": {$first: "$p.price"}}},
  {$group: {_id: "$_id", lines: {$push: "$lines"}}}
])
