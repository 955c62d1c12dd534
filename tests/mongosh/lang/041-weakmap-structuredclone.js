const wm = new WeakMap();
const key = {};
wm.set(key, 'meta');
print(wm.get(key), wm.has({}));
const orig = { a: [1, { b: 2 }] };
const copy = JSON.parse(JSON.stringify(orig));
copy.a[1].b = 3;
print(orig.a[1].b, copy.a[1].b);
