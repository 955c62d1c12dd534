class Temp {
  #c = 0;
  constructor(c) { this.#c = c; }
  get f() { return this.#c * 9 / 5 + 32; }
  set f(v) { this.#c = (v - 32) * 5 / 9; }
}
const t = new Temp(100);
print(t.f);
t.f = 32;
print(t.f);
