// Update-operator examples from the MongoDB manual ($inc, $min, $max, $mul,
// $rename, $unset, $push with modifiers, $addToSet, $pop, $pull, the
// positional operators and arrayFilters).

// @case inc-setup
db.ops.insertOne({ _id: 1, sku: "abc123", quantity: 10, metrics: { orders: 2, ratings: 3.5 } })
// @expect
// { acknowledged: true, insertedId: 1 }

// @case inc
db.ops.updateOne({ sku: "abc123" }, { $inc: { quantity: -2, "metrics.orders": 1 } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case inc-result
db.ops.findOne({ _id: 1 })
// @expect
// {
//   _id: 1,
//   sku: 'abc123',
//   quantity: 8,
//   metrics: { orders: 3, ratings: 3.5 }
// }

// @case min-max-setup
db.scores.insertOne({ _id: 1, highScore: 800, lowScore: 200 })
// @expect
// { acknowledged: true, insertedId: 1 }

// @case min-lower
db.scores.updateOne({ _id: 1 }, { $min: { lowScore: 150 } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case max-higher
db.scores.updateOne({ _id: 1 }, { $max: { highScore: 950 } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case min-no-change
db.scores.updateOne({ _id: 1 }, { $min: { lowScore: 250 } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 0,
//   upsertedCount: 0
// }

// @case min-max-result
db.scores.findOne()
// @expect
// { _id: 1, highScore: 950, lowScore: 150 }

// @case mul-setup
db.products.insertOne({ _id: 1, item: "Hats", price: NumberDecimal("10.99"), quantity: 25 })
// @expect
// { acknowledged: true, insertedId: 1 }

// @case mul
db.products.updateOne({ _id: 1 }, { $mul: { price: NumberDecimal("1.25"), quantity: 2 } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case mul-result
db.products.findOne()
// @expect
// { _id: 1, item: 'Hats', price: Decimal128('13.7375'), quantity: 50 }

// @case rename-setup
db.students.insertOne({ _id: 1, alias: ["The American Cincinnatus"], mobile: "555-555-5555", nmae: { first: "george", last: "washington" } })
// @expect
// { acknowledged: true, insertedId: 1 }

// @case rename
db.students.updateOne({ _id: 1 }, { $rename: { nmae: "name" } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case rename-result
db.students.findOne({ _id: 1 }, { name: 1, _id: 0 })
// @expect
// { name: { first: 'george', last: 'washington' } }

// @case unset
db.students.updateOne({ _id: 1 }, { $unset: { mobile: "" } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case unset-result
db.students.findOne({ _id: 1 }, { mobile: 1 })
// @expect
// { _id: 1 }

// @case push-setup
db.students.insertOne({ _id: 5, quizzes: [{ wk: 1, score: 10 }, { wk: 2, score: 8 }, { wk: 3, score: 5 }, { wk: 4, score: 6 }] })
// @expect
// { acknowledged: true, insertedId: 5 }

// @case push-each-sort-slice
db.students.updateOne(
  { _id: 5 },
  {
    $push: {
      quizzes: {
        $each: [{ wk: 5, score: 8 }, { wk: 6, score: 7 }, { wk: 7, score: 6 }],
        $sort: { score: -1 },
        $slice: 3
      }
    }
  }
)
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case push-result
db.students.findOne({ _id: 5 })
// @expect
// {
//   _id: 5,
//   quizzes: [ { wk: 1, score: 10 }, { wk: 2, score: 8 }, { wk: 5, score: 8 } ]
// }

// @case add-to-set-setup
db.inv2.insertOne({ _id: 1, item: "polarizing_filter", tags: ["electronics", "camera"] })
// @expect
// { acknowledged: true, insertedId: 1 }

// @case add-to-set
db.inv2.updateOne({ _id: 1 }, { $addToSet: { tags: "accessories" } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case add-to-set-existing
db.inv2.updateOne({ _id: 1 }, { $addToSet: { tags: "camera" } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 0,
//   upsertedCount: 0
// }

// @case add-to-set-result
db.inv2.findOne()
// @expect
// {
//   _id: 1,
//   item: 'polarizing_filter',
//   tags: [ 'electronics', 'camera', 'accessories' ]
// }

// @case pop-first
db.inv2.updateOne({ _id: 1 }, { $pop: { tags: -1 } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case pull-in
db.inv2.updateOne({ _id: 1 }, { $pull: { tags: { $in: ["accessories"] } } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case pop-pull-result
db.inv2.findOne({}, { tags: 1, _id: 0 })
// @expect
// { tags: [ 'camera' ] }

// @case array-filters-setup
db.grades.insertMany([{ _id: 1, grades: [95, 92, 90] }, { _id: 2, grades: [98, 100, 102] }, { _id: 3, grades: [95, 110, 100] }])
// @expect
// { acknowledged: true, insertedIds: { '0': 1, '1': 2, '2': 3 } }

// @case array-filters
db.grades.updateMany(
  { grades: { $gte: 100 } },
  { $set: { "grades.$[element]": 100 } },
  { arrayFilters: [{ element: { $gte: 100 } }] }
)
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 2,
//   modifiedCount: 2,
//   upsertedCount: 0
// }

// @case array-filters-result
db.grades.find({}, { _id: 0 })
// @expect
// [
//   { grades: [ 95, 92, 90 ] },
//   { grades: [ 98, 100, 100 ] },
//   { grades: [ 95, 100, 100 ] }
// ]

// @case positional
db.grades.updateOne({ _id: 1, grades: 92 }, { $set: { "grades.$": 82 } })
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case positional-result
db.grades.findOne({ _id: 1 })
// @expect
// { _id: 1, grades: [ 95, 82, 90 ] }

// @case pipeline-update
db.grades.updateOne({ _id: 1 }, [{ $set: { best: { $max: "$grades" } } }])
// @expect
// {
//   acknowledged: true,
//   insertedId: null,
//   matchedCount: 1,
//   modifiedCount: 1,
//   upsertedCount: 0
// }

// @case pipeline-update-result
db.grades.findOne({ _id: 1 }, { best: 1, _id: 0 })
// @expect
// { best: 95 }
