const d = new Date('2024-01-02T03:04:05.006Z');
print(d);
console.log(d);
printjson(d);
print(d.toISOString());
print(JSON.stringify(d));
print([d]);
