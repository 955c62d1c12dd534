print('text');
print(1, 2.5, -3);
print(true, false, null, undefined);
print();
print('');
print('a', '', 'b');
