print('before');
const n = 5;
n();
