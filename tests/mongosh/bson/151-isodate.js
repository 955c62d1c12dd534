const d = ISODate('2024-06-01T08:30:00Z');
print(d);
printjson(d);
print(d instanceof Date, d.getTime());
printjson({ d: ISODate('2024-06-01') });
print(ISODate('2024-06-01T08:30:00.123+02:00').toISOString());
