const a = Array.from({ length: 120 }, (_, i) => i);
print(a);
printjson(a.slice(0, 30));
console.log(Array.from({ length: 8 }, (_, i) => ({ i })));
