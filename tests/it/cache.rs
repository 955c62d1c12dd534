//! The modelled WiredTiger cache through the official driver:
//! `serverStatus().wiredTiger.cache` and the profiler's
//! `storage.data.bytesRead` for a cold read, a warm read and a cache
//! smaller than the collection, and `setParameter`'s
//! `wiredTigerEngineRuntimeConfig` changing the cache's size at run time.
//!
//! The data is loaded into the engine directly, outside any operation, so
//! that the served cache starts cold, as a restarted mongod's does.

use bson::{Bson, Document, RawDocumentBuf, doc};
use futures_util::TryStreamExt;
use mongodb::{Client, Database};
use schemalab_engine::Engine;
use schemalab_wire::{ServerHandle, serve};

/// Documents loaded, each about 1 KB.
const DOCS: i32 = 4000;

fn n(d: &Document, key: &str) -> i64 {
    match d.get(key) {
        Some(Bson::Int32(v)) => i64::from(*v),
        Some(Bson::Int64(v)) => *v,
        Some(Bson::Double(v)) => *v as i64,
        other => panic!("{key}: {other:?} in {d}"),
    }
}

/// An engine holding `cache.c` (DOCS documents of ~1 KB), served on a
/// loopback port, with a client on the admin database and `cache`.
async fn loaded() -> (ServerHandle, Database, Database) {
    let engine = Engine::new();
    let docs: Vec<RawDocumentBuf> = (0..DOCS)
        .map(|i| {
            let filler: String = (0..1000)
                .map(|j| (b'a' + ((i + j) % 26) as u8) as char)
                .collect();
            RawDocumentBuf::from_document(&doc! {"_id": i, "k": i % 100, "filler": filler})
                .expect("encodes")
        })
        .collect();
    engine.insert("cache", "c", docs, true).expect("loads");
    let server = serve("127.0.0.1:0".parse().expect("addr"), engine)
        .await
        .expect("serves");
    let client = Client::with_uri_str(server.uri()).await.expect("client");
    let admin = client.database("admin");
    let db = client.database("cache");
    (server, admin, db)
}

async fn cache_stats(admin: &Database) -> Document {
    let status = admin
        .run_command(doc! {"serverStatus": 1})
        .await
        .expect("serverStatus");
    status
        .get_document("wiredTiger")
        .and_then(|w| w.get_document("cache"))
        .cloned()
        .expect("wiredTiger.cache")
}

async fn scan(db: &Database) -> usize {
    let docs: Vec<Document> = db
        .collection::<Document>("c")
        .find(doc! {"k": 1000})
        .await
        .expect("find")
        .try_collect()
        .await
        .expect("batches");
    docs.len()
}

async fn data_size(db: &Database) -> i64 {
    let stats = db
        .run_command(doc! {"collStats": "c"})
        .await
        .expect("collStats");
    n(&stats, "size")
}

async fn set_cache_size(admin: &Database, size: &str) -> mongodb::error::Result<Document> {
    admin
        .run_command(doc! {
            "setParameter": 1,
            "wiredTigerEngineRuntimeConfig": format!("cache_size={size}"),
        })
        .await
}

#[tokio::test]
async fn a_cold_read_reads_the_collection_into_the_cache_and_a_warm_one_does_not() {
    let (_server, admin, db) = loaded().await;
    let size = data_size(&db).await;
    let before = cache_stats(&admin).await;
    assert_eq!(n(&before, "bytes read into cache"), 0);
    assert_eq!(n(&before, "pages read into cache"), 0);
    assert!(matches!(
        before.get("bytes read into cache"),
        Some(Bson::Int64(_))
    ));

    // Cold: a full scan reads every page of the collection, about its
    // data size (cells and page headers add a little).
    assert_eq!(scan(&db).await, 0);
    let cold = cache_stats(&admin).await;
    let read = n(&cold, "bytes read into cache");
    assert!(read >= size && read <= size + size / 10, "{read} vs {size}");
    let pages = n(&cold, "pages read into cache");
    assert!(
        pages >= size / 32_768 && pages <= size / 32_768 * 21 / 20 + 2,
        "{pages}"
    );
    assert_eq!(n(&cold, "bytes currently in the cache"), read);
    assert!(n(&cold, "pages requested from the cache") >= pages);

    // Warm: nothing more is read, but every page is requested again.
    assert_eq!(scan(&db).await, 0);
    let warm = cache_stats(&admin).await;
    assert_eq!(n(&warm, "bytes read into cache"), read);
    assert_eq!(n(&warm, "pages read into cache"), pages);
    assert!(
        n(&warm, "pages requested from the cache")
            >= n(&cold, "pages requested from the cache") + pages
    );
}

