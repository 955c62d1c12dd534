// Query and CRUD examples from the MongoDB manual ("Query Documents",
// "Query an Array", "Update Documents", "Delete Documents"), with explicit
// _id values so the printed results are deterministic.

// @case insert-inventory
db.inventory.insertMany([
  { _id: 1, item: "journal", qty: 25, size: { h: 14, w: 21, uom: "cm" }, status: "A" },
  { _id: 2, item: "notebook", qty: 50, size: { h: 8.5, w: 11, uom: "in" }, status: "A" },
  { _id: 3, item: "paper", qty: 100, size: { h: 8.5, w: 11, uom: "in" }, status: "D" },
  { _id: 4, item: "planner", qty: 75, size: { h: 22.85, w: 30, uom: "cm" }, status: "D" },
  { _id: 5, item: "postcard", qty: 45, size: { h: 10, w: 15.25, uom: "cm" }, status: "A" },
])
// @expect
// {
//   acknowledged: true,
//   insertedIds: { '0': 1, '1': 2, '2': 3, '3': 4, '4': 5 }
// }

// @case insert-one
db.inventory.insertOne({ _id: 6, item: "canvas", qty: 100, tags: ["cotton"], size: { h: 28, w: 35.5, uom: "cm" }, status: "A" })
// @expect
// { acknowledged: true, insertedId: 6 }

// @case count-all
db.inventory.countDocuments({})
// @expect
// 6

// @case equality
db.inventory.find({ status: "D" }, { item: 1, _id: 0 })
// @expect
// [ { item: 'paper' }, { item: 'planner' } ]

// @case and-lt
db.inventory.find({ status: "A", qty: { $lt: 30 } }, { item: 1, _id: 0 })
// @expect
// [ { item: 'journal' } ]

// @case or
db.inventory.find({ $or: [{ status: "A" }, { qty: { $lt: 30 } }] }, { _id: 1 }).sort({ _id: 1 })
// @expect
// [ { _id: 1 }, { _id: 2 }, { _id: 5 }, { _id: 6 } ]

// @case and-or-regex
db.inventory.find({ status: "A", $or: [{ qty: { $lt: 30 } }, { item: /^p/ }] }, { item: 1, _id: 0 })
// @expect
// [ { item: 'journal' }, { item: 'postcard' } ]

// @case embedded-equality
db.inventory.find({ size: { h: 14, w: 21, uom: "cm" } })
// @expect
// [
//   {
//     _id: 1,
//     item: 'journal',
//     qty: 25,
//     size: { h: 14, w: 21, uom: 'cm' },
//     status: 'A'
//   }
// ]

// @case dotted-field
db.inventory.find({ "size.uom": "in" }, { _id: 0, item: 1 })
// @expect
// [ { item: 'notebook' }, { item: 'paper' } ]

// @case dotted-lt-count
db.inventory.find({ "size.h": { $lt: 15 } }).count()
// @expect
// 4

// @case find-one
db.inventory.findOne({ qty: { $gt: 70 } }, { item: 1, qty: 1, _id: 0 })
// @expect
// { item: 'paper', qty: 100 }

// @case sort-limit
db.inventory.find({}, { item: 1 }).sort({ qty: -1, _id: 1 }).limit(2)
// @expect
// [ { _id: 3, item: 'paper' }, { _id: 6, item: 'canvas' } ]

// @case skip
db.inventory.find({}, { _id: 1 }).sort({ _id: 1 }).skip(4)
// @expect
// [ { _id: 5 }, { _id: 6 } ]

// @case distinct
db.inventory.distinct("status")
// @expect
// [ 'A', 'D' ]

// @case estimated-count
db.inventory.estimatedDocumentCount()
// @expect
// 6

// @case missing-find-one
db.inventory.findOne({ item: "nothing" })
// @expect
// null

// @case insert-arrays
db.arrays.insertMany([
  { _id: 1, item: "journal", qty: 25, tags: ["blank", "red"], dim_cm: [14, 21] },
  { _id: 2, item: "notebook", qty: 50, tags: ["red", "blank"], dim_cm: [14, 21] },
  { _id: 3, item: "paper", qty: 100, tags: ["red", "blank", "plain"], dim_cm: [14, 21] },
  { _id: 4, item: "planner", qty: 75, tags: ["blank", "red"], dim_cm: [22.85, 30] },
  { _id: 5, item: "postcard", qty: 45, tags: ["blue"], dim_cm: [10, 15.25] }
])
// @expect
// {
//   acknowledged: true,
//   insertedIds: { '0': 1, '1': 2, '2': 3, '3': 4, '4': 5 }
// }

