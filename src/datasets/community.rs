//! `community`: a content community (users, posts, comments, follows), the
//! running example of the course. Comments per post and followers per user
//! are heavily skewed, so the outlier and subset patterns have something to
//! bite on.

use std::sync::Arc;

use bson::{Document, doc};

use super::random::{DAY, EPOCH_SECS, Gen, Keyed, Scatter, Zipf, base36, date, spread};
use super::{DatasetError, Family, ParamKind, Params, Phase};

pub(super) const FAMILY: Family = Family {
    name: "community",
    collections: &["users", "posts", "comments", "follows"],
    params: &[
        ("users", ParamKind::Count),
        ("posts", ParamKind::Count),
        ("comments", ParamKind::Count),
        ("follows_mean", ParamKind::Real),
        ("celebrities", ParamKind::Count),
        ("celebrity_reach", ParamKind::Real),
        ("author_zipf", ParamKind::Real),
        ("comment_zipf", ParamKind::Real),
        ("comment_uniform", ParamKind::Real),
        ("body_chars", ParamKind::Count),
        ("tags", ParamKind::Count),
    ],
    phases,
};

const COUNTRIES: &[&str] = &["CN", "TW", "SG", "DE", "FR", "US", "BR", "JP", "IN", "NG"];

/// The pure, random-access part of the model: who wrote what, when, and
/// who follows whom. Both the generators and the counting passes use it.
struct Model {
    users: u64,
    posts: u64,
    user_key: Keyed,
    post_key: Keyed,
    follow_key: Keyed,
    authors: Zipf,
    user_scatter: Scatter,
    popular: Zipf,
    celebrities: u64,
    reach: f64,
    follows_mean: f64,
}

impl Model {
    fn joined(&self, u: u64) -> i64 {
        spread(
            EPOCH_SECS,
            300 * DAY,
            u,
            self.users,
            self.user_key.unit(u, 1),
        )
    }

    fn user_id(&self, u: u64) -> bson::oid::ObjectId {
        self.user_key.oid(u, self.joined(u))
    }

    fn author(&self, p: u64) -> u64 {
        self.user_scatter
            .map(self.authors.rank(self.post_key.unit(p, 1)))
    }

    fn posted(&self, p: u64) -> i64 {
        let t = spread(
            EPOCH_SECS + 30 * DAY,
            335 * DAY,
            p,
            self.posts,
            self.post_key.unit(p, 2),
        );
        t.max(self.joined(self.author(p)) + 3600)
    }

    fn post_id(&self, p: u64) -> bson::oid::ObjectId {
        self.post_key.oid(p, self.posted(p))
    }

    fn is_celebrity(&self, u: u64) -> bool {
        (0..self.celebrities).any(|c| self.user_scatter.map(c) == u)
    }

    /// The accounts user `u` follows: some celebrities (the j-th with
    /// probability reach/(j+1)) and an exponential number of others drawn
    /// by popularity, all distinct and never `u` itself.
    fn followees(&self, u: u64) -> Vec<u64> {
        let mut out = Vec::new();
        for c in 0..self.celebrities {
            let v = self.user_scatter.map(c);
            if v != u && self.follow_key.unit(u, c) < self.reach / (c + 1) as f64 {
                out.push(v);
            }
        }
        let want = (-self.follows_mean * (1.0 - self.follow_key.unit(u, 1 << 32)).ln()) as u64;
        let want = want.min(self.users.saturating_sub(1 + out.len() as u64));
        let mut draw = 0u64;
        let mut placed = 0u64;
        // Bounded retries keep the loop finite; the rare miss just means
        // one followee fewer, identically in every pass.
        while placed < want && draw < want * 8 + 16 {
            let v = self
                .user_scatter
                .map(self.popular.rank(self.follow_key.unit(u, (1 << 33) + draw)));
            draw += 1;
            if v != u && !out.contains(&v) {
                out.push(v);
                placed += 1;
            }
        }
        out
    }
}

