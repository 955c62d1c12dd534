print(ObjectId('5f0000000000000000000000'), NumberInt(3), NumberLong('4'));
print({ id: ObjectId('5f0000000000000000000000'), at: ISODate('2020-07-04T00:00:00Z') });
print([NumberDecimal('1.1'), MinKey(), MaxKey()]);
