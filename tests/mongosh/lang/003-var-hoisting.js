print(typeof hoisted);
var hoisted = 5;
print(hoisted);
function f() { return inner(); function inner() { return 'inner ok'; } }
print(f());
