printjson({ a: 1 });
printjson([1, 2]);
printjson('str');
printjson(5);
printjson(null);
printjson({});
printjson([]);
