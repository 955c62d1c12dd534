for (const v of ['x', 'y']) print('of', v);
for (const k in { a: 1, b: 2 }) print('in', k);
for (const [i, v] of ['p', 'q'].entries()) print(i, v);
for (const ch of 'hi') print(ch);
