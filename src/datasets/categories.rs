//! `categories`: a forest of product categories of uneven depth, each node
//! knowing only its parent: the starting point of the tree patterns
//! (parent references, child arrays, ancestor arrays, materialised paths).

use bson::{Bson, doc};

use super::random::{EPOCH_SECS, Gen, Keyed, capitalise, date};
use super::{DatasetError, Family, ParamKind, Params, Phase};

pub(super) const FAMILY: Family = Family {
    name: "categories",
    collections: &["categories"],
    params: &[
        ("nodes", ParamKind::Count),
        ("roots", ParamKind::Count),
        ("max_depth", ParamKind::Count),
        ("chain", ParamKind::Real),
    ],
    phases,
};

fn phases(root: u64, p: &Params) -> Result<Vec<Phase>, DatasetError> {
    let nodes = p.count("nodes")?;
    let roots = p.count_min("roots", 1)?.min(nodes.max(1));
    let max_depth = p.count_min("max_depth", 2)?.min(250) as u8;
    let chain = p.prob("chain")?;
    Ok(vec![Phase::new("categories", nodes, move || {
        let mut g = Gen::new(root, "categories");
        let ids = Keyed::new(root, "categories.ids");
        let id = move |i: u64| ids.oid(i, EPOCH_SECS + i as i64);
        // One byte of depth and four of parent per node: the only state,
        // so even a million nodes cost a few megabytes.
        let mut depth: Vec<u8> = Vec::new();
        let mut parent: Vec<u32> = Vec::new();
        let mut siblings: Vec<u32> = Vec::new();
        Box::new((0..nodes).map(move |i| {
            let par = if i < roots {
                None
            } else {
                // Mostly attach to any earlier node (a bushy, shallow
                // tree); with probability `chain`, to one of the latest
                // few (long thin branches). Too deep: climb up.
                let mut q = if g.chance(chain) {
                    i - 1 - g.below(i.min(4))
                } else {
                    g.below(i)
                };
                while depth[q as usize] + 1 >= max_depth {
                    q = u64::from(parent[q as usize]);
                }
                Some(q)
            };
            let d = par.map_or(0, |q| depth[q as usize] + 1);
            depth.push(d);
            parent.push(par.map_or(u32::MAX, |q| q as u32));
            siblings.push(0);
            let position = match par {
                Some(q) => {
                    siblings[q as usize] += 1;
                    i64::from(siblings[q as usize])
                }
                None => i as i64 + 1,
            };
            let name = capitalise(&g.words_between(1, 2));
            doc! {
                "_id": id(i),
                "name": &name,
                "slug": format!("{}-{}", name.to_lowercase().replace(' ', "-"), i + 1),
                "parent_id": par.map_or(Bson::Null, |q| Bson::ObjectId(id(q))),
                "depth": i32::from(d),
                "position": position,
                "created_at": date(EPOCH_SECS + i as i64),
            }
        }))
    })])
}
