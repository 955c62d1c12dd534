const acct = {
  _bal: 10,
  get balance() { return this._bal; },
  set balance(v) { if (v < 0) throw new RangeError('negative'); this._bal = v; },
};
acct.balance = 25;
print(acct.balance);
try { acct.balance = -1; } catch (e) { print(e.name, e.message); }
const o = {};
Object.defineProperty(o, 'hidden', { value: 1, enumerable: false });
print(o.hidden, Object.keys(o).length);
