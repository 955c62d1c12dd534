print(0.1 + 0.2, (0.1 + 0.2).toFixed(2));
print(Number.MAX_SAFE_INTEGER, Number.isInteger(5.0), Number.isNaN(NaN));
print(parseInt('42px'), parseFloat('3.5e2'), Number('0x1f'));
print(Math.round(2.5), Math.floor(-1.5), Math.trunc(-1.5), Math.abs(-3));
print(7 % 3, 2 ** 10, 1 / 0, -1 / 0);
print((1234.5678).toFixed(1), (255).toString(16));
