let out = [];
outer: for (let i = 0; i < 4; i++) {
  for (let j = 0; j < 4; j++) {
    if (j === 2) continue outer;
    if (i === 3) break outer;
    out.push(`${i}${j}`);
  }
}
print(out.join(' '));
let k = 0;
while (true) { if (++k > 4) break; }
do { k--; } while (k > 2);
print(k);
