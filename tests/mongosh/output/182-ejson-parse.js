const d = EJSON.parse('{"_id":{"$oid":"5f0000000000000000000000"},"at":{"$date":"2020-07-04T00:00:00Z"},"n":{"$numberLong":"9"}}');
printjson(d);
print(d._id instanceof ObjectId, d.at instanceof Date);
const r = EJSON.parse('{"n":{"$numberInt":"1"}}', { relaxed: false });
printjson(r);
