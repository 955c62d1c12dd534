const t = Date.UTC(2020, 0, 31, 23, 59, 59, 999);
print(t);
print(new Date(t).toISOString());
print(new Date(0).toISOString());
print(Date.parse('2001-09-09T01:46:40Z'));
print(new Date('not a date').getTime());
print(JSON.stringify({ when: new Date(86400000) }));
