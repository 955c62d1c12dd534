const re = /(?<user>\w+)@(?<host>[\w.]+)/g;
const text = 'ann@x.org, bob@y.net';
for (const m of text.matchAll(re)) print(m.groups.user, m.groups.host);
const r = new RegExp('^b', 'm');
print(r.source, r.flags, r.test('a\nb'));
print(String(/x+/gi));
