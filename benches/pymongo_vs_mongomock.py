"""Unindexed find and count through pymongo: a running `schemalab serve --port PORT`
against mongomock, on the same 20,000 documents (issue 15's target: at least 3x faster).

Usage: pip install pymongo mongomock; schemalab serve --port 27999 & python3 benches/pymongo_vs_mongomock.py 27999
"""
import time, sys, pymongo, mongomock
def docs():
    return [{"_id": i, "a": i % 100, "b": "x" * 20, "c": {"d": i}} for i in range(20000)]
def run(coll, reps=20):
    coll.insert_many(docs())
    t = time.perf_counter()
    for r in range(reps):
        n = len(list(coll.find({"a": 7, "c.d": {"$gte": 0}})))
    find_s = (time.perf_counter() - t) / reps
    t = time.perf_counter()
    for r in range(reps):
        c = coll.count_documents({"a": {"$in": [3, 5]}})
    count_s = (time.perf_counter() - t) / reps
    return n, c, find_s, count_s
port = int(sys.argv[1])
ours = run(pymongo.MongoClient(f"mongodb://127.0.0.1:{port}/").schemalab_mm.c)
mock = run(mongomock.MongoClient().db.c)
print("results", ours[:2], mock[:2])
print(f"find: schemalab {ours[2]*1000:.2f} ms, mongomock {mock[2]*1000:.2f} ms, schemalab {mock[2]/ours[2]:.1f}x faster")
print(f"count: schemalab {ours[3]*1000:.2f} ms, mongomock {mock[3]*1000:.2f} ms, schemalab {mock[3]/ours[3]:.1f}x faster")
