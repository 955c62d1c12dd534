print('before');
print(notDefinedAnywhere);
print('not reached');
