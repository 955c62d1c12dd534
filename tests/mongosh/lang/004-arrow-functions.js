const add = (a, b) => a + b;
const sq = x => x * x;
const obj = () => ({ k: 'v' });
print(add(2, 3), sq(4));
printjson(obj());
print([1, 2, 3].map(x => x * 10).join(','));
