let a = 1;
const b = 2;
a += b;
print(a, b);
{
  let a = 10;
  print('inner', a);
}
print('outer', a);
