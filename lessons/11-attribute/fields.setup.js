// Lift every entry of `specs` to a top-level field named spec_<name>.
db.products.aggregate([
  {$replaceWith: {$mergeObjects: [
    "$$ROOT",
    {$arrayToObject: {$map: {input: {$objectToArray: "$specs"}, in: {k: {$concat: ["spec_", "$$this.k"]}, v: "$$this.v"}}}}
  ]}},
  {$unset: ["specs"]},
  {$out: "products"}
])
// Searching on any spec needs an index on every spec field.
db.products.createIndex({spec_screen_in: 1}, {sparse: true})
db.products.createIndex({spec_battery_mah: 1}, {sparse: true})
db.products.createIndex({spec_ram_gb: 1}, {sparse: true})
db.products.createIndex({spec_storage_gb: 1}, {sparse: true})
db.products.createIndex({spec_colour: 1}, {sparse: true})
db.products.createIndex({spec_dual_sim: 1}, {sparse: true})
db.products.createIndex({spec_cpu: 1}, {sparse: true})
db.products.createIndex({spec_ssd_gb: 1}, {sparse: true})
db.products.createIndex({spec_weight_kg: 1}, {sparse: true})
db.products.createIndex({spec_wireless: 1}, {sparse: true})
db.products.createIndex({spec_noise_cancelling: 1}, {sparse: true})
db.products.createIndex({spec_battery_h: 1}, {sparse: true})
db.products.createIndex({spec_size: 1}, {sparse: true})
db.products.createIndex({spec_material: 1}, {sparse: true})
db.products.createIndex({spec_sleeve: 1}, {sparse: true})
db.products.createIndex({spec_eu_size: 1}, {sparse: true})
db.products.createIndex({spec_waterproof: 1}, {sparse: true})
db.products.createIndex({spec_pages: 1}, {sparse: true})
db.products.createIndex({spec_isbn: 1}, {sparse: true})
db.products.createIndex({spec_language: 1}, {sparse: true})
db.products.createIndex({spec_author: 1}, {sparse: true})
db.products.createIndex({spec_hardcover: 1}, {sparse: true})
db.products.createIndex({spec_origin: 1}, {sparse: true})
db.products.createIndex({spec_roast: 1}, {sparse: true})
db.products.createIndex({spec_weight_g: 1}, {sparse: true})
db.products.createIndex({spec_organic: 1}, {sparse: true})
