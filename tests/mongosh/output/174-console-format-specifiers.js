console.log('%s is %d years', 'Ann', 42);
console.log('%o|%j', { a: 1 }, 2);
console.log('100%');
