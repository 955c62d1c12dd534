//! `policies`: insurance policies and product prices that change over
//! time, every version kept with its validity interval: the versioning
//! pattern.

use bson::{Bson, doc};

use super::random::{DAY, EPOCH_SECS, Gen, Keyed, date, round};
use super::{DatasetError, Family, ParamKind, Params, Phase};

pub(super) const FAMILY: Family = Family {
    name: "policies",
    collections: &["policies", "prices"],
    params: &[
        ("policies", ParamKind::Count),
        ("versions_mean", ParamKind::Real),
        ("skus", ParamKind::Count),
        ("price_changes_mean", ParamKind::Real),
    ],
    phases,
};

/// How many versions item `i` has: 1 + a geometric number of revisions.
fn versions(key: Keyed, i: u64, mean: f64) -> u64 {
    let p = 1.0 / mean.max(1.0);
    let u = key.unit(i, 7);
    1 + if p >= 1.0 {
        0
    } else {
        ((1.0 - u).ln() / (1.0 - p).ln()).floor() as u64
    }
    .min(40)
}

/// Version start times: the first in 2026's first month, then revisions
/// every 5 to 60 days.
fn starts(g: &mut Gen, n: u64) -> Vec<i64> {
    let mut t = EPOCH_SECS + g.range(0, 30) * DAY;
    (0..n)
        .map(|_| {
            let s = t;
            t += g.range(5, 60) * DAY;
            s
        })
        .collect()
}

fn phases(root: u64, p: &Params) -> Result<Vec<Phase>, DatasetError> {
    let policies = p.count("policies")?;
    let versions_mean = p.real("versions_mean")?;
    let skus = p.count("skus")?;
    let changes_mean = p.real("price_changes_mean")?;
    let pkey = Keyed::new(root, "policies");
    let skey = Keyed::new(root, "prices");
    let policy_docs: u64 = (0..policies)
        .map(|i| versions(pkey, i, versions_mean))
        .sum();
    let price_docs: u64 = (0..skus).map(|i| versions(skey, i, changes_mean)).sum();

    let policies_phase = Phase::new("policies", policy_docs, move || {
        let mut g = Gen::new(root, "policies.content");
        let mut n = 0u64;
        Box::new((0..policies).flat_map(move |i| {
            let k = versions(pkey, i, versions_mean);
            let holder = g.person_name();
            let kind = *g.pick(&["home", "car", "travel", "health"]);
            let mut premium = round(g.lognormal(480.0, 0.5), 2);
            let mut deductible = *g.pick(&[100i64, 250, 500, 1000]);
            let at = starts(&mut g, k);
            (0..k)
                .map(|v| {
                    let valid_to = at
                        .get(v as usize + 1)
                        .map_or(Bson::Null, |&t| Bson::DateTime(date(t)));
                    let reason = if v == 0 {
                        "issued".to_string()
                    } else {
                        g.sentence(3, 8)
                    };
                    if v > 0 {
                        premium = round(premium * (0.9 + g.unit() * 0.25), 2);
                        if g.chance(0.3) {
                            deductible = *g.pick(&[100i64, 250, 500, 1000]);
                        }
                    }
                    let d = doc! {
                        "_id": pkey.oid(n, at[v as usize]),
                        "policy_no": format!("POL-{:07}", i + 1),
                        "version": v as i64 + 1,
                        "is_current": v + 1 == k,
                        "valid_from": date(at[v as usize]),
                        "valid_to": valid_to,
                        "kind": kind,
                        "holder": holder.as_str(),
                        "premium": premium,
                        "deductible": deductible,
                        "terms": g.text(400),
                        "change_reason": reason,
                    };
                    n += 1;
                    d
                })
                .collect::<Vec<_>>()
        }))
    });

    let prices_phase = Phase::new("prices", price_docs, move || {
        let mut g = Gen::new(root, "prices.content");
        let mut n = 0u64;
        Box::new((0..skus).flat_map(move |i| {
            let k = versions(skey, i, changes_mean);
            let mut price = round(g.lognormal(30.0, 0.9), 2);
            let at = starts(&mut g, k);
            (0..k)
                .map(|v| {
                    if v > 0 {
                        price = round(price * (0.8 + g.unit() * 0.35), 2);
                    }
                    let valid_to = at
                        .get(v as usize + 1)
                        .map_or(Bson::Null, |&t| Bson::DateTime(date(t)));
                    let d = doc! {
                        "_id": skey.oid(n, at[v as usize]),
                        "sku": format!("SKU-{:06}", i + 1),
                        "price": price.max(0.5),
                        "currency": "EUR",
                        "valid_from": date(at[v as usize]),
                        "valid_to": valid_to,
                    };
                    n += 1;
                    d
                })
                .collect::<Vec<_>>()
        }))
    });
    Ok(vec![policies_phase, prices_phase])
}
