class AppError extends Error {
  constructor(msg, code) { super(msg); this.name = 'AppError'; this.code = code; }
}
try {
  throw new AppError('bad thing', 42);
} catch (e) {
  print(e.name, e.message, e.code, e instanceof Error);
  print(String(e));
}
try { throw { plain: true }; } catch ({ plain }) { print('plain', plain); }
