//! Seeded datasets: determinism, sizes, skew, references, export, loading.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::Hasher;

use bson::{Bson, Document, doc};
use schemalab::datasets::{
    self, Catalog, DatasetError, ExtJsonMode, Scale, export_extjson, export_extjson_with,
    family_names, load, load_catalog,
};

fn catalog() -> Catalog {
    Catalog::builtin().unwrap()
}

/// A digest of every (collection, BSON bytes) pair of a run.
fn digest(name: &str, scale: Scale, seed: u64) -> (u64, u64) {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut n = 0;
    for (coll, d) in catalog().generate(name, scale, seed).unwrap() {
        h.write(coll.as_bytes());
        let mut bytes = Vec::new();
        d.to_writer(&mut bytes).unwrap();
        h.write(&bytes);
        n += 1;
    }
    (h.finish(), n)
}

fn collect(name: &str, scale: Scale, seed: u64) -> BTreeMap<String, Vec<Document>> {
    let mut out: BTreeMap<String, Vec<Document>> = BTreeMap::new();
    for (c, d) in catalog().generate(name, scale, seed).unwrap() {
        out.entry(c).or_default().push(d);
    }
    out
}

#[test]
fn every_family_is_in_the_catalog() {
    let cat = catalog();
    let mut in_catalog: Vec<&str> = cat.datasets().map(|d| d.name.as_str()).collect();
    let mut known = family_names();
    in_catalog.sort_unstable();
    known.sort_unstable();
    assert_eq!(in_catalog, known);
    assert_eq!(known.len(), 10);
}

#[test]
fn same_seed_gives_the_same_bytes_and_another_seed_differs() {
    for name in family_names() {
        let a = digest(name, Scale::Tiny, 7);
        let b = digest(name, Scale::Tiny, 7);
        let c = digest(name, Scale::Tiny, 8);
        assert_eq!(a, b, "{name}: same seed, different bytes");
        assert_ne!(a.0, c.0, "{name}: different seeds, same bytes");
        assert!(a.1 > 0, "{name}: empty");
    }
}

#[test]
fn tiny_scales_are_small_and_counts_are_exact() {
    let cat = catalog();
    for spec in cat.datasets() {
        let stream = cat.generate(&spec.name, Scale::Tiny, 1).unwrap();
        let announced: Vec<(String, u64)> = stream.counts().to_vec();
        let names: Vec<&str> = announced.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(
            names,
            spec.collections
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
        );
        let mut seen: Vec<(String, u64)> = Vec::new();
        for (c, _) in stream {
            match seen.last_mut() {
                Some((last, n)) if *last == c => *n += 1,
                _ => seen.push((c, 1)),
            }
        }
        let nonempty: Vec<_> = announced.iter().filter(|(_, n)| *n > 0).cloned().collect();
        assert_eq!(seen, nonempty, "{}", spec.name);
        let total: u64 = announced.iter().map(|(_, n)| n).sum();
        assert!(
            (200..=5_000).contains(&total),
            "{}: tiny has {total} docs",
            spec.name
        );
        assert_eq!(
            datasets::count(&spec.name, Scale::Tiny, 1, spec.params(Scale::Tiny)).unwrap(),
            announced
        );
    }
}

#[test]
fn counts_follow_the_catalog_parameters() {
    let cat = catalog();
    for scale in Scale::ALL {
        let p =
            |name: &str, param: &str| cat.get(name).unwrap().params(scale).count(param).unwrap();
        let counts = |name: &str| -> HashMap<String, u64> {
            datasets::count(name, scale, 3, cat.get(name).unwrap().params(scale))
                .unwrap()
                .into_iter()
                .collect()
        };
        let c = counts("community");
        assert_eq!(c["users"], p("community", "users"));
        assert_eq!(c["posts"], p("community", "posts"));
        assert_eq!(c["comments"], p("community", "comments"));
        let s = counts("sensors");
        assert_eq!(
            s["readings"],
            p("sensors", "sensors") * p("sensors", "minutes")
        );
        let shop = counts("shop");
        assert_eq!(shop["orders"], p("shop", "orders"));
        assert_eq!(shop["invoices"], p("shop", "orders"));
        assert_eq!(counts("products")["products"], p("products", "products"));
        assert_eq!(counts("categories")["categories"], p("categories", "nodes"));
    }
    let large = |name: &str| -> u64 {
        datasets::count(
            name,
            Scale::Large,
            3,
            cat.get(name).unwrap().params(Scale::Large),
        )
        .unwrap()
        .iter()
        .map(|(_, n)| n)
        .sum()
    };
    assert!(large("sensors") >= 1_000_000);
    assert!(large("community") >= 1_000_000);
    assert!(large("hosts_logs") >= 1_000_000);
}

