function* range(start, end, step = 1) {
  for (let i = start; i < end; i += step) yield i;
}
print([...range(0, 5)].join(','));
const g = range(10, 30, 10);
printjson(g.next());
printjson(g.next());
printjson(g.next());
function* fib() { let [a, b] = [0, 1]; while (true) { yield a; [a, b] = [b, a + b]; } }
const first = []; for (const f of fib()) { if (f > 50) break; first.push(f); }
print(first.join(' '));
