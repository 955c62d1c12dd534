print('before quit');
quit(3);
print('not reached');
