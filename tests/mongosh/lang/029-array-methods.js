const a = [5, 3, 8, 1];
print(a.slice().sort((x, y) => x - y).join(','));
print(a.filter(x => x > 2).length, a.find(x => x > 4), a.findIndex(x => x === 8));
print(a.some(x => x > 7), a.every(x => x > 0), a.includes(3));
print(a.reduce((s, x) => s + x, 0));
printjson([[1, [2]], [3]].flat(2));
printjson(Array.from({ length: 3 }, (_, i) => i * i));