fn phases(root: u64, p: &Params) -> Result<Vec<Phase>, DatasetError> {
    let users = p.count_min("users", 2)?;
    let posts = p.count_min("posts", 1)?;
    let comments = p.count("comments")?;
    let celebrities = p.count("celebrities")?.min(users);
    let model = Arc::new(Model {
        users,
        posts,
        user_key: Keyed::new(root, "users"),
        post_key: Keyed::new(root, "posts"),
        follow_key: Keyed::new(root, "follows"),
        authors: Zipf::new(users, p.real("author_zipf")?),
        user_scatter: Scatter::new(users, root),
        popular: Zipf::new(users, 0.8),
        celebrities,
        reach: p.prob("celebrity_reach")?,
        follows_mean: p.real("follows_mean")?,
    });
    let comment_zipf = p.real("comment_zipf")?;
    let comment_uniform = p.prob("comment_uniform")?;
    let body_chars = p.count("body_chars")? as f64;
    let tag_count = p.count_min("tags", 1)?;

    // Counting passes: exact counters on users, and the size of `follows`.
    let mut followers = vec![0u32; users as usize];
    let mut following = vec![0u32; users as usize];
    let mut post_count = vec![0u32; users as usize];
    for u in 0..users {
        let f = model.followees(u);
        following[u as usize] = f.len() as u32;
        for v in f {
            followers[v as usize] += 1;
        }
    }
    for i in 0..posts {
        post_count[model.author(i) as usize] += 1;
    }
    let follows: u64 = following.iter().map(|&n| u64::from(n)).sum();

    let m = Arc::clone(&model);
    let users_phase = Phase::new("users", users, move || {
        let mut g = Gen::new(root, "users.content");
        Box::new((0..users).map(move |u| {
            let handle = handle(&g.word(), u);
            let name = g.person_name();
            let bio = g.sentence(4, 18);
            let city = super::random::capitalise(&g.word());
            let country = *g.pick(COUNTRIES);
            doc! {
                "_id": m.user_id(u),
                "handle": &handle,
                "name": name,
                "email": format!("{handle}@example.com"),
                "avatar": format!("https://cdn.example.com/avatars/{handle}.png"),
                "bio": bio,
                "location": { "city": city, "country": country },
                "joined_at": date(m.joined(u)),
                "verified": m.is_celebrity(u),
                "follower_count": i64::from(followers[u as usize]),
                "following_count": i64::from(following[u as usize]),
                "post_count": i64::from(post_count[u as usize]),
            }
        }))
    });

    let m = Arc::clone(&model);
    let posts_phase = Phase::new("posts", posts, move || {
        let mut g = Gen::new(root, "posts.content");
        let tag_key = Keyed::new(root, "tags");
        let tags: Vec<String> = (0..tag_count).map(|k| tag_key.gen_for(k).word()).collect();
        let tag_zipf = Zipf::new(tag_count, 1.0);
        Box::new((0..posts).map(move |i| {
            let title = super::random::capitalise(&g.words_between(3, 9));
            let slug = format!("{}-{}", title.to_lowercase().replace(' ', "-"), base36(i));
            let n_tags = g.range(1, 5) as usize;
            let mut chosen: Vec<&str> = Vec::with_capacity(n_tags);
            for _ in 0..n_tags {
                let t = tags[tag_zipf.rank(g.unit()) as usize].as_str();
                if !chosen.contains(&t) {
                    chosen.push(t);
                }
            }
            let body = g.paragraphs_around(body_chars, 0.5);
            let likes = g.lognormal(4.0, 1.4) as i64;
            let views = likes * g.range(10, 60) + g.range(0, 50);
            let status = if g.chance(0.92) { "published" } else { "draft" };
            doc! {
                "_id": m.post_id(i),
                "author_id": m.user_id(m.author(i)),
                "title": title,
                "slug": slug,
                "body": body,
                "tags": chosen,
                "status": status,
                "created_at": date(m.posted(i)),
                "likes": likes,
                "views": views,
            }
        }))
    });

    let m = Arc::clone(&model);
    let comments_phase = Phase::new("comments", comments, move || {
        let mut g = Gen::new(root, "comments");
        let key = Keyed::new(root, "comments.ids");
        let zipf = Zipf::new(m.posts, comment_zipf);
        let scatter = Scatter::new(m.posts, root ^ 0xC0);
        Box::new((0..comments).map(move |i| {
            let post = if g.chance(comment_uniform) {
                g.below(m.posts)
            } else {
                scatter.map(zipf.rank(g.unit()))
            };
            let author = g.below(m.users);
            let at = m.posted(post) + 60 + g.exp(2.0 * DAY as f64) as i64;
            let body = g.text_around(120.0, 0.7);
            let likes = g.geometric(0.45) as i64;
            doc! {
                "_id": key.oid(i, at),
                "post_id": m.post_id(post),
                "author_id": m.user_id(author),
                "body": body,
                "created_at": date(at),
                "likes": likes,
            }
        }))
    });

    let m = model;
    let follows_phase = Phase::new("follows", follows, move || {
        let key = Keyed::new(root, "follows.ids");
        let mut n = 0u64;
        Box::new((0..m.users).flat_map(move |u| {
            let since = m.joined(u);
            let rows: Vec<Document> = m
                .followees(u)
                .into_iter()
                .map(|v| {
                    let at = since.max(m.joined(v)) + (key.unit(n, 1) * 60.0 * DAY as f64) as i64;
                    let d = doc! {
                        "_id": key.oid(n, at),
                        "follower_id": m.user_id(u),
                        "followee_id": m.user_id(v),
                        "created_at": date(at),
                    };
                    n += 1;
                    d
                })
                .collect();
            rows
        }))
    });

    Ok(vec![
        users_phase,
        posts_phase,
        comments_phase,
        follows_phase,
    ])
}

/// A user's handle: a word, then the user's number in base 36 after an
/// underscore, which neither contains, so no two users share one (a word
/// running into the number, `sel`+`eg` and `sele`+`g`, once collided at
/// the large scale and broke the unique index on handles).
fn handle(word: &str, u: u64) -> String {
    format!("{word}_{}", base36(u))
}

#[cfg(test)]
mod handle_tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn handles_are_unique_whatever_the_words() {
        // "a" + base36(397) = "a"+"b1", and "ab" + base36(1): the same
        // text without a separator.
        assert_ne!(super::handle("a", 11 * 36 + 1), super::handle("ab", 1));
        let words = ["a", "ab", "abc", "b", "ba", "bab"];
        let mut seen = std::collections::HashSet::new();
        for u in 0..20_000u64 {
            for w in words {
                let h = super::handle(w, u);
                assert!(seen.insert(h.clone()), "{h} twice");
            }
        }
    }
}
