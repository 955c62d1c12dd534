//! `people`: people with their addresses, phones (one-to-few) and one
//! passport each at most (one-to-one), stored normalised, as a relational
//! schema would, so that lessons can fold them into one document.

use bson::{Bson, doc};

use super::random::{DAY, EPOCH_SECS, Gen, Keyed, capitalise, date};
use super::{DatasetError, Family, ParamKind, Params, Phase};

pub(super) const FAMILY: Family = Family {
    name: "people",
    collections: &["people", "addresses", "phones", "passports"],
    params: &[
        ("people", ParamKind::Count),
        ("passport_rate", ParamKind::Real),
    ],
    phases,
};

const COUNTRIES: &[&str] = &["CN", "TW", "SG", "DE", "FR", "US", "JP", "BR"];

/// How many addresses (1–3) and phones (0–3) person `i` has, and whether
/// they hold a passport: random access, so counts are exact up front.
fn shape(k: Keyed, i: u64, passport_rate: f64) -> (u64, u64, bool) {
    let a = [1, 1, 1, 2, 2, 3][k.below(i, 1, 6) as usize];
    let ph = [0, 1, 1, 1, 2, 2, 3][k.below(i, 2, 7) as usize];
    (a, ph, k.unit(i, 3) < passport_rate)
}

fn person_id(k: Keyed, i: u64) -> bson::oid::ObjectId {
    k.oid(i, EPOCH_SECS - 400 * DAY + i as i64 * 97)
}

fn phases(root: u64, p: &Params) -> Result<Vec<Phase>, DatasetError> {
    let people = p.count("people")?;
    let rate = p.prob("passport_rate")?;
    let k = Keyed::new(root, "people");
    let (mut na, mut np, mut nq) = (0, 0, 0);
    for i in 0..people {
        let (a, ph, pass) = shape(k, i, rate);
        na += a;
        np += ph;
        nq += u64::from(pass);
    }
    // Child collections walk the people in order and emit each one's rows.
    let children = move |tag: &'static str, kind: u8| -> super::DocIter {
        let mut g = Gen::new(root, tag);
        let ids = Keyed::new(root, tag);
        let mut n = 0u64;
        Box::new((0..people).flat_map(move |i| {
            let (a, ph, pass) = shape(k, i, rate);
            let rows = match kind {
                0 => a,
                1 => ph,
                _ => u64::from(pass),
            };
            let owner = person_id(k, i);
            (0..rows)
                .map(|r| {
                    let at = EPOCH_SECS - 400 * DAY + i as i64 * 97 + 60;
                    let mut d = doc! { "_id": ids.oid(n, at), "person_id": owner };
                    let extra = match kind {
                        0 => doc! {
                            "kind": (["home", "work", "other"][r as usize % 3]),
                            "street": format!("{} {} Street", g.range(1, 400), capitalise(&g.word())),
                            "city": capitalise(&g.word()),
                            "postcode": format!("{:05}", g.range(0, 99_999)),
                            "country": *g.pick(COUNTRIES),
                        },
                        1 => doc! {
                            "kind": *g.pick(&["mobile", "home", "work"]),
                            "number": format!("+{} {:03} {:04} {:04}", g.range(1, 99), g.range(0, 999), g.range(0, 9999), g.range(0, 9999)),
                            "primary": r == 0,
                        },
                        _ => {
                            let issued = EPOCH_SECS - g.range(30, 3_000) * DAY;
                            doc! {
                                "number": format!("{}{:08}", (b'A' + g.below(26) as u8) as char, g.range(0, 99_999_999)),
                                "country": *g.pick(COUNTRIES),
                                "issued": date(issued),
                                "expires": date(issued + 3_652 * DAY),
                            }
                        }
                    };
                    d.extend(extra);
                    n += 1;
                    d
                })
                .collect::<Vec<_>>()
        }))
    };
    Ok(vec![
        Phase::new("people", people, move || {
            let mut g = Gen::new(root, "people.content");
            Box::new((0..people).map(move |i| {
                let name = g.person_name();
                let born = EPOCH_SECS - g.range(18 * 365, 85 * 365) * DAY;
                doc! {
                    "_id": person_id(k, i),
                    "name": &name,
                    "email": format!("{}.{}@example.org", name.to_lowercase().replace(' ', "."), i),
                    "born": date(born),
                    "nationality": *g.pick(COUNTRIES),
                    "notes": if g.chance(0.3) { Bson::String(g.sentence(5, 15)) } else { Bson::Null },
                }
            }))
        }),
        Phase::new("addresses", na, move || children("addresses", 0)),
        Phase::new("phones", np, move || children("phones", 1)),
        Phase::new("passports", nq, move || children("passports", 2)),
    ])
}
