try {
  try {
    throw new Error('x');
  } finally {
    print('finally ran');
  }
} catch (e) {
  print('outer caught', e.message);
}
