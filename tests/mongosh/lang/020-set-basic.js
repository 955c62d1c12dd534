const s = new Set([3, 1, 3, 2, 1]);
print(s.size);
printjson([...s]);
s.add(4);
print(s.has(4), s.has(9));
const inter = [...s].filter(x => new Set([2, 4, 6]).has(x));
printjson(inter);