// @case array-exact
db.arrays.find({ tags: ["red", "blank"] }, { item: 1, _id: 0 })
// @expect
// [ { item: 'notebook' } ]

// @case array-all
db.arrays.find({ tags: { $all: ["red", "blank"] } }, { item: 1, _id: 0 })
// @expect
// [
//   { item: 'journal' },
//   { item: 'notebook' },
//   { item: 'paper' },
//   { item: 'planner' }
// ]

// @case array-contains
db.arrays.countDocuments({ tags: "red" })
// @expect
// 4

// @case array-gt
db.arrays.find({ dim_cm: { $gt: 25 } }, { item: 1, _id: 0 })
// @expect
// [ { item: 'planner' } ]

// @case array-compound
db.arrays.find({ dim_cm: { $gt: 15, $lt: 20 } }, { _id: 1 })
// @expect
// [ { _id: 1 }, { _id: 2 }, { _id: 3 }, { _id: 5 } ]

// @case array-elem-match
db.arrays.find({ dim_cm: { $elemMatch: { $gt: 22, $lt: 30 } } }, { _id: 1 })
// @expect
// [ { _id: 4 } ]

// @case array-index
db.arrays.find({ "dim_cm.1": { $gt: 25 } }, { _id: 1 })
// @expect
// [ { _id: 4 } ]

// @case array-size
db.arrays.find({ tags: { $size: 3 } }, { _id: 1 })
// @expect
// [ { _id: 3 } ]

// @case insert-upd
db.upd.insertMany([
  { _id: 1, item: "canvas", qty: 100, size: { h: 28, w: 35.5, uom: "cm" }, status: "A" },
  { _id: 2, item: "journal", qty: 25, size: { h: 14, w: 21, uom: "cm" }, status: "A" },
  { _id: 3, item: "mat", qty: 85, size: { h: 27.9, w: 35.5, uom: "cm" }, status: "A" },
  { _id: 4, item: "mousepad", qty: 25, size: { h: 19, w: 22.85, uom: "cm" }, status: "P" },
  { _id: 5, item: "paper", qty: 100, size: { h: 8.5, w: 11, uom: "in" }, status: "D" }
])
// @expect
// {
//   acknowledged: true,
//   insertedIds: { '0': 1, '1': 2, '2': 3, '3': 4, '4': 5 }
// }

// @case update-one
db.upd.updateOne({ item: "paper" }, { $set: { "size.uom": "cm", status: "P" }, $currentDate: { lastModified: true } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case after-update-one
db.upd.findOne({ item: "paper" }, { size: 1, status: 1, _id: 0 })
// @expect
// { size: { h: 8.5, w: 11, uom: 'cm' }, status: 'P' }

// @case update-many
db.upd.updateMany({ qty: { $lt: 50 } }, { $set: { "size.uom": "in", status: "P" } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 2,
//   modifiedCount: 2,
//   upsertedCount: 0
// }

// @case replace-one
db.upd.replaceOne({ item: "mat" }, { item: "mat", instock: [{ warehouse: "A", qty: 60 }, { warehouse: "B", qty: 40 }] })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case after-replace
db.upd.findOne({ item: "mat" })
// @expect
// {
//   _id: 3,
//   item: 'mat',
//   instock: [ { warehouse: 'A', qty: 60 }, { warehouse: 'B', qty: 40 } ]
// }

// @case upsert
db.upd.updateOne({ _id: 20 }, { $set: { item: "pencil", qty: 10 } }, { upsert: true })
// @expect
// {
//   acknowledged: true,
//   insertedId: 20,
//   matchedCount: 0,
//   modifiedCount: 0,
//   upsertedCount: 1
// }

// @case delete-many
db.upd.deleteMany({ status: "P" })
// @expect
// { acknowledged: true, deletedCount: 3 }

// @case delete-one
db.upd.deleteOne({ _id: 20 })
// @expect
// { acknowledged: true, deletedCount: 1 }

// @case count-after-delete
db.upd.countDocuments()
// @expect
// 2
