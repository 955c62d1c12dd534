// No precomputation: the hall of fame is sorted from posts on every view.
db.follows.drop()
