// The needed index, plus one "just in case" index on almost every field,
// including a redundant prefix of the compound index.
db.products.createIndex({category: 1, price: 1})
db.products.createIndex({category: 1})
db.products.createIndex({price: 1})
db.products.createIndex({sku: 1})
db.products.createIndex({name: 1})
db.products.createIndex({brand: 1})
db.products.createIndex({currency: 1})
db.products.createIndex({stock: 1})
db.products.createIndex({rating: 1})
db.products.createIndex({created_at: 1})
