print('line 1');
print('line 2');
null.boom;
