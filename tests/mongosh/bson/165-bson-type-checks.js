print(ObjectId('5f0000000000000000000000')._bsontype);
print(NumberLong('1')._bsontype, NumberDecimal('1')._bsontype, NumberInt(1)._bsontype);
print(typeof NumberInt(1).valueOf(), NumberInt(5) + 1);
print(NumberLong('10').toNumber() * 2);
