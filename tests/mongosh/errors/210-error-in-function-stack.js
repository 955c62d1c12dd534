function inner() { throw new TypeError('inner failed'); }
function outer() { inner(); }
try { outer(); } catch (e) { print(e.name + ': ' + e.message); print(typeof e.stack); }
outer();
