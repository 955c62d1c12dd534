class Point {
  constructor(x, y) { this.x = x; this.y = y; }
  norm2() { return this.x * this.x + this.y * this.y; }
  toString() { return `(${this.x}, ${this.y})`; }
  static origin() { return new Point(0, 0); }
}
const p = new Point(3, 4);
print(p.norm2());
print(String(p));
print(Point.origin().toString());
