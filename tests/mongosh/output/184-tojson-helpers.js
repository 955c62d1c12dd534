print(tojson({ a: 1, b: [1, 2] }));
print(tojson('s'));
print(typeof tojson({}));
