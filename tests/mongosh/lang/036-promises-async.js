async function twice(x) { return x * 2; }
twice(21).then(v => print('then', v));
Promise.all([twice(1), twice(2), Promise.resolve(7)]).then(all => printjson(all));
Promise.reject(new Error('nope')).catch(e => print('rejected:', e.message));
print('synchronous code runs first');
