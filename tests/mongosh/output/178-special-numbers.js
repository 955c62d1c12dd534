print(NaN, Infinity, -Infinity, -0, 1e21, 1e-7);
printjson({ a: NaN, b: Infinity, c: -0, d: 1e21, e: 0.1 });
print(123456789012345680000);
