const m = new Map();
m.set('a', 1).set('b', 2);
m.set({}, 'obj');
print(m.size, m.get('a'), m.has('b'), m.has('z'));
m.delete('b');
print([...m.keys()].filter(k => typeof k === 'string').join(','));
const m2 = new Map([['x', 10], ['y', 20]]);
for (const [k, v] of m2) print(k, v);
