//! `shop`: customers, products, orders with lines and invoices. Order lines
//! copy the product's name and the price paid (a snapshot), and invoices
//! copy the billing address as it was: the copies-versus-snapshots lesson.

use bson::{Bson, Document, doc};

use super::products::product;
use super::random::{DAY, EPOCH_SECS, Keyed, Zipf, capitalise, date, round, spread};
use super::{DatasetError, Family, ParamKind, Params, Phase};

pub(super) const FAMILY: Family = Family {
    name: "shop",
    collections: &["customers", "products", "orders", "invoices"],
    params: &[
        ("customers", ParamKind::Count),
        ("products", ParamKind::Count),
        ("orders", ParamKind::Count),
        ("lines_mean", ParamKind::Real),
    ],
    phases,
};

const CITIES: &[(&str, &str)] = &[
    ("Shanghai", "CN"),
    ("Beijing", "CN"),
    ("Taipei", "TW"),
    ("Singapore", "SG"),
    ("Berlin", "DE"),
    ("Lyon", "FR"),
    ("Austin", "US"),
    ("Osaka", "JP"),
];

#[derive(Clone, Copy)]
struct Keys {
    customer: Keyed,
    product: Keyed,
    order: Keyed,
    invoice: Keyed,
}

fn customer_joined(k: Keys, c: u64, customers: u64) -> i64 {
    spread(
        EPOCH_SECS - 200 * DAY,
        200 * DAY,
        c,
        customers,
        k.customer.unit(c, 1),
    )
}

fn customer(k: Keys, c: u64, customers: u64) -> Document {
    let mut g = k.customer.gen_for(c);
    let joined = customer_joined(k, c, customers);
    let name = g.person_name();
    let (city, country) = *g.pick(CITIES);
    let email = format!("{}.{c}@example.com", name.to_lowercase().replace(' ', "."));
    doc! {
        "_id": k.customer.oid(c, joined),
        "name": name,
        "email": email,
        "address": {
            "street": format!("{} {} Road", g.range(1, 999), capitalise(&g.word())),
            "city": city,
            "postcode": format!("{:06}", g.range(0, 999_999)),
            "country": country,
        },
        "created_at": date(joined),
        "tier": *g.weighted(&[("standard", 85), ("gold", 12), ("platinum", 3)]),
    }
}

/// One order and the index of its customer.
fn order(
    k: Keys,
    o: u64,
    orders: u64,
    customers: u64,
    products: u64,
    lines_mean: f64,
    pop: &Zipf,
) -> (Document, u64) {
    let mut g = k.order.gen_for(o);
    let c = g.below(customers);
    let at = spread(EPOCH_SECS, 365 * DAY, o, orders, g.unit());
    let n_lines = 1 + g.geometric(1.0 / lines_mean.max(1.0));
    let mut lines = Vec::new();
    let mut total = 0.0;
    for _ in 0..n_lines {
        let p = pop.rank(g.unit()).min(products.saturating_sub(1));
        let prod = product(k.product, p);
        let list = prod.get_f64("price").unwrap_or(10.0);
        // The price paid: usually the list price, sometimes a discount.
        let unit_price = if g.chance(0.2) {
            round(list * 0.85, 2)
        } else {
            list
        };
        let quantity = 1 + g.geometric(0.6) as i64;
        total += unit_price * quantity as f64;
        lines.push(doc! {
            "product_id": prod.get("_id").cloned().unwrap_or(Bson::Null),
            "sku": prod.get_str("sku").unwrap_or_default(),
            "name": prod.get_str("name").unwrap_or_default(),
            "unit_price": unit_price,
            "quantity": quantity,
        });
    }
    let status = *g.weighted(&[
        ("delivered", 70),
        ("shipped", 15),
        ("paid", 8),
        ("cancelled", 7),
    ]);
    let d = doc! {
        "_id": k.order.oid(o, at),
        "customer_id": k.customer.oid(c, customer_joined(k, c, customers)),
        "created_at": date(at),
        "status": status,
        "lines": lines,
        "total": round(total, 2),
        "currency": "EUR",
    };
    (d, c)
}

fn phases(root: u64, p: &Params) -> Result<Vec<Phase>, DatasetError> {
    let customers = p.count_min("customers", 1)?;
    let products = p.count_min("products", 1)?;
    let orders = p.count("orders")?;
    let lines_mean = p.real("lines_mean")?;
    let k = Keys {
        customer: Keyed::new(root, "customers"),
        product: Keyed::new(root, "products"),
        order: Keyed::new(root, "orders"),
        invoice: Keyed::new(root, "invoices"),
    };
    let order_phase = move |invoices: bool| -> super::DocIter {
        let pop = Zipf::new(products, 0.9);
        Box::new((0..orders).map(move |o| {
            let (d, c) = order(k, o, orders, customers, products, lines_mean, &pop);
            if !invoices {
                return d;
            }
            let cust = customer(k, c, customers);
            let at = d
                .get_datetime("created_at")
                .map(|t| t.timestamp_millis() / 1000)
                .unwrap_or(EPOCH_SECS)
                + 3600;
            let cancelled = d.get_str("status") == Ok("cancelled");
            doc! {
                "_id": k.invoice.oid(o, at),
                "number": format!("INV-2026-{:07}", o + 1),
                "order_id": d.get("_id").cloned().unwrap_or(Bson::Null),
                "customer_id": cust.get("_id").cloned().unwrap_or(Bson::Null),
                "issued_at": date(at),
                "billing": {
                    "name": cust.get_str("name").unwrap_or_default(),
                    "address": cust.get("address").cloned().unwrap_or(Bson::Null),
                },
                "amount": if cancelled { 0.0 } else { d.get_f64("total").unwrap_or(0.0) },
                "status": if cancelled { "void" } else { "issued" },
            }
        }))
    };
    Ok(vec![
        Phase::new("customers", customers, move || {
            Box::new((0..customers).map(move |c| customer(k, c, customers)))
        }),
        Phase::new("products", products, move || {
            Box::new((0..products).map(move |i| product(k.product, i)))
        }),
        Phase::new("orders", orders, move || order_phase(false)),
        Phase::new("invoices", orders, move || order_phase(true)),
    ])
}
