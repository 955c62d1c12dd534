try { undefinedFn(); } catch (e) { print(e.name); print(e.message); print(e instanceof ReferenceError); }
try { null.f(); } catch (e) { print(e.name); print(e.message); }
try { JSON.parse('{bad'); } catch (e) { print(e.name); }
