function f(x) {
  let result;
  try {
    if (x) throw new Error('boom ' + x);
    result = 'ok';
  } catch (e) {
    result = 'caught: ' + e.message;
  } finally {
    print('finally', x);
  }
  return result;
}
print(f(0));
print(f(7));
