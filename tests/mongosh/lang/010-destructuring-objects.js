const doc = { name: 'Ada', address: { city: 'London' }, tags: ['a', 'b'] };
const { name, address: { city }, missing = 'dflt' } = doc;
print(name, city, missing);
const { name: n2, ...rest } = doc;
print(n2);
printjson(rest);
