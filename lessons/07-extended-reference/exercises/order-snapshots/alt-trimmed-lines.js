// An alternative correct design, written apart from the reference: setup
// trims each line to the snapshot the page shows plus the product_id
// reference, and the page is an aggregate that matches the _id first.
db.orders.updateMany({}, [{$set: {lines: {$map: {input: "$lines", as: "l", in: {product_id: "$$l.product_id", sku: "$$l.sku", name: "$$l.name", unit_price: "$$l.unit_price", quantity: "$$l.quantity"}}}}}])

// @op page
db.orders.aggregate([{$match: {_id: orderId}}, {$project: {customer_id: 1, lines: 1}}])

// @op page_after
db.orders.aggregate([{$match: {_id: orderId}}, {$project: {customer_id: 1, lines: 1}}])
