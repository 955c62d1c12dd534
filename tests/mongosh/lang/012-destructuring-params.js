function fmt({ first, last = 'Doe' }, [a, b] = [0, 0]) {
  return `${first} ${last} ${a + b}`;
}
print(fmt({ first: 'Jane' }));
print(fmt({ first: 'John', last: 'Roe' }, [2, 3]));
