const id = ObjectId.createFromTime(1700000000);
print(id.toHexString());
print(id.getTimestamp().toISOString());
const id2 = ObjectId.createFromHexString('64b7f0a1c2d3e4f5a6b7c8d9');
print(id2.toHexString());
