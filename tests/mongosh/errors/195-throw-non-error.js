print('before');
throw 'a plain string';
