const a = [1, 2];
const b = [...a, 3, ...[4, 5]];
printjson(b);
const o = { x: 1, y: 2 };
printjson({ ...o, y: 20, z: 30 });
function sum(...nums) { return nums.reduce((s, n) => s + n, 0); }
print(sum(...b));
print(Math.max(...b));