#[tokio::test]
async fn a_cache_smaller_than_the_collection_reads_it_again_on_every_scan() {
    let (_server, admin, db) = loaded().await;
    let size = data_size(&db).await;
    set_cache_size(&admin, "1M").await.expect("setParameter");
    let max = n(&cache_stats(&admin).await, "maximum bytes configured");
    assert_eq!(max, 1024 * 1024);
    assert!(size > 3 * max, "the collection must outgrow the cache");
    let mut last = 0;
    for pass in 0..3 {
        scan(&db).await;
        let s = cache_stats(&admin).await;
        let read = n(&s, "bytes read into cache");
        assert!(
            read - last >= size,
            "pass {pass}: read {} of {size}",
            read - last
        );
        assert!(n(&s, "bytes currently in the cache") <= max, "pass {pass}");
        last = read;
    }
    let s = cache_stats(&admin).await;
    assert!(n(&s, "unmodified pages evicted") > 0);
}

#[tokio::test]
async fn set_parameter_changes_the_cache_size_at_run_time() {
    let (_server, admin, _db) = loaded().await;
    let s = cache_stats(&admin).await;
    // mongod's default: 50% of (RAM - 1 GB), at least 256 MB.
    assert!(n(&s, "maximum bytes configured") >= 256 * 1024 * 1024);
    let reply = set_cache_size(&admin, "64M").await.expect("setParameter");
    assert_eq!(reply.get_str("was"), Ok(""));
    let s = cache_stats(&admin).await;
    assert_eq!(n(&s, "maximum bytes configured"), 64 * 1024 * 1024);
    let reply = set_cache_size(&admin, "2G").await.expect("setParameter");
    assert_eq!(reply.get_str("was"), Ok("cache_size=64M"));
    let s = cache_stats(&admin).await;
    assert_eq!(n(&s, "maximum bytes configured"), 2 * 1024 * 1024 * 1024);
    // Refused as WiredTiger refuses it, the size unchanged.
    let err = set_cache_size(&admin, "10K").await.expect_err("too small");
    let text = err.to_string();
    assert!(text.contains("WiredTiger reconfiguration failed"), "{text}");
    assert!(matches!(
        *err.kind,
        mongodb::error::ErrorKind::Command(ref c) if c.code == 2
    ));
    let s = cache_stats(&admin).await;
    assert_eq!(n(&s, "maximum bytes configured"), 2 * 1024 * 1024 * 1024);
    // The rest of serverStatus, as mongod names it.
    let status = admin
        .run_command(doc! {"serverStatus": 1})
        .await
        .expect("serverStatus");
    for field in [
        "host",
        "version",
        "process",
        "pid",
        "uptime",
        "uptimeMillis",
        "localTime",
    ] {
        assert!(status.contains_key(field), "{field} in {status}");
    }
    assert!(
        n(
            status.get_document("connections").expect("connections"),
            "current"
        ) >= 1
    );
    assert!(
        n(
            status.get_document("opcounters").expect("opcounters"),
            "command"
        ) >= 1
    );
}

#[tokio::test]
async fn the_profiler_reports_bytes_read_on_a_cold_read_only() {
    let (_server, admin, db) = loaded().await;
    db.run_command(doc! {"profile": 2}).await.expect("profile");
    scan(&db).await;
    let cold = n(&cache_stats(&admin).await, "bytes read into cache");
    scan(&db).await;
    db.run_command(doc! {"profile": 0}).await.expect("profile");
    let entries: Vec<Document> = db
        .collection::<Document>("system.profile")
        .find(doc! {"op": "query"})
        .await
        .expect("find")
        .try_collect()
        .await
        .expect("entries");
    assert_eq!(entries.len(), 2, "{entries:?}");
    let data = entries[0]
        .get_document("storage")
        .and_then(|s| s.get_document("data"))
        .expect("storage.data on the cold read");
    // All the cache read in, and read by that operation.
    assert!(cold > 0);
    assert_eq!(n(data, "bytesRead"), cold);
    assert!(n(data, "timeReadingMicros") > 0);
    assert!(
        !entries[1].contains_key("storage"),
        "the warm read read nothing: {}",
        entries[1]
    );
}
