// Aggregation examples from the MongoDB manual ("Aggregation Pipeline",
// $project, $unwind, $count, $lookup), plus index helpers.

// @case orders-setup
db.orders.insertMany([
  { _id: 0, name: "Pepperoni", size: "small", price: 19, quantity: 10, date: ISODate("2021-03-13T08:14:30Z") },
  { _id: 1, name: "Pepperoni", size: "medium", price: 20, quantity: 20, date: ISODate("2021-03-13T09:13:24Z") },
  { _id: 2, name: "Pepperoni", size: "large", price: 21, quantity: 30, date: ISODate("2021-03-17T09:22:12Z") },
  { _id: 3, name: "Cheese", size: "small", price: 12, quantity: 15, date: ISODate("2021-03-13T11:21:39.736Z") },
  { _id: 4, name: "Cheese", size: "medium", price: 13, quantity: 50, date: ISODate("2022-01-12T21:23:13.331Z") },
  { _id: 5, name: "Cheese", size: "large", price: 14, quantity: 10, date: ISODate("2022-01-12T05:08:13Z") },
  { _id: 6, name: "Vegan", size: "small", price: 17, quantity: 10, date: ISODate("2021-01-13T05:08:13Z") },
  { _id: 7, name: "Vegan", size: "medium", price: 18, quantity: 10, date: ISODate("2021-01-13T05:10:13Z") }
])
// @expect
// {
//   acknowledged: true,
//   insertedIds: { '0': 0, '1': 1, '2': 2, '3': 3, '4': 4, '5': 5, '6': 6, '7': 7 }
// }

// @case match-group
db.orders.aggregate([
  { $match: { size: "medium" } },
  { $group: { _id: "$name", totalQuantity: { $sum: "$quantity" } } },
  { $sort: { _id: 1 } }
])
// @expect
// [
//   { _id: 'Cheese', totalQuantity: 50 },
//   { _id: 'Pepperoni', totalQuantity: 20 },
//   { _id: 'Vegan', totalQuantity: 10 }
// ]

// @case date-group
db.orders.aggregate([
  { $match: { date: { $gte: new ISODate("2020-01-30"), $lt: new ISODate("2022-01-30") } } },
  {
    $group: {
      _id: { $dateToString: { format: "%Y-%m-%d", date: "$date" } },
      totalOrderValue: { $sum: { $multiply: ["$price", "$quantity"] } },
      averageOrderQuantity: { $avg: "$quantity" }
    }
  },
  { $sort: { totalOrderValue: -1 } }
])
// @expect
// [
//   { _id: '2022-01-12', totalOrderValue: 790, averageOrderQuantity: 30 },
//   { _id: '2021-03-13', totalOrderValue: 770, averageOrderQuantity: 15 },
//   { _id: '2021-03-17', totalOrderValue: 630, averageOrderQuantity: 30 },
//   { _id: '2021-01-13', totalOrderValue: 350, averageOrderQuantity: 10 }
// ]

// @case project-multiply
db.orders.aggregate([{ $match: { name: "Vegan" } }, { $project: { _id: 0, size: 1, total: { $multiply: ["$price", "$quantity"] } } }])
// @expect
// [ { size: 'small', total: 170 }, { size: 'medium', total: 180 } ]

// @case group-count
db.orders.aggregate([{ $group: { _id: null, count: { $sum: 1 } } }])
// @expect
// [ { _id: null, count: 8 } ]

// @case count-stage
db.orders.aggregate([{ $match: { quantity: { $gte: 20 } } }, { $count: "bigOrders" }])
// @expect
// [ { bigOrders: 3 } ]

// @case varargs-stages
db.orders.aggregate({ $match: { size: "large" } }, { $project: { size: 1 } }, { $sort: { _id: -1 } })
// @expect
// [ { _id: 5, size: 'large' }, { _id: 2, size: 'large' } ]

// @case project-id-only
db.orders.aggregate([{ $match: { size: "large" } }, { $project: { _id: 1 } }])
// @expect
// [ { _id: 2 }, { _id: 5 } ]

// @case agg-to-array-length
db.orders.aggregate([{ $match: { price: { $gt: 15 } } }]).toArray().length
// @expect
// 5

// @case unwind-setup
db.inv3.insertOne({ _id: 1, item: "ABC1", sizes: ["S", "M", "L"] })
// @expect
// { acknowledged: true, insertedId: 1 }

// @case unwind
db.inv3.aggregate([{ $unwind: "$sizes" }, { $project: { _id: 0, sizes: 1 } }])
// @expect
// [ { sizes: 'S' }, { sizes: 'M' }, { sizes: 'L' } ]

// @case lookup-setup-orders
db.lorders.insertMany([{ _id: 1, item: "almonds", price: 12, quantity: 2 }, { _id: 2, item: "pecans", price: 20, quantity: 1 }])
// @expect
// { acknowledged: true, insertedIds: { '0': 1, '1': 2 } }

// @case lookup-setup-inventory
db.linventory.insertMany([{ _id: 1, sku: "almonds", description: "product 1", instock: 120 }, { _id: 2, sku: "pecans", description: "product 2", instock: 80 }])
// @expect
// { acknowledged: true, insertedIds: { '0': 1, '1': 2 } }

// @case lookup
db.lorders.aggregate([
  { $lookup: { from: "linventory", localField: "item", foreignField: "sku", as: "inventory_docs" } },
  { $project: { _id: 1, "inventory_docs.instock": 1 } }
])
// @expect
// [
//   { _id: 1, inventory_docs: [ { instock: 120 } ] },
//   { _id: 2, inventory_docs: [ { instock: 80 } ] }
// ]

// @case create-index
db.orders.createIndex({ name: 1, size: -1 })
// @expect
// name_1_size_-1

// @case create-index-named
db.orders.createIndex({ date: 1 }, { name: "by_date" })
// @expect
// by_date

// @case get-indexes
db.orders.getIndexes()
// @expect
// [
//   { v: 2, key: { _id: 1 }, name: '_id_' },
//   { v: 2, key: { name: 1, size: -1 }, name: 'name_1_size_-1' },
//   { v: 2, key: { date: 1 }, name: 'by_date' }
// ]

// @case drop-index
db.orders.dropIndex("by_date")
// @expect
// { nIndexesWas: 3, ok: 1 }

// @case create-indexes
db.orders.createIndexes([{ price: 1 }, { quantity: -1 }])
// @expect
// [ 'price_1', 'quantity_-1' ]

// @case drop-indexes
db.orders.dropIndexes()
// @expect
// {
//   nIndexesWas: 4,
//   msg: 'non-_id indexes dropped for collection',
//   ok: 1
// }

// @case explain-find
db.orders.find({ size: "small" }).explain("executionStats").executionStats.nReturned
// @expect
// 3

// @case explain-aggregate-ok
db.orders.explain().aggregate([{ $match: { size: "small" } }]).ok
// @expect
// 1
