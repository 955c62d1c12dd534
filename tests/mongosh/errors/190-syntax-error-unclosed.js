print('never printed');
function f() {
  return 1;
