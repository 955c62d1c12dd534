print({ a: 1, b: 'two', c: [1, 2], d: { e: null } });
print([1, 'x', [2, 3], { k: true }]);
print([]);
print({});
