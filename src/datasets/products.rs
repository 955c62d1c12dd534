//! `products`: a catalogue whose documents share a few fields and then
//! differ by category (phones have a battery, shirts a size, books an
//! ISBN): the material of the attribute and polymorphic patterns.

use bson::{Document, doc};

use super::random::{DAY, EPOCH_SECS, Gen, Keyed, capitalise, date, round};
use super::{DatasetError, Family, ParamKind, Params, Phase};

pub(super) const FAMILY: Family = Family {
    name: "products",
    collections: &["products"],
    params: &[("products", ParamKind::Count)],
    phases,
};

/// Categories with their weight in the catalogue and price range (EUR).
const CATEGORIES: &[(&str, u32, f64, f64)] = &[
    ("phone", 10, 120.0, 1400.0),
    ("laptop", 6, 350.0, 3200.0),
    ("headphones", 8, 15.0, 450.0),
    ("shirt", 20, 9.0, 120.0),
    ("shoes", 14, 25.0, 260.0),
    ("book", 30, 6.0, 60.0),
    ("coffee", 12, 4.0, 45.0),
];

const COLOURS: &[&str] = &["black", "white", "navy", "red", "green", "grey", "beige"];
const LANGUAGES: &[&str] = &["zh", "en", "de", "fr", "ja", "es"];

/// The category-dependent fields of one product.
pub(super) fn specs(g: &mut Gen, category: &str) -> Document {
    match category {
        "phone" => doc! {
            "screen_in": round(5.4 + g.unit() * 1.5, 1),
            "battery_mah": g.range(28, 55) * 100,
            "ram_gb": *g.pick(&[4i64, 6, 8, 12, 16]),
            "storage_gb": *g.pick(&[64i64, 128, 256, 512]),
            "colour": *g.pick(COLOURS),
            "dual_sim": g.chance(0.6),
        },
        "laptop" => doc! {
            "screen_in": *g.pick(&[13.3f64, 14.0, 15.6, 16.0]),
            "cpu": format!("{}-{}", capitalise(&g.word()), g.range(3, 9) * 1000 + g.range(0, 99)),
            "ram_gb": *g.pick(&[8i64, 16, 32, 64]),
            "ssd_gb": *g.pick(&[256i64, 512, 1024, 2048]),
            "weight_kg": round(1.0 + g.unit() * 1.6, 2),
        },
        "headphones" => doc! {
            "wireless": g.chance(0.7),
            "noise_cancelling": g.chance(0.4),
            "battery_h": g.range(8, 60),
            "colour": *g.pick(COLOURS),
        },
        "shirt" => doc! {
            "size": *g.pick(&["XS", "S", "M", "L", "XL", "XXL"]),
            "colour": *g.pick(COLOURS),
            "material": *g.pick(&["cotton", "linen", "polyester", "wool"]),
            "sleeve": *g.pick(&["short", "long"]),
        },
        "shoes" => doc! {
            "eu_size": g.range(35, 47),
            "colour": *g.pick(COLOURS),
            "material": *g.pick(&["leather", "canvas", "mesh"]),
            "waterproof": g.chance(0.3),
        },
        "book" => doc! {
            "pages": g.range(80, 900),
            "isbn": format!("978-{}-{:05}-{:03}-{}", g.range(0, 9), g.range(0, 99_999), g.range(0, 999), g.range(0, 9)),
            "language": *g.pick(LANGUAGES),
            "author": g.person_name(),
            "hardcover": g.chance(0.35),
        },
        _ => doc! {
            "origin": capitalise(&g.word()),
            "roast": *g.pick(&["light", "medium", "dark"]),
            "weight_g": *g.pick(&[250i64, 500, 1000]),
            "organic": g.chance(0.4),
        },
    }
}

/// One product, a pure function of its index (orders regenerate it).
pub(super) fn product(key: Keyed, i: u64) -> Document {
    let mut g = key.gen_for(i);
    let (category, _, lo, hi) =
        *g.weighted(&CATEGORIES.iter().map(|c| (*c, c.1)).collect::<Vec<_>>());
    // Prices are log-uniform in the category range: many cheap, few dear.
    let price = round((lo.ln() + g.unit() * (hi / lo).ln()).exp(), 2) - 0.01;
    let brand = capitalise(&g.word());
    let name = format!("{brand} {} {}", capitalise(&g.word()), category);
    let created = EPOCH_SECS + g.range(0, 364) * DAY + g.range(0, DAY - 1);
    let specs = specs(&mut g, category);
    doc! {
        "_id": key.oid(i, created),
        "sku": format!("{}-{:06}", &category[..2].to_uppercase(), i + 1),
        "name": name,
        "brand": brand,
        "category": category,
        "price": round(price.max(0.99), 2),
        "currency": "EUR",
        "stock": g.geometric(0.02) as i64,
        "rating": round(3.0 + g.unit() * 2.0, 1),
        "specs": specs,
        "created_at": date(created),
    }
}

fn phases(root: u64, p: &Params) -> Result<Vec<Phase>, DatasetError> {
    let n = p.count("products")?;
    let key = Keyed::new(root, "products");
    Ok(vec![Phase::new("products", n, move || {
        Box::new((0..n).map(move |i| product(key, i)))
    })])
}
