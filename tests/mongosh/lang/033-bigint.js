const big = 2n ** 64n;
print(big.toString());
print(typeof big, big > 10n);
print((10n / 3n).toString(), (-7n % 3n).toString());
print(BigInt('123456789012345678901234567890') + 1n);
