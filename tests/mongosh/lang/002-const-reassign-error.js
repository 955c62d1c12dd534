function attempt() {
  const k = 1;
  try {
    k = 2;
  } catch (e) {
    print(e instanceof TypeError, e.name);
  }
  return k;
}
print(attempt());
