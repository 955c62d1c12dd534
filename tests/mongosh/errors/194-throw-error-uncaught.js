print('before');
throw new Error('custom failure');
