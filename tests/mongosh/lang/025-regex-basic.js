const re = /(\d{4})-(\d{2})-(\d{2})/;
const m = '2024-05-17'.match(re);
print(m[1], m[2], m[3]);
print(/abc/i.test('xABCx'));
print('a1b22c333'.replace(/\d+/g, n => `[${n.length}]`));
print('a, b,c'.split(/\s*,\s*/).join('|'));
