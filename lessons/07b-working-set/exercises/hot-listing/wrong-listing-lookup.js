// Mistake: the cold fields are moved out, but the front page joins them
// back in "to have everything at hand", so it reads every listed film's
// details into the cache again.
db.films.aggregate([{$project: {plot: 1, cast: 1}}, {$out: "film_details"}])
db.films.updateMany({}, {$unset: {plot: "", cast: ""}})
db.films.createIndex({rating: -1, _id: 1})

// @op listing
db.films.aggregate([
  {$sort: {rating: -1, _id: 1}},
  {$limit: 20},
  {$lookup: {from: "film_details", localField: "_id", foreignField: "_id", as: "details"}}
])

// @op film_page
db.films.aggregate([
  {$match: {_id: filmId}},
  {$lookup: {from: "film_details", localField: "_id", foreignField: "_id", as: "details"}},
  {$replaceWith: {$mergeObjects: ["$$ROOT", {$first: "$details"}]}},
  {$unset: "details"}
])

// @op rate
db.films.updateOne({_id: ratedId}, {$set: {rating: stars}})
