// The seeded orders already copy sku, name and unit_price into each line:
// nothing to reshape. The _id index serves the page.

// @op page
db.orders.findOne({_id: orderId})

// @op page_after
db.orders.findOne({_id: orderId})
