const who = 'world';
const n = 6;
print(`hello ${who}`);
print(`${n} * 7 = ${n * 7}`);
print(`multi
line`);
const tag = (strs, ...vals) => strs.raw.join('|') + ' / ' + vals.join(',');
print(tag`a${1}b${2}c`);
