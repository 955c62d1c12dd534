console.log('plain');
console.log('multi', 1, { a: [1, 2] });
console.log([1, 2, 3]);
console.log({ nested: { deep: { deeper: { deepest: 1 } } } });
console.log(null, undefined, true);
