const s = '  Schema Lab  ';
print(`[${s.trim()}]`, s.trim().length);
print('abc'.padStart(5, '*'), 'abc'.padEnd(5, '-'));
print('Hello'.toUpperCase(), 'Hello'.toLowerCase());
print('a-b-c'.replaceAll('-', '+'), 'abc'.at(-1), 'ha'.repeat(3));
print('mongo'.startsWith('mon'), 'mongo'.endsWith('go'), 'mongo'.indexOf('g'));
