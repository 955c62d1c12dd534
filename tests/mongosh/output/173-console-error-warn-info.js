console.info('info line');
console.warn('warn line');
console.error('error line');
print('after');
