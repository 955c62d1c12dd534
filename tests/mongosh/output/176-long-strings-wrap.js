const long = 'x'.repeat(100);
printjson({ long });
printjson({ a: 'aaaaaaaaaa', b: 'bbbbbbbbbb', c: 'cccccccccc', d: 'dddddddddd', e: 'eeeeeeeeee', f: 'ffffffffff' });
print({ a: 'aaaaaaaaaa', b: 'bbbbbbbbbb', c: 'cccccccccc', d: 'dddddddddd', e: 'eeeeeeeeee', f: 'ffffffffff' });
