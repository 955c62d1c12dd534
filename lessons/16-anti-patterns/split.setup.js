// Cold fields (plot, cast) move to film_details under the same _id.
db.films.aggregate([{$project: {plot: 1, cast: 1}}, {$out: "film_details"}])
db.films.updateMany({}, {$unset: {plot: "", cast: ""}})
db.films.createIndex({genres: 1, rating: -1})
db.actors.drop()
