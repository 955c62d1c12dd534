try { new Array(-1); } catch (e) { print(e.name, e.message); }
try { (1).toFixed(200); } catch (e) { print(e.name); }
print('before');
[].reduce((a, b) => a + b);
