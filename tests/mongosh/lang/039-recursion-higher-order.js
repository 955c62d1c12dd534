const fact = n => n <= 1 ? 1 : n * fact(n - 1);
print(fact(10));
const compose = (...fs) => x => fs.reduceRight((v, f) => f(v), x);
const inc = x => x + 1, dbl = x => x * 2;
print(compose(inc, dbl)(5));
function memo(fn) { const c = new Map(); return n => c.has(n) ? c.get(n) : (c.set(n, fn(n)), c.get(n)); }
const fib = memo(n => n < 2 ? n : fib(n - 1) + fib(n - 2));
print(fib(50));
