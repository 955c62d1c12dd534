// Keep the dataset as it was generated: one collection per entity, joined by
// person_id. Each child collection gets the index a join needs.
db.addresses.createIndex({person_id: 1})
db.phones.createIndex({person_id: 1})
db.passports.createIndex({person_id: 1})
