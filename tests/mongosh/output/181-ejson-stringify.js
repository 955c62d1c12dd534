const doc = { _id: ObjectId('5f0000000000000000000000'), at: ISODate('2020-07-04T00:00:00Z'), n: NumberInt(3), l: NumberLong('4'), d: NumberDecimal('1.5') };
print(EJSON.stringify(doc));
print(EJSON.stringify(doc, { relaxed: false }));
print(EJSON.stringify({ a: 1 }, null, 2));
