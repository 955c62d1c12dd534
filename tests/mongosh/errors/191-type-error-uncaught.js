print('before');
const o = null;
o.field;
print('not reached');
