// Shell-level helpers: bulkWrite, findOneAnd*, bindings, loops, dates,
// server errors, database helpers.

// @case pizzas-setup
db.pizzas.insertMany([{ _id: 0, type: "pepperoni", size: "small", price: 4 }, { _id: 1, type: "cheese", size: "medium", price: 7 }, { _id: 2, type: "vegan", size: "large", price: 8 }])
// @expect
// { acknowledged: true, insertedIds: { '0': 0, '1': 1, '2': 2 } }

// @case bulk-write
db.pizzas.bulkWrite([
  { insertOne: { document: { _id: 3, type: "beef", size: "medium", price: 6 } } },
  { insertOne: { document: { _id: 4, type: "sausage", size: "large", price: 10 } } },
  { updateOne: { filter: { type: "cheese" }, update: { $set: { price: 8 } } } },
  { deleteOne: { filter: { type: "pepperoni" } } },
  { replaceOne: { filter: { type: "vegan" }, replacement: { type: "tofu", size: "small", price: 4 } } }
])
// @expect
// {
//   acknowledged: true,
//   insertedCount: 2,
//   insertedIds: { '0': 3, '1': 4 },
//   matchedCount: 2,
//   modifiedCount: 2,
//   deletedCount: 1,
//   upsertedCount: 0,
//   upsertedIds: {}
// }

// @case find-one-and-update-after
db.pizzas.findOneAndUpdate({ _id: 1 }, { $inc: { price: 1 } }, { returnDocument: "after", projection: { _id: 0, price: 1 } })
// @expect
// { price: 9 }

// @case find-one-and-update-upsert
db.pizzas.findOneAndUpdate({ _id: 9 }, { $set: { type: "new" } }, { upsert: true, returnNewDocument: true })
// @expect
// { _id: 9, type: 'new' }

// @case find-one-and-replace
db.pizzas.findOneAndReplace({ _id: 9 }, { type: "newer" })
// @expect
// { _id: 9, type: 'new' }

// @case find-one-and-delete
db.pizzas.findOneAndDelete({ _id: 9 }, { projection: { type: 1 } })
// @expect
// { _id: 9, type: 'newer' }

// @case sort-to-array
db.pizzas.find({}, { type: 1, _id: 0 }).sort({ price: -1 }).toArray()
// @expect
// [
//   { type: 'sausage' },
//   { type: 'cheese' },
//   { type: 'beef' },
//   { type: 'tofu' }
// ]

// @case for-of-print
for (const p of db.pizzas.find({ price: { $gt: 8 } }).sort({ _id: 1 })) {
  print(p.type, p.price)
}
// @expect
// cheese 9
// sausage 10

// @case bindings-and-dates
const since = new Date(ISODate("2022-01-12T00:00:00Z").getTime() - 86400000)
db.orders.countDocuments({ date: { $gte: since } })
// @expect
// 2

// @case get-collection
db.getCollection("pizzas").countDocuments({ size: "small" })
// @expect
// 1

// @case duplicate-key
db.scores.insertOne({ _id: 1 })
// @expect
// ERROR MongoServerError: E11000 duplicate key error collection: manual.scores index: _id_ dup key: { _id: 1 }

// @case unknown-command
db.runCommand({ nosuchcommand: 1 })
// @expect
// ERROR MongoServerError[CommandNotFound]: no such command: 'nosuchcommand'

// @case ping
db.runCommand({ ping: 1 })
// @expect
// { ok: 1 }

// @case create-validated
db.createCollection("validated", { validator: { $jsonSchema: { required: ["name"] } } })
// @expect
// { ok: 1 }

// @case validation-fails
db.validated.insertOne({ _id: 1, x: 1 })
// @expect
// ERROR MongoServerError: Document failed validation

// @case sibling-db
db.getSiblingDB("other").things.insertOne({ _id: 1 })
// @expect
// { acknowledged: true, insertedId: 1 }

// @case use-db
use other
db.things.countDocuments()
// @expect
// switched to db other
// 1

// @case drop-database
db.dropDatabase()
// @expect
// { ok: 1, dropped: 'other' }

// @case back
use manual
// @expect
// switched to db manual

// @case drop-collection
db.pizzas.drop()
// @expect
// true

// @case show-collections
show collections
// @expect
// arrays
// grades
// inv2
// inv3
// inventory
// linventory
// lorders
// ops
// orders
// products
// scores
// students
// upd
// validated
