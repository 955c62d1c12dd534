printjson(EJSON.serialize({ d: new Date(0), i: NumberInt(1) }));
printjson(EJSON.deserialize({ d: { $date: '1970-01-01T00:00:00Z' } }));
