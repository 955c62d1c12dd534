const o = { b: 1, a: 2 };
printjson(Object.keys(o));
printjson(Object.values(o));
printjson(Object.entries(o));
printjson(Object.fromEntries([['x', 1], ['y', 2]]));
const frozen = Object.freeze({ k: 1 });
print(Object.isFrozen(frozen));
printjson(Object.assign({}, o, { c: 3 }));
