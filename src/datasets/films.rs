//! `films`: films that embed their cast, and the actors. Most casts are a
//! few dozen names; a handful of outliers list thousands (crowd scenes,
//! anthologies), which is what the outlier pattern is about.

use std::collections::HashSet;

use bson::doc;

use super::random::{Gen, Keyed, Scatter, Zipf, capitalise, date};
use super::{DatasetError, Family, ParamKind, Params, Phase};

pub(super) const FAMILY: Family = Family {
    name: "films",
    collections: &["actors", "films"],
    params: &[
        ("films", ParamKind::Count),
        ("actors", ParamKind::Count),
        ("cast_median", ParamKind::Real),
        ("outliers", ParamKind::Count),
        ("outlier_cast", ParamKind::Count),
    ],
    phases,
};

const GENRES: &[&str] = &[
    "drama",
    "comedy",
    "thriller",
    "documentary",
    "animation",
    "romance",
    "sci-fi",
    "horror",
    "war",
];
const COUNTRIES: &[&str] = &["CN", "HK", "TW", "KR", "JP", "FR", "US", "IN", "IT", "DE"];

/// Seconds from 1970 to Jan 1 of `year` (years after 1900; leap days
/// counted), for birth dates and release dates.
fn year_start(year: i64) -> i64 {
    let days = (year - 1970) * 365 + ((year - 1969) as f64 / 4.0).floor() as i64;
    days * 86_400
}

fn phases(root: u64, p: &Params) -> Result<Vec<Phase>, DatasetError> {
    let films = p.count("films")?;
    let actors = p.count_min("actors", 1)?;
    let cast_median = p.real("cast_median")?;
    let outliers = p.count("outliers")?.min(films);
    let outlier_cast = p.count("outlier_cast")?.min(actors);
    let actor_key = Keyed::new(root, "actors");
    let actor_name = move |a: u64| actor_key.gen_for(a).person_name();
    let actor_born = move |a: u64| 1930 + actor_key.below(a, 1, 75) as i64;
    // Ids carry the records' creation time: an import on 2025-01-01,
    // one second per record.
    let actor_id = move |a: u64| actor_key.oid(a, 1_735_689_600 + a as i64);

    let actors_phase = Phase::new("actors", actors, move || {
        let mut g = Gen::new(root, "actors.content");
        Box::new((0..actors).map(move |a| {
            let born = actor_born(a);
            doc! {
                "_id": actor_id(a),
                "name": actor_name(a),
                "born": date(year_start(born) + g.range(0, 364) * 86_400),
                "country": *g.pick(COUNTRIES),
                "bio": g.sentence(8, 24),
            }
        }))
    });

    let films_phase = Phase::new("films", films, move || {
        let mut g = Gen::new(root, "films");
        let film_key = Keyed::new(root, "films.ids");
        let outlier_at = Scatter::new(films, root ^ 0xF1);
        let outlier_set: HashSet<u64> = (0..outliers).map(|r| outlier_at.map(r)).collect();
        let fame = Zipf::new(actors, 0.9);
        let fame_order = Scatter::new(actors, root ^ 0xA1);
        Box::new((0..films).map(move |f| {
            let size = if outlier_set.contains(&f) {
                (outlier_cast as f64 * (0.5 + g.unit())) as u64
            } else {
                (g.lognormal(cast_median, 0.6) as u64).clamp(3, 150)
            }
            .min(actors);
            // Distinct actors, popular ones more often; a collision moves
            // on to the next actor so the loop always ends.
            let mut seen = HashSet::with_capacity(size as usize);
            let mut cast = Vec::with_capacity(size as usize);
            for billing in 0..size {
                let mut a = fame_order.map(fame.rank(g.unit()));
                while !seen.insert(a) {
                    a = (a + 1) % actors;
                }
                let role = if billing < 3 {
                    "lead"
                } else if billing < 12 {
                    "supporting"
                } else {
                    "extra"
                };
                cast.push(doc! {
                    "actor_id": actor_id(a),
                    "name": actor_name(a),
                    "character": capitalise(&g.word()),
                    "billing": billing as i64 + 1,
                    "role": role,
                });
            }
            let year = 1950 + g.range(0, 75);
            let n_genres = g.range(1, 3);
            let mut genres: Vec<&str> = Vec::new();
            for _ in 0..n_genres {
                let x = *g.pick(GENRES);
                if !genres.contains(&x) {
                    genres.push(x);
                }
            }
            let released = year_start(year) + g.range(0, 364) * 86_400;
            doc! {
                "_id": film_key.oid(f, 1_735_689_600 + f as i64),
                "title": capitalise(&g.words_between(1, 5)),
                "year": year,
                "released": date(released),
                "runtime_min": g.range(70, 190),
                "genres": genres,
                "country": *g.pick(COUNTRIES),
                "rating": super::random::round(2.0 + g.unit() * 7.5, 1),
                "plot": g.text_around(300.0, 0.5),
                "cast": cast,
            }
        }))
    });
    Ok(vec![actors_phase, films_phase])
}
