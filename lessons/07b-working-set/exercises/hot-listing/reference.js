// The cold fields, plot and cast, move to film_details under the film's
// own _id; films keeps the listing's fields and its other small ones, and
// the one index the front page's sort needs.
db.films.aggregate([{$project: {plot: 1, cast: 1}}, {$out: "film_details"}])
db.films.updateMany({}, {$unset: {plot: "", cast: ""}})
db.films.createIndex({rating: -1, _id: 1})

// @op listing
db.films.find({}, {title: 1, year: 1, rating: 1}).sort({rating: -1, _id: 1}).limit(20)

// @op film_page
db.films.aggregate([
  {$match: {_id: filmId}},
  {$lookup: {from: "film_details", localField: "_id", foreignField: "_id", as: "details"}},
  {$replaceWith: {$mergeObjects: ["$$ROOT", {$first: "$details"}]}},
  {$unset: "details"}
])

// @op rate
db.films.updateOne({_id: ratedId}, {$set: {rating: stars}})
