function kind(x) {
  switch (typeof x) {
    case 'number': return x % 2 === 0 ? 'even' : 'odd';
    case 'string': return 'text';
    default: return 'other';
  }
}
print([1, 2, 'a', null].map(kind).join(' '));
