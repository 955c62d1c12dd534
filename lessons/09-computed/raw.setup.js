// Raw comments only.
db.follows.drop()
