print('tab\there');
print('quote " and \' apostrophe');
printjson({ s: 'line1\nline2', q: 'say "hi"', u: 'héllo 世界' });
print('héllo 世界 ✓');
console.log(['a\nb']);
