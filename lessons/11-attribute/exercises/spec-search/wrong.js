// Keep specs as they are and index each field the filters use.
db.products.createIndex({"specs.colour": 1})
db.products.createIndex({"specs.ram_gb": 1})
db.products.createIndex({"specs.language": 1})

// @op by_colour
db.products.find({"specs.colour": colour})

// @op by_ram
db.products.find({"specs.ram_gb": {$gte: ramMin}})

// @op by_language
db.products.find({"specs.language": language})
