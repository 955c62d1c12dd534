// Parent references as generated, indexed for "children of X".
// depth comes with the dataset, so the workload picks the same deepest node
// in every design.
db.categories.createIndex({parent_id: 1})
