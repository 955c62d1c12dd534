// The one index the workload needs: equality on category, range on price.
db.products.createIndex({category: 1, price: 1})