#[test]
fn ids_are_unique_per_collection() {
    for name in family_names() {
        for (coll, docs) in collect(name, Scale::Tiny, 11) {
            let ids: HashSet<String> = docs
                .iter()
                .map(|d| d.get("_id").unwrap().to_string())
                .collect();
            assert_eq!(ids.len(), docs.len(), "{name}.{coll}");
        }
    }
}

#[test]
fn comments_per_post_are_zipf_skewed_at_default_scale() {
    let data = collect("community", Scale::Default, 42);
    let mut per_post: HashMap<String, u64> = data["posts"]
        .iter()
        .map(|p| (p.get("_id").unwrap().to_string(), 0))
        .collect();
    for c in &data["comments"] {
        *per_post
            .get_mut(&c.get("post_id").unwrap().to_string())
            .expect("comment of an unknown post") += 1;
    }
    let mut counts: Vec<u64> = per_post.into_values().collect();
    counts.sort_unstable();
    let median = counts[counts.len() / 2].max(1);
    let top = *counts.last().unwrap();
    assert!(top >= 10 * median, "top {top}, median {median}");
    assert!(
        top >= 100 * median,
        "expected a strong skew: top {top}, median {median}"
    );
}

#[test]
fn community_references_and_counters_agree() {
    let data = collect("community", Scale::Tiny, 5);
    let users: HashMap<String, &Document> = data["users"]
        .iter()
        .map(|u| (u.get("_id").unwrap().to_string(), u))
        .collect();
    let mut followers: HashMap<String, i64> = HashMap::new();
    let mut pairs = HashSet::new();
    for f in &data["follows"] {
        let (a, b) = (
            f.get("follower_id").unwrap().to_string(),
            f.get("followee_id").unwrap().to_string(),
        );
        assert!(users.contains_key(&a) && users.contains_key(&b));
        assert_ne!(a, b, "self-follow");
        assert!(
            pairs.insert((a.to_string(), b.to_string())),
            "duplicate follow"
        );
        *followers.entry(b).or_default() += 1;
    }
    for (id, u) in &users {
        assert_eq!(
            u.get_i64("follower_count").unwrap(),
            followers.get(id).copied().unwrap_or(0)
        );
    }
    let mut posts_by: HashMap<String, i64> = HashMap::new();
    for p in &data["posts"] {
        *posts_by
            .entry(p.get("author_id").unwrap().to_string())
            .or_default() += 1;
        assert!(p.get_str("body").unwrap().len() > 100);
    }
    for (id, u) in &users {
        assert_eq!(
            u.get_i64("post_count").unwrap(),
            posts_by.get(id).copied().unwrap_or(0)
        );
    }
    let post_times: HashMap<String, bson::DateTime> = data["posts"]
        .iter()
        .map(|p| {
            (
                p.get("_id").unwrap().to_string(),
                *p.get_datetime("created_at").unwrap(),
            )
        })
        .collect();
    for c in &data["comments"] {
        let posted = post_times[&c.get("post_id").unwrap().to_string()];
        assert!(
            *c.get_datetime("created_at").unwrap() > posted,
            "comment before its post"
        );
    }
    // Timestamps start at the fixed epoch.
    let epoch = bson::DateTime::from_millis(1_767_225_600_000);
    assert!(
        data["users"]
            .iter()
            .all(|u| *u.get_datetime("joined_at").unwrap() >= epoch)
    );
}

