const o = { a: { b: null }, f: null };
print(o?.a?.b?.c, o.x?.y, o.f?.());
print(o.a.b ?? 'fallback', 0 ?? 'no', '' || 'empty');
let z = null;
z ??= 'set';
let w = 1;
w ||= 2;
print(z, w);
