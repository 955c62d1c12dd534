const it = {
  from: 1, to: 3,
  [Symbol.iterator]() {
    let cur = this.from, last = this.to;
    return { next: () => cur <= last ? { value: cur++, done: false } : { value: undefined, done: true } };
  },
};
print([...it].join(','));
print(Array.from(it, x => x * 2).join(','));
