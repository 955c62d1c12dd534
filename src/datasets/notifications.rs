//! `notifications`: one collection holding several kinds of notification,
//! each with its own fields next to the shared ones: the polymorphic
//! pattern.

use bson::{Document, doc};

use super::random::{DAY, EPOCH_SECS, Gen, Keyed, Zipf, date, spread};
use super::{DatasetError, Family, ParamKind, Params, Phase};

pub(super) const FAMILY: Family = Family {
    name: "notifications",
    collections: &["notifications"],
    params: &[
        ("notifications", ParamKind::Count),
        ("recipients", ParamKind::Count),
    ],
    phases,
};

const TYPES: &[(&str, u32)] = &[
    ("like", 50),
    ("comment", 25),
    ("follow", 15),
    ("mention", 6),
    ("system", 4),
];

fn phases(root: u64, p: &Params) -> Result<Vec<Phase>, DatasetError> {
    let n = p.count("notifications")?;
    let recipients = p.count_min("recipients", 2)?;
    Ok(vec![Phase::new("notifications", n, move || {
        let mut g = Gen::new(root, "notifications");
        let ids = Keyed::new(root, "notifications.ids");
        // Users, posts and comments referred to; their ids are minted like
        // real ones but the documents are not part of this dataset.
        let users = Keyed::new(root, "users");
        let posts = Keyed::new(root, "posts");
        let comments = Keyed::new(root, "comments");
        let active = Zipf::new(recipients, 1.0);
        let user = move |u: u64| users.oid(u, EPOCH_SECS - 100 * DAY + u as i64 * 37);
        Box::new((0..n).map(move |i| {
            let at = spread(EPOCH_SECS, 90 * DAY, i, n, g.unit());
            let kind = *g.weighted(TYPES);
            let to = active.rank(g.unit());
            let mut from = g.below(recipients);
            if from == to {
                from = (from + 1) % recipients;
            }
            let read = g.chance(if at < EPOCH_SECS + 80 * DAY {
                0.85
            } else {
                0.3
            });
            let mut d = doc! {
                "_id": ids.oid(i, at),
                "type": kind,
                "recipient_id": user(to),
                "created_at": date(at),
                "read": read,
            };
            let extra: Document = match kind {
                "like" => doc! {
                    "actor_id": user(from),
                    "post_id": posts.oid(g.below(n), at - g.range(60, 30 * DAY)),
                },
                "comment" => doc! {
                    "actor_id": user(from),
                    "post_id": posts.oid(g.below(n), at - g.range(600, 30 * DAY)),
                    "comment_id": comments.oid(i, at),
                    "excerpt": g.sentence(3, 10),
                },
                "follow" => doc! { "actor_id": user(from) },
                "mention" => doc! {
                    "actor_id": user(from),
                    "post_id": posts.oid(g.below(n), at - g.range(60, DAY)),
                    "context": g.sentence(4, 12),
                },
                _ => doc! {
                    "title": g.sentence(2, 5),
                    "body": g.text(160),
                    "severity": *g.pick(&["info", "warning", "critical"]),
                    "link": format!("https://example.com/notices/{}", g.range(1000, 9999)),
                },
            };
            d.extend(extra);
            d
        }))
    })])
}
