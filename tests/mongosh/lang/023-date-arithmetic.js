const d = new Date('2024-02-28T12:00:00Z');
const next = new Date(d.getTime() + 24 * 3600 * 1000);
print(next.toISOString());
const leap = new Date(d);
leap.setUTCDate(leap.getUTCDate() + 2);
print(leap.toISOString());
print((new Date('2024-03-01T00:00:00Z') - new Date('2024-01-01T00:00:00Z')) / 86400000);
print(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDay());