#[test]
fn shop_lines_snapshot_existing_products() {
    let data = collect("shop", Scale::Tiny, 9);
    let products: HashMap<String, &Document> = data["products"]
        .iter()
        .map(|p| (p.get("_id").unwrap().to_string(), p))
        .collect();
    let customers: HashSet<String> = data["customers"]
        .iter()
        .map(|c| c.get("_id").unwrap().to_string())
        .collect();
    let orders: HashMap<String, &Document> = data["orders"]
        .iter()
        .map(|o| (o.get("_id").unwrap().to_string(), o))
        .collect();
    for o in &data["orders"] {
        assert!(customers.contains(&o.get("customer_id").unwrap().to_string()));
        let mut total = 0.0;
        for line in o.get_array("lines").unwrap() {
            let line = line.as_document().unwrap();
            let p = products[&line.get("product_id").unwrap().to_string()];
            assert_eq!(p.get_str("name").unwrap(), line.get_str("name").unwrap());
            assert!(line.get_f64("unit_price").unwrap() <= p.get_f64("price").unwrap());
            total += line.get_f64("unit_price").unwrap() * line.get_i64("quantity").unwrap() as f64;
        }
        assert!((o.get_f64("total").unwrap() - total).abs() < 0.01);
    }
    for inv in &data["invoices"] {
        let o = orders[&inv.get("order_id").unwrap().to_string()];
        assert_eq!(inv.get("customer_id"), o.get("customer_id"));
    }
}

#[test]
fn films_have_a_long_tail_of_cast_sizes() {
    let data = collect("films", Scale::Default, 2);
    let actors: HashSet<String> = data["actors"]
        .iter()
        .map(|a| a.get("_id").unwrap().to_string())
        .collect();
    let mut sizes: Vec<usize> = data["films"]
        .iter()
        .map(|f| f.get_array("cast").unwrap().len())
        .collect();
    for f in data["films"].iter().take(50) {
        for m in f.get_array("cast").unwrap() {
            assert!(
                actors.contains(
                    &m.as_document()
                        .unwrap()
                        .get("actor_id")
                        .unwrap()
                        .to_string()
                )
            );
        }
    }
    sizes.sort_unstable();
    let median = sizes[sizes.len() / 2];
    assert!((10..=60).contains(&median), "median cast {median}");
    assert!(
        *sizes.last().unwrap() >= 1_000,
        "largest cast {}",
        sizes.last().unwrap()
    );
}

#[test]
fn products_have_category_dependent_specs() {
    let data = collect("products", Scale::Tiny, 4);
    let mut keys_by_category: HashMap<String, HashSet<String>> = HashMap::new();
    for p in &data["products"] {
        let specs = p.get_document("specs").unwrap();
        keys_by_category
            .entry(p.get_str("category").unwrap().to_string())
            .or_default()
            .extend(specs.keys().cloned());
    }
    assert!(keys_by_category["phone"].contains("battery_mah"));
    assert!(keys_by_category["shirt"].contains("size"));
    assert!(keys_by_category["book"].contains("isbn"));
    assert!(!keys_by_category["book"].contains("battery_mah"));
}

#[test]
fn logs_concentrate_on_a_few_hosts() {
    let data = collect("hosts_logs", Scale::Tiny, 3);
    let mut per_host: HashMap<String, usize> = HashMap::new();
    for l in &data["logs"] {
        *per_host
            .entry(l.get("host_id").unwrap().to_string())
            .or_default() += 1;
    }
    let top = per_host.values().max().unwrap();
    assert!(*top * 3 >= data["logs"].len(), "top host has {top}");
}

#[test]
fn category_trees_have_uneven_depth() {
    let data = collect("categories", Scale::Tiny, 1);
    let parent: HashMap<String, String> = data["categories"]
        .iter()
        .map(|c| {
            (
                c.get("_id").unwrap().to_string(),
                c.get("parent_id").unwrap().to_string(),
            )
        })
        .collect();
    let depth = |mut id: String| {
        let mut d = 0;
        while let Some(p) = parent.get(&id).filter(|p| *p != "null") {
            id = p.clone();
            d += 1;
        }
        d
    };
    let depths: Vec<usize> = parent.keys().map(|id| depth(id.clone())).collect();
    let max = *depths.iter().max().unwrap();
    assert!((3..6).contains(&max), "max depth {max}");
    assert!(depths.iter().filter(|d| **d == 1).count() > 1);
}

