const o = { v: 5, get() { return this.v; } };
const g = o.get;
const bound = g.bind({ v: 7 });
print(bound(), g.call({ v: 8 }), g.apply({ v: 9 }, []));
function Person(name) { this.name = name; }
Person.prototype.hi = function () { return 'hi ' + this.name; };
print(new Person('Li').hi());
