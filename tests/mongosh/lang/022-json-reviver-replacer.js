const s = JSON.stringify({ a: 1, b: 2, c: 3 }, ['a', 'c']);
print(s);
const r = JSON.stringify({ a: 1, b: 'x' }, (k, v) => typeof v === 'number' ? v * 100 : v);
print(r);
const p = JSON.parse('{"n":1,"m":2}', (k, v) => typeof v === 'number' ? v + 1 : v);
printjson(p);
