class Animal {
  constructor(name) { this.name = name; }
  speak() { return `${this.name} makes a sound`; }
}
class Dog extends Animal {
  speak() { return super.speak() + ' (woof)'; }
}
const d = new Dog('Rex');
print(d.speak());
print(d instanceof Animal, d instanceof Dog);
print(Object.getPrototypeOf(d) === Dog.prototype);
