const o = { b: 2, a: [1, 'two', null, true], nested: { d: 1.5 } };
print(JSON.stringify(o));
print(JSON.stringify(o, null, 2));
print(JSON.stringify({ u: undefined, f() {}, n: NaN }));
const back = JSON.parse('{"x":[1,2,{"y":"z"}]}');
print(back.x[2].y, back.x.length);
print(JSON.stringify(JSON.parse('"str"')));
