// Orders as generated: each line carries the product's id, sku, name and the
// unit price actually paid; total is what the customer was charged.
db.orders.createIndex({"lines.product_id": 1})
db.invoices.drop()