#[test]
fn versions_chain_without_gaps() {
    let data = collect("policies", Scale::Tiny, 1);
    let mut by_policy: BTreeMap<String, Vec<&Document>> = BTreeMap::new();
    for p in &data["policies"] {
        by_policy
            .entry(p.get_str("policy_no").unwrap().to_string())
            .or_default()
            .push(p);
    }
    for versions in by_policy.values() {
        for pair in versions.windows(2) {
            assert_eq!(pair[0].get("valid_to"), pair[1].get("valid_from"));
        }
        let last = versions.last().unwrap();
        assert_eq!(last.get("valid_to"), Some(&Bson::Null));
        assert!(last.get_bool("is_current").unwrap());
    }
}

#[test]
fn notifications_carry_type_specific_fields() {
    let data = collect("notifications", Scale::Tiny, 1);
    let mut types = HashSet::new();
    for n in &data["notifications"] {
        let t = n.get_str("type").unwrap();
        types.insert(t.to_string());
        match t {
            "system" => assert!(n.contains_key("severity") && !n.contains_key("actor_id")),
            "comment" => assert!(n.contains_key("comment_id") && n.contains_key("post_id")),
            _ => assert!(n.contains_key("actor_id")),
        }
    }
    assert_eq!(types.len(), 5);
}

#[test]
fn export_round_trips_through_extended_json() {
    let dir = tempfile::tempdir().unwrap();
    for name in family_names() {
        let out = dir.path().join(name);
        let paths = export_extjson(name, Scale::Tiny, 5, &out).unwrap();
        let expected = collect(name, Scale::Tiny, 5);
        assert_eq!(paths.len(), expected.len().max(paths.len()));
        for path in paths {
            let coll = path.file_stem().unwrap().to_str().unwrap().to_string();
            let json: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let docs: Vec<Document> = json
                .as_array()
                .unwrap()
                .iter()
                .map(|v| match Bson::try_from(v.clone()).unwrap() {
                    Bson::Document(d) => d,
                    other => panic!("not a document: {other}"),
                })
                .collect();
            assert_eq!(
                &docs,
                expected.get(&coll).unwrap_or(&Vec::new()),
                "{name}.{coll}"
            );
        }
    }
    // Relaxed mode is valid JSON too, with dates as ISO strings.
    let relaxed = dir.path().join("relaxed");
    let paths = export_extjson_with(
        &catalog(),
        "sensors",
        Scale::Tiny,
        5,
        &relaxed,
        ExtJsonMode::Relaxed,
    )
    .unwrap();
    let text = std::fs::read_to_string(&paths[1]).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 4 * 240);
    assert!(
        text.contains("\"$date\":\"2026-01-01T00:00:00Z\""),
        "{}",
        &text[..200]
    );
}

#[test]
fn catalog_errors_name_file_line_and_column() {
    let err = Catalog::parse("[sensors]\nsummary = 3\n", "cat.toml").unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("cat.toml:2:"), "{msg}");

    let text = catalog_text().replace("minutes = 240", "minutes = 240\nminuets = 3");
    let err = Catalog::parse(&text, "c.toml").unwrap_err();
    let line = text.lines().position(|l| l.starts_with("minuets")).unwrap() + 1;
    assert!(
        err.to_string().starts_with(&format!("c.toml:{line}:")),
        "{err}"
    );
    assert!(
        err.to_string().contains("unknown parameter `minuets`"),
        "{err}"
    );

    let text = catalog_text().replace("minutes = 1440", "minutes = -5");
    let err = Catalog::parse(&text, "c.toml").unwrap_err();
    assert!(matches!(err, DatasetError::Catalog { .. }), "{err}");
    assert!(err.to_string().contains("non-negative integer"), "{err}");

    let text = catalog_text().replace(
        "comment_zipf = 1.1\ncomment_uniform = 0.3\nbody_chars = 1500",
        "comment_zipf = -1.5\ncomment_uniform = 0.3\nbody_chars = 1500",
    );
    let err = Catalog::parse(&text, "c.toml").unwrap_err();
    assert!(
        err.to_string()
            .contains("`comment_zipf` must be a non-negative number"),
        "{err}"
    );

    let text = catalog_text().replace("[people", "[peeple");
    assert!(
        Catalog::parse(&text, "c.toml")
            .unwrap_err()
            .to_string()
            .contains("unknown dataset")
    );
}

fn catalog_text() -> String {
    datasets::BUILTIN_CATALOG.to_string()
}

