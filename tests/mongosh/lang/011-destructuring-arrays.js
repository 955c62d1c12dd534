const [a, , c = 3, ...others] = [1, 2, undefined, 4, 5];
print(a, c);
printjson(others);
let x = 1, y = 2;
[x, y] = [y, x];
print(x, y);
