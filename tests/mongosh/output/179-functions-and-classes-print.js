print(function named() { return 1; });
print(() => 2);
class K {}
print(K);
printjson({ f: function () {} });
print(new Map([['a', 1]]));
print(new Set([1, 2]));