#[test]
fn an_edited_catalog_file_changes_sizes_without_recompiling() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("catalog.toml");
    std::fs::write(
        &path,
        catalog_text().replace("minutes = 240", "minutes = 10"),
    )
    .unwrap();
    let cat = load_catalog(&path).unwrap();
    assert_eq!(
        cat.generate("sensors", Scale::Tiny, 1).unwrap().count(),
        4 + 40
    );
    let missing = load_catalog(dir.path().join("nope.toml")).unwrap_err();
    assert!(matches!(missing, DatasetError::Io { .. }));
}

#[test]
fn scales_parse_and_print() {
    for s in Scale::ALL {
        assert_eq!(s.to_string().parse::<Scale>().unwrap(), s);
    }
    assert!("huge".parse::<Scale>().is_err());
}

#[tokio::test]
async fn load_refuses_databases_outside_schemalab() {
    // No server listens here: the check must come before any I/O.
    let client =
        mongodb::Client::with_uri_str("mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100")
            .await
            .unwrap();
    for db in ["test", "admin", "schemalab", "my_schemalab_x"] {
        let err = load(&client, db, "community", Scale::Tiny, 1, |_| {})
            .await
            .unwrap_err();
        assert!(
            matches!(err, DatasetError::UnsafeDatabase(ref d) if d == db),
            "{err}"
        );
    }
}

#[tokio::test]
async fn load_community_tiny_into_the_embedded_engine() {
    let server = schemalab_wire::serve(
        "127.0.0.1:0".parse().unwrap(),
        schemalab_engine::Engine::new(),
    )
    .await
    .unwrap();
    let client = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    let mut events = Vec::new();
    let report = load(
        &client,
        "schemalab_test",
        "community",
        Scale::Tiny,
        1,
        |p| events.push(p),
    )
    .await
    .unwrap();
    let expected = catalog()
        .generate("community", Scale::Tiny, 1)
        .unwrap()
        .counts()
        .to_vec();
    assert_eq!(report.collections, expected);
    let db = client.database("schemalab_test");
    for (coll, n) in &expected {
        let got = count(&db, coll).await;
        assert_eq!(got, *n, "{coll}");
    }
    let last = events.last().unwrap();
    assert_eq!(last.done, last.total);
    // Loading again replaces rather than appends.
    load(
        &client,
        "schemalab_test",
        "community",
        Scale::Tiny,
        1,
        |_| {},
    )
    .await
    .unwrap();
    let users = count(&db, "users").await;
    assert_eq!(users, expected[0].1);
    server.shutdown();
}

/// Counts through `find`, which every server build supports.
async fn count(db: &mongodb::Database, coll: &str) -> u64 {
    use futures_util::TryStreamExt;
    let docs: Vec<Document> = db
        .collection(coll)
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    docs.len() as u64
}

/// Generation speed of the large sensors scale; run on demand:
/// `cargo test --test datasets sensors_large_speed -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement (large-scale generation speed), run on demand with --ignored"]
fn sensors_large_speed() {
    let started = std::time::Instant::now();
    let mut bytes = 0usize;
    let mut n = 0u64;
    for (_, d) in catalog().generate("sensors", Scale::Large, 1).unwrap() {
        let mut buf = Vec::new();
        d.to_writer(&mut buf).unwrap();
        bytes += buf.len();
        n += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "sensors large: {n} docs, {bytes} bytes, {secs:.1} s, {:.0} docs/s",
        n as f64 / secs
    );
    assert!(n >= 1_000_000);
}

/// Prints documents and BSON bytes per dataset and scale (large bytes are
/// estimated from the default scale's mean document size); run on demand:
/// `cargo test --test datasets size_table -- --ignored --nocapture`.
#[test]
#[ignore = "prints the size table for datasets/README.md, run on demand with --ignored"]
fn size_table() {
    let cat = catalog();
    for spec in cat.datasets() {
        let mut mean: HashMap<String, f64> = HashMap::new();
        let mut line = format!("| {} |", spec.name);
        for scale in [Scale::Tiny, Scale::Default] {
            let mut per: BTreeMap<String, (u64, usize)> = BTreeMap::new();
            for (c, d) in cat.generate(&spec.name, scale, 1).unwrap() {
                let mut buf = Vec::new();
                d.to_writer(&mut buf).unwrap();
                let e = per.entry(c).or_default();
                e.0 += 1;
                e.1 += buf.len();
            }
            let docs: u64 = per.values().map(|v| v.0).sum();
            let bytes: usize = per.values().map(|v| v.1).sum();
            for (c, (n, b)) in &per {
                mean.insert(c.clone(), *b as f64 / (*n).max(1) as f64);
            }
            line += &format!(" {docs} docs, {:.1} MB |", bytes as f64 / 1e6);
        }
        let large =
            datasets::count(&spec.name, Scale::Large, 1, spec.params(Scale::Large)).unwrap();
        let docs: u64 = large.iter().map(|(_, n)| n).sum();
        let bytes: f64 = large
            .iter()
            .map(|(c, n)| mean.get(c).copied().unwrap_or(0.0) * *n as f64)
            .sum();
        line += &format!(" {docs} docs, ~{:.0} MB |", bytes / 1e6);
        println!("{line}");
    }
}

