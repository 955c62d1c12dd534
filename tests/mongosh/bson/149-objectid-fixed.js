const id = ObjectId('64b7f0a1c2d3e4f5a6b7c8d9');
print(id);
printjson(id);
print(id.toHexString());
print(id.getTimestamp().toISOString());
print(id.equals(new ObjectId('64b7f0a1c2d3e4f5a6b7c8d9')));
print(String(id), JSON.stringify(id));
