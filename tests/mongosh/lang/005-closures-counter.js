function counter() {
  let n = 0;
  return { inc: () => ++n, get: () => n };
}
const c1 = counter();
const c2 = counter();
c1.inc(); c1.inc(); c2.inc();
print(c1.get(), c2.get());
