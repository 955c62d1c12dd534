const fns = [];
for (let i = 0; i < 3; i++) fns.push(() => i);
print(fns.map(f => f()).join(' '));
var vfns = [];
for (var j = 0; j < 3; j++) vfns.push(() => j);
print(vfns.map(f => f()).join(' '));
