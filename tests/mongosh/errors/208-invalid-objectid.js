try {
  ObjectId('not-hex');
} catch (e) {
  print(e.name);
}
print('after');