/// Load time of the default community scale into the embedded engine; run
/// on demand: `cargo test --test datasets load_speed -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "a measurement (default-scale load speed), run on demand with --ignored"]
async fn load_speed_community_default() {
    let server = schemalab_wire::serve(
        "127.0.0.1:0".parse().unwrap(),
        schemalab_engine::Engine::new(),
    )
    .await
    .unwrap();
    let client = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    let report = load(
        &client,
        "schemalab_speed",
        "community",
        Scale::Default,
        1,
        |_| {},
    )
    .await
    .unwrap();
    let docs: u64 = report.collections.iter().map(|(_, n)| n).sum();
    println!(
        "community default: {docs} docs loaded in {:.1} s",
        report.elapsed.as_secs_f64()
    );
    assert_eq!(
        count(&client.database("schemalab_speed"), "comments").await,
        40_000
    );
    server.shutdown();
}

// ----- loading: generation overlapped with inserting, raw BSON -----

/// Every document of `db.coll` as stored, in natural order.
async fn stored_raw(db: &mongodb::Database, coll: &str) -> Vec<Vec<u8>> {
    use futures_util::TryStreamExt;
    let docs: Vec<bson::RawDocumentBuf> = db
        .collection::<bson::RawDocumentBuf>(coll)
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    docs.iter().map(|d| d.as_bytes().to_vec()).collect()
}

/// The names of the indexes on `db.coll`.
async fn index_names(db: &mongodb::Database, coll: &str) -> Vec<String> {
    db.collection::<Document>(coll)
        .list_index_names()
        .await
        .unwrap()
}

/// What the driver sent before loading went raw: each generated document
/// serialised by serde as `insert_many` of `Document`s does it.
fn serde_bytes(d: &Document) -> Vec<u8> {
    bson::to_raw_document_buf(d).unwrap().into_bytes()
}

/// Every dataset at the tiny scale, loaded, is stored as the generator's
/// documents encoded the way the driver encoded them before: the same
/// bytes (field order, types), in the same order, every collection there
/// (empty ones too) with only the `_id` index.
#[tokio::test]
async fn loads_store_the_generated_documents_byte_for_byte_in_order() {
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let client = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    let cat = catalog();
    for spec in cat.datasets() {
        let name = spec.name.clone();
        let db_name = format!("schemalab_bytes_{name}");
        let report = datasets::load_with(&cat, &client, &db_name, &name, Scale::Tiny, 3, |_| {})
            .await
            .unwrap();
        let mut want: Vec<(String, Vec<Vec<u8>>)> = Vec::new();
        let stream = cat.generate(&name, Scale::Tiny, 3).unwrap();
        for (c, _) in stream.counts() {
            want.push((c.clone(), Vec::new()));
        }
        for (c, d) in stream {
            let raw = bson::RawDocumentBuf::from_document(&d).unwrap();
            assert_eq!(raw.as_bytes(), serde_bytes(&d), "{name}.{c}");
            want.iter_mut()
                .find(|(w, _)| *w == c)
                .unwrap()
                .1
                .push(raw.into_bytes());
        }
        let db = client.database(&db_name);
        let mut listed = db.list_collection_names().await.unwrap();
        listed.sort();
        let mut expected: Vec<String> = want.iter().map(|(c, _)| c.clone()).collect();
        expected.sort();
        assert_eq!(listed, expected, "{name}");
        for (c, docs) in &want {
            assert_eq!(stored_raw(&db, c).await, *docs, "{name}.{c}");
            assert_eq!(index_names(&db, c).await, ["_id_"], "{name}.{c}");
        }
        let reported: u64 = report.collections.iter().map(|(_, n)| n).sum();
        assert_eq!(
            reported,
            want.iter().map(|(_, d)| d.len() as u64).sum::<u64>()
        );
    }
    server.shutdown();
}

