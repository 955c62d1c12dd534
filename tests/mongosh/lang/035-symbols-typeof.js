const sym = Symbol('tag');
const o = { [sym]: 1, plain: 2 };
print(typeof sym, sym.toString(), sym.description);
print(Object.keys(o).length, o[sym]);
print(typeof null, typeof undefined, typeof 1, typeof 'a', typeof {}, typeof [], typeof (() => 1));
print(Array.isArray([]), Array.isArray({}));
