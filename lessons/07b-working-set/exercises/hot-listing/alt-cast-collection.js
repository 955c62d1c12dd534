// An alternative correct design, written apart from the reference: only
// the cast (by far the largest field) leaves the film, one credit per
// document; the film page gathers them back in billing order.
db.films.aggregate([
  {$unwind: "$cast"},
  {$replaceWith: {$mergeObjects: ["$cast", {film_id: "$_id"}]}},
  {$out: "credits"}
])
db.credits.createIndex({film_id: 1, billing: 1})
db.films.updateMany({}, [{$unset: "cast"}])
db.films.createIndex({rating: -1, _id: 1})

// @op listing
db.films.aggregate([
  {$sort: {rating: -1, _id: 1}},
  {$limit: 20},
  {$project: {title: 1, year: 1, rating: 1}}
])

// @op film_page
db.films.aggregate([
  {$match: {_id: filmId}},
  {$lookup: {from: "credits", localField: "_id", foreignField: "film_id", pipeline: [{$sort: {billing: 1}}], as: "cast"}}
])

// @op rate
db.films.updateOne({_id: ratedId}, [{$set: {rating: stars}}])
