printjson({
  _id: ObjectId('5f0000000000000000000000'),
  at: ISODate('2020-07-04T00:00:00Z'),
  n: NumberInt(1), l: NumberLong('2'), d: NumberDecimal('3.0'),
  arr: [ISODate('2021-01-01T00:00:00Z'), ObjectId('5f0000000000000000000001')],
});
