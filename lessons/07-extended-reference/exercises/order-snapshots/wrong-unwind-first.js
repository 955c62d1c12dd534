// Mistake: the pipeline unwinds before it matches, so the page walks every
// order in the collection instead of the one it shows.

// @op page
db.orders.aggregate([{$unwind: "$lines"}, {$match: {_id: orderId}}, {$group: {_id: "$_id", lines: {$push: "$lines"}}}])

// @op page_after
db.orders.aggregate([{$unwind: "$lines"}, {$match: {_id: orderId}}, {$group: {_id: "$_id", lines: {$push: "$lines"}}}])