/// Progress still comes once per inserted batch of 10,000, split at
/// collection boundaries, with the running totals.
#[tokio::test]
async fn load_progress_is_reported_batch_by_batch() {
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let client = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    let text = catalog_text();
    let edited = text.replacen("minutes = 240", "minutes = 6000", 1);
    assert_ne!(edited, text, "the fixture line is in the catalog");
    let cat = Catalog::parse(&edited, "catalog.toml").unwrap();
    let mut events = Vec::new();
    let report = datasets::load_with(
        &cat,
        &client,
        "schemalab_progress",
        "sensors",
        Scale::Tiny,
        1,
        |p| {
            events.push((
                p.collection,
                p.inserted,
                p.collection_total,
                p.done,
                p.total,
            ))
        },
    )
    .await
    .unwrap();
    let total = 4 + 24_000;
    assert_eq!(
        events,
        [
            ("sensors".to_string(), 4, 4, 4, total),
            ("readings".to_string(), 10_000, 24_000, 10_004, total),
            ("readings".to_string(), 20_000, 24_000, 20_004, total),
            ("readings".to_string(), 24_000, 24_000, 24_004, total),
        ]
    );
    assert_eq!(
        report.collections,
        [("sensors".to_string(), 4), ("readings".to_string(), 24_000)]
    );
    server.shutdown();
}

/// A dataset that cannot be generated fails as before: with the
/// generator's error, before anything in the database is dropped.
#[tokio::test]
async fn a_generation_error_fails_the_load_before_any_drop() {
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let client = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    let db = client.database("schemalab_broken");
    db.collection::<Document>("readings")
        .insert_one(doc! { "_id": 1, "kept": true })
        .await
        .unwrap();
    let text = catalog_text();
    let edited = text.replacen("sensors = 4", "sensors = 0", 1);
    assert_ne!(edited, text, "the fixture line is in the catalog");
    let cat = Catalog::parse(&edited, "catalog.toml").unwrap();
    let err = datasets::load_with(
        &cat,
        &client,
        "schemalab_broken",
        "sensors",
        Scale::Tiny,
        1,
        |_| {},
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, DatasetError::BadParam { ref param, .. } if param == "sensors"),
        "{err}"
    );
    let err = datasets::load_with(
        &cat,
        &client,
        "schemalab_broken",
        "nosuch",
        Scale::Tiny,
        1,
        |_| {},
    )
    .await
    .unwrap_err();
    assert!(matches!(err, DatasetError::UnknownDataset(_)), "{err}");
    assert_eq!(count(&db, "readings").await, 1);
    server.shutdown();
}

/// Loading community against copying the loaded database on the server
/// (`copy_database`, one `$out` per collection), at the tiny and default
/// scales, on the embedded engine; run on demand:
/// `cargo test --test datasets copy_speed -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "a measurement (load against server-side copy), run on demand with --ignored"]
async fn copy_speed_community() {
    let server = schemalab_wire::spawn_background(schemalab_engine::Engine::new()).unwrap();
    let client = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    for scale in [Scale::Tiny, Scale::Default] {
        let mut loads = Vec::new();
        let mut copies = Vec::new();
        for round in 0..3 {
            let src = format!("schemalab_speed_src_{scale}_{round}");
            let dst = format!("schemalab_speed_dst_{scale}_{round}");
            let started = std::time::Instant::now();
            load(&client, &src, "community", scale, 1, |_| {})
                .await
                .unwrap();
            loads.push(started.elapsed().as_secs_f64());
            let started = std::time::Instant::now();
            datasets::copy_database(&client, &src, &dst).await.unwrap();
            copies.push(started.elapsed().as_secs_f64());
            for db in [src, dst] {
                client.database(&db).drop().await.unwrap();
            }
        }
        println!("community {scale}: load {loads:.3?} s, copy {copies:.3?} s");
    }
    server.shutdown();
}
