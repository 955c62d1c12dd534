// One document per day with the number of comments, keyed by the day.
db.comments.aggregate([
  {$group: {_id: {$dateToString: {format: "%Y-%m-%d", date: "$created_at"}}, comments: {$sum: 1}}},
  {$out: "daily_stats"}
])
db.follows.drop()
