// schemalab's mongosh API, in JavaScript, on one host function.
//
// Everything a script can reach is defined here: `db` and its collections,
// cursors, the BSON constructors, print/printjson, EJSON. Every database
// command leaves through `host("command" | "cursorOpen" | …)`, which the
// Rust side checks against the write gate, shows to the measurement
// recorder, and sends through the official driver. Values cross that
// boundary as canonical Extended JSON. The prelude captures the host
// function and removes it from the global object, so a script cannot call
// it except through these helpers (and the gate is on the Rust side anyway).
(function (global) {
  "use strict";
  const hostFn = global.__host;
  delete global.__host;
  // Errors name the statement's line even from deep inside these helpers.
  Error.stackTraceLimit = 64;

  function host(op, ...args) {
    const r = JSON.parse(hostFn(op, ...args));
    if (r.e) throw hostError(r.e);
    return r.r;
  }

  // ---- errors ------------------------------------------------------------
  class MongoServerError extends Error {
    constructor(message, code, codeName) {
      super(message);
      this.code = code;
      this.codeName = codeName;
      this.errmsg = message;
    }
    get name() { return "MongoServerError"; }
  }
  class MongoBulkWriteError extends Error {
    constructor(message, code, writeErrors) {
      super(message);
      this.code = code;
      this.errmsg = message;
      this.writeErrors = writeErrors ?? [];
    }
    get name() { return "MongoBulkWriteError"; }
  }
  class MongoshInvalidInputError extends Error {
    get name() { return "MongoshInvalidInputError"; }
  }
  // The Node driver's and the bson library's names, as mongosh shows them.
  class MongoInvalidArgumentError extends Error {
    get name() { return "MongoInvalidArgumentError"; }
  }
  class BSONError extends Error {
    get name() { return "BSONError"; }
  }
  function hostError(e) {
    let err;
    if (e.kind === "server") err = new MongoServerError(e.message, e.code, e.codeName);
    else if (e.kind === "bulk") err = new MongoBulkWriteError(e.message, e.code);
    else err = new Error(e.message);
    Object.defineProperty(err, "__hostError", { value: e.id });
    return err;
  }
  function typeError(msg) { return new TypeError(msg); }

  // ---- BSON types --------------------------------------------------------
  const HEX24 = /^[0-9a-fA-F]{24}$/;
  class ObjectId {
    constructor(hex) {
      if (hex instanceof ObjectId) hex = hex.$oid;
      if (hex === undefined || hex === null) hex = host("newObjectId");
      if (typeof hex !== "string" || !HEX24.test(hex))
        throw new BSONError("input must be a 24 character hex string, 12 byte Uint8Array, or an integer");
      Object.defineProperty(this, "$oid", { value: hex.toLowerCase() });
    }
    toHexString() { return this.$oid; }
    toString() { return this.$oid; }
    toJSON() { return this.$oid; }
    valueOf() { return this.$oid; }
    equals(o) { return o instanceof ObjectId ? o.$oid === this.$oid : String(o) === this.$oid; }
    getTimestamp() { return new Date(parseInt(this.$oid.slice(0, 8), 16) * 1000); }
    get [Symbol.toStringTag]() { return "ObjectId"; }
    get _bsontype() { return "ObjectId"; }
    static createFromTime(secs) {
      return new ObjectId((Math.floor(Number(secs)) >>> 0).toString(16).padStart(8, "0") + "0000000000000000");
    }
    static createFromHexString(hex) { return new ObjectId(hex); }
    static isValid(v) { return typeof v === "string" ? HEX24.test(v) : v instanceof ObjectId; }
  }
  class Long {
    constructor(v) {
      let b;
      if (v instanceof Long) b = v.$big;
      else if (typeof v === "bigint") b = v;
      else if (typeof v === "string") {
        if (!/^\s*[-+]?\d+\s*$/.test(v)) throw typeError("invalid Long string '" + v + "'");
        b = BigInt(v.trim());
      } else if (typeof v === "number") {
        if (!Number.isFinite(v)) throw typeError("invalid Long value " + v);
        b = BigInt(Math.trunc(v));
      } else if (v === undefined) b = 0n;
      else throw typeError("Long() cannot take a " + typeof v);
      b = BigInt.asIntN(64, b);
      Object.defineProperty(this, "$big", { value: b });
    }
    valueOf() { return Number(this.$big); }
    toNumber() { return Number(this.$big); }
    toString(radix) { return this.$big.toString(radix); }
    toJSON() { return this.$big.toString(); }
    equals(o) { return new Long(o).$big === this.$big; }
    get _bsontype() { return "Long"; }
  }
  class Int32 {
    constructor(v) {
      const n = typeof v === "string" ? Number(v.trim()) : Number(v);
      if (Number.isNaN(n)) throw typeError("invalid number '" + v + "'");
      Object.defineProperty(this, "value", { value: Math.trunc(n) | 0, enumerable: false });
    }
    valueOf() { return this.value; }
    toString() { return String(this.value); }
    toJSON() { return this.value; }
    get _bsontype() { return "Int32"; }
  }
  class Double {
    constructor(v) {
      const n = typeof v === "string" ? Number(v.trim()) : Number(v);
      Object.defineProperty(this, "value", { value: n, enumerable: false });
    }
    valueOf() { return this.value; }
    toString() { return String(this.value); }
    toJSON() { return this.value; }
  }
  class Decimal128 {
    constructor(s) {
      if (typeof s === "number") s = String(s);
      if (typeof s !== "string") throw typeError("Decimal128() cannot take a " + typeof s);
      Object.defineProperty(this, "$dec", { value: host("checkDecimal", s) });
    }
    toString() { return this.$dec; }
    toJSON() { return { $numberDecimal: this.$dec }; }
    get _bsontype() { return "Decimal128"; }
  }
  class Timestamp {
    constructor(t, i) {
      if (t && typeof t === "object" && !(t instanceof Long)) { i = t.i; t = t.t; }
      Object.defineProperty(this, "t", { value: Number(t ?? 0) >>> 0, enumerable: true });
      Object.defineProperty(this, "i", { value: Number(i ?? 0) >>> 0, enumerable: true });
    }
    getHighBits() { return this.t; }
    getLowBits() { return this.i; }
  }
  class Binary {
    constructor(base64, subType) {
      Object.defineProperty(this, "$b64", { value: String(base64) });
      Object.defineProperty(this, "sub_type", { value: subType ?? 0 });
    }
    base64() { return this.$b64; }
    toString() { return this.$b64; }
  }
  class UUIDValue extends Binary {
    toString() { return host("uuidHex", this.$b64).replace(/-/g, ""); }
    toHexString() { return this.toString(); }
  }
  class MinKeyValue { }
  class MaxKeyValue { }
  class BSONRegExp {
    constructor(pattern, options) { this.pattern = pattern; this.options = options ?? ""; }
  }
  class Code {
    constructor(code, scope) { this.code = String(code); if (scope) this.scope = scope; }
  }
  const MINKEY = Object.freeze(new MinKeyValue());
  const MAXKEY = Object.freeze(new MaxKeyValue());

  // mongosh's constructors work with and without `new`, and `instanceof`
  // holds either way: a plain function that builds the class, sharing its
  // prototype.
  function callable(Class, name) {
    const f = { [name]: function (...args) { return new Class(...args); } }[name];
    f.prototype = Class.prototype;
    for (const k of Object.getOwnPropertyNames(Class))
      if (!["length", "name", "prototype"].includes(k)) f[k] = Class[k];
    Object.defineProperty(Class.prototype, "constructor", { value: f, writable: true, configurable: true });
    return f;
  }
  const ObjectIdF = callable(ObjectId, "ObjectId");
  const LongF = callable(Long, "Long");
  const Int32F = callable(Int32, "Int32");
  const DoubleF = callable(Double, "Double");
  const Decimal128F = callable(Decimal128, "Decimal128");
  const TimestampF = callable(Timestamp, "Timestamp");
  const BinaryF = callable(Binary, "Binary");
  const BSONRegExpF = callable(BSONRegExp, "BSONRegExp");
  const CodeF = callable(Code, "Code");
  function NumberLong(v) { return new Long(v); }
  function NumberInt(v) { return new Int32(v); }
  function NumberDecimal(v) { return new Decimal128(v); }
  function MinKey() { return MINKEY; }
  function MaxKey() { return MAXKEY; }
  function UUID(s) {
    return new UUIDValue(host("uuid", s === undefined ? null : String(s)), 4);
  }
  function BinData(subType, b64) { return subType === 4 ? new UUIDValue(b64, 4) : new Binary(b64, subType); }
  function HexData(subType, hex) { return BinData(subType, host("hexToBase64", String(hex))); }
  function ISODate(s) {
    if (s === undefined) return new Date();
    if (s instanceof Date) return new Date(s.getTime());
    if (typeof s === "number") return new Date(s);
    const ms = host("parseDate", String(s));
    return new Date(ms);
  }

  // ---- canonical Extended JSON across the boundary -----------------------
  const MAX_DEPTH = 200;
  function num(v) {
    if (Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 && !Object.is(v, -0))
      return { $numberInt: String(v) };
    if (Number.isNaN(v)) return { $numberDouble: "NaN" };
    if (v === Infinity) return { $numberDouble: "Infinity" };
    if (v === -Infinity) return { $numberDouble: "-Infinity" };
    return { $numberDouble: Object.is(v, -0) ? "-0.0" : String(v) };
  }
  function regexFlags(flags) {
    return flags.replace(/[gydv]/g, "").split("").sort().join("");
  }
  // JS value -> canonical EJSON value; `undefined` for what a document
  // leaves out (functions, symbols). `seen` catches cycles.
  // `keepUndefined`: for showing (mongosh prints `undefined`); commands
  // send it as null, as the Node driver does.
  let keepUndefined = false;
  function toEJ(v, depth, seen) {
    if (v === null) return null;
    switch (typeof v) {
      case "undefined": return keepUndefined ? { $undefined: true } : null;
      case "boolean": case "string": return v;
      case "number": return num(v);
      case "bigint": return { $numberLong: BigInt.asIntN(64, v).toString() };
      case "function":
        if (v === MinKey) return { $minKey: 1 };
        if (v === MaxKey) return { $maxKey: 1 };
        return undefined;
      case "symbol": return undefined;
    }
    if (depth > MAX_DEPTH) throw new RangeError("a value may nest at most " + MAX_DEPTH + " levels deep");
    if (v instanceof ObjectId) return { $oid: v.$oid };
    if (v instanceof Date) {
      const t = v.getTime();
      if (Number.isNaN(t)) throw typeError("cannot store an invalid Date");
      return { $date: { $numberLong: String(t) } };
    }
    if (v instanceof Long) return { $numberLong: v.$big.toString() };
    if (v instanceof Int32) return { $numberInt: String(v.value) };
    if (v instanceof Double) {
      const n = num(v.value);
      return n.$numberDouble !== undefined ? n : { $numberDouble: String(v.value) + ".0" };
    }
    if (v instanceof Decimal128) return { $numberDecimal: v.$dec };
    if (v instanceof Cursor && keepUndefined) return toEJ(v._batch(20).docs, depth, seen);
    if (v instanceof RegExp) return { $regularExpression: { pattern: v.source, options: regexFlags(v.flags) } };
    if (v instanceof BSONRegExp) return { $regularExpression: { pattern: v.pattern, options: v.options.split("").sort().join("") } };
    if (v instanceof Timestamp) return { $timestamp: { t: v.t, i: v.i } };
    if (v instanceof Binary) return { $binary: { base64: v.$b64, subType: v.sub_type.toString(16).padStart(2, "0") } };
    if (v === MINKEY) return { $minKey: 1 };
    if (v === MAXKEY) return { $maxKey: 1 };
    if (v instanceof Code) return v.scope ? { $code: v.code, $scope: toEJ(v.scope, depth + 1, seen) } : { $code: v.code };
    if (v instanceof Number || v instanceof String || v instanceof Boolean) return toEJ(v.valueOf(), depth, seen);
    if (seen.includes(v)) throw typeError("Converting circular structure to BSON");
    seen.push(v);
    let out;
    if (Array.isArray(v)) {
      out = new Array(v.length);
      for (let i = 0; i < v.length; i++) {
        const e = toEJ(v[i], depth + 1, seen);
        out[i] = e === undefined ? null : e;
      }
    } else if (v instanceof Map) {
      out = {};
      for (const [k, x] of v) { const e = toEJ(x, depth + 1, seen); if (e !== undefined) out[String(k)] = e; }
    } else {
      out = {};
      for (const k of Object.keys(v)) {
        const e = toEJ(v[k], depth + 1, seen);
        if (e !== undefined) out[k] = e;
      }
    }
    seen.pop();
    return out;
  }
  function ej(v) { const e = toEJ(v, 0, []); return e === undefined ? null : e; }
  function fromEJ(v) {
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = fromEJ(v[i]);
      return v;
    }
    for (const k in v) {
      if (k.charCodeAt(0) === 36 /* $ */) {
        const x = v[k];
        switch (k) {
          case "$numberInt": return Number(x);
          case "$numberDouble": return Number(x);
          case "$numberLong": return new Long(x);
          case "$numberDecimal": return Object.create(Decimal128.prototype, { $dec: { value: x } });
          case "$oid": return Object.create(ObjectId.prototype, { $oid: { value: x } });
          case "$date": return new Date(typeof x === "object" ? Number(x.$numberLong) : typeof x === "string" ? Date.parse(x) : x);
          case "$binary": {
            const st = parseInt(x.subType, 16);
            return st === 4 ? new UUIDValue(x.base64, 4) : new Binary(x.base64, st);
          }
          case "$regularExpression":
            if (/^[imsu]*$/.test(x.options)) {
              try { return new RegExp(x.pattern, x.options); } catch (_) { /* not a JS regex */ }
            }
            return new BSONRegExp(x.pattern, x.options);
          case "$timestamp": return new Timestamp(x.t, x.i);
          case "$minKey": return MINKEY;
          case "$maxKey": return MAXKEY;
          case "$undefined": return undefined;
          case "$symbol": return x;
          case "$code": return new Code(x, v.$scope ? fromEJ(v.$scope) : undefined);
        }
      }
      break;
    }
    for (const k in v) v[k] = fromEJ(v[k]);
    return v;
  }
  function toText(v) {
    try {
      return JSON.stringify(ej(v));
    } catch (e) {
      // Thrown again here, shallow, so its stack still reaches the statement.
      if (e instanceof RangeError || e instanceof TypeError) throw new e.constructor(e.message);
      throw e;
    }
  }
  function fromText(s) { return fromEJ(JSON.parse(s)); }

  // ---- commands ----------------------------------------------------------
  function runCommand(dbName, cmd) { return fromEJ(host("command", dbName, toText(cmd))); }
  function checkWrite(reply, bulk) {
    const we = reply.writeErrors && reply.writeErrors[0];
    if (we) {
      if (bulk) throw new MongoBulkWriteError(we.errmsg, we.code, reply.writeErrors);
      const e = new MongoServerError(we.errmsg, we.code, we.codeName || "");
      if (we.keyValue) e.keyValue = we.keyValue;
      if (we.keyPattern) e.keyPattern = we.keyPattern;
      throw e;
    }
    const wce = reply.writeConcernError;
    if (wce) throw new MongoServerError(wce.errmsg, wce.code, wce.codeName || "");
    return reply;
  }
  function write(dbName, cmd, bulk) { return checkWrite(runCommand(dbName, cmd), bulk); }
  function isDoc(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function needDoc(v, what) {
    if (!isDoc(v)) throw typeError(what + " must be an object");
    return v;
  }
  function hasOperators(d) { const k = Object.keys(d)[0]; return k !== undefined && k[0] === "$"; }
  function copyOpts(from, to, pairs) {
    for (const [src, dst] of pairs) if (from[src] !== undefined) to[dst] = from[src];
  }
  function ensureId(d) {
    if (d._id !== undefined) return [d, d._id];
    const id = new ObjectId();
    return [{ _id: id, ...d }, id];
  }
  function stripCluster(reply) {
    const out = {};
    for (const k of Object.keys(reply)) if (k[0] !== "$" && k !== "operationTime") out[k] = reply[k];
    return out;
  }
  function indexName(keys) {
    return Object.keys(keys).map((k) => k + "_" + String(keys[k] instanceof Object ? keys[k].valueOf() : keys[k])).join("_");
  }

  // ---- cursors -----------------------------------------------------------
  const FIND_OPTIONS = ["sort", "projection", "skip", "limit", "hint", "batchSize", "collation",
    "maxTimeMS", "comment", "allowDiskUse", "min", "max", "returnKey", "showRecordId", "let"];
  let lastCursor = null;

  class Cursor {
    constructor(coll, kind, body, options) {
      this._coll = coll;
      this._kind = kind; // "find" | "aggregate"
      this._body = body; // find: filter; aggregate: pipeline
      this._options = options;
      this._id = null; // host cursor id once opened
      this._buf = [];
      this._done = false;
      this._executed = false; // an $out/$merge pipeline already run
    }
    _command() {
      const coll = this._coll._name;
      if (this._kind === "find") {
        const cmd = { find: coll, filter: this._body };
        for (const k of Object.keys(this._options)) {
          const v = this._options[k];
          if (k === "limit" && typeof v === "number") {
            if (v < 0) { cmd.limit = -v; cmd.singleBatch = true; continue; }
            if (v === 0) continue;
          }
          cmd[k] = v;
        }
        return cmd;
      }
      const cmd = { aggregate: coll, pipeline: this._body };
      const cursor = {};
      for (const k of Object.keys(this._options)) {
        if (k === "batchSize") cursor.batchSize = this._options[k];
        else if (k !== "cursor") cmd[k] = this._options[k];
      }
      cmd.cursor = cursor;
      return cmd;
    }
    _set(key, value) {
      if (this._id !== null || this._executed) throw new MongoshInvalidInputError("Cursor is already executed; cannot call " + key + "()");
      if (this._kind === "aggregate" && !["batchSize", "maxTimeMS", "hint", "comment", "collation", "allowDiskUse"].includes(key))
        throw typeError(key + "() is not available on an aggregation cursor; add a $" + key + " stage");
      this._options[key] = value;
      return this;
    }
    sort(s) { return this._set("sort", needDoc(s, "sort()")); }
    limit(n) { return this._set("limit", Number(n)); }
    skip(n) { return this._set("skip", Number(n)); }
    project(p) { return this._set("projection", needDoc(p, "projection()")); }
    projection(p) { return this.project(p); }
    hint(h) { return this._set("hint", h); }
    batchSize(n) { return this._set("batchSize", Number(n)); }
    maxTimeMS(n) { return this._set("maxTimeMS", Number(n)); }
    comment(c) { return this._set("comment", c); }
    collation(c) { return this._set("collation", needDoc(c, "collation()")); }
    min(d) { return this._set("min", d); }
    max(d) { return this._set("max", d); }
    returnKey(b) { return this._set("returnKey", b !== false); }
    showRecordId(b) { return this._set("showRecordId", b !== false); }
    allowDiskUse(b) { return this._set("allowDiskUse", b !== false); }
    pretty() { return this; }
    _open() {
      if (this._id !== null) return;
      if (this._executed) { this._id = 0; this._done = true; return; }
      this._id = host("cursorOpen", this._coll._db._name, toText(this._command()));
    }
    _fill(n) {
      this._open();
      if (this._buf.length > 0 || this._done) return;
      const r = host("cursorNext", this._id, n);
      this._buf = fromEJ(r.docs);
      if (this._transform) this._buf = this._buf.map(this._transform);
      if (r.done) this._done = true;
    }
    hasNext() { this._fill(101); return this._buf.length > 0; }
    next() {
      if (!this.hasNext()) throw new MongoshInvalidInputError("Cursor exhausted");
      return this._buf.shift();
    }
    tryNext() { return this.hasNext() ? this._buf.shift() : null; }
    isExhausted() { return !this.hasNext(); }
    objsLeftInBatch() { return this._buf.length; }
    toArray() {
      const out = [];
      for (;;) {
        this._fill(100000);
        if (this._buf.length === 0) break;
        for (const d of this._buf) out.push(d);
        this._buf = [];
      }
      return out;
    }
    // Every remaining document as canonical Extended JSON, not parsed.
    _rawAll() {
      this._open();
      const out = this._buf.map((d) => ej(d));
      this._buf = [];
      while (!this._done) {
        const r = host("cursorNext", this._id, 100000);
        for (const d of r.docs) out.push(d);
        if (r.done) this._done = true;
      }
      return out;
    }
    forEach(f) { while (this.hasNext()) { if (f(this._buf.shift()) === false) break; } }
    map(f) {
      // Like mongosh: a cursor whose documents pass through `f`.
      const prev = this._transform;
      this._transform = prev ? (d) => f(prev(d)) : f;
      return this;
    }
    itcount() { return this.toArray().length; }
    close() { if (this._id) host("cursorClose", this._id); this._buf = []; this._done = true; }
    isClosed() { return this._done && this._buf.length === 0; }
    *[Symbol.iterator]() { while (this.hasNext()) yield this._buf.shift(); }
    count() { return this._count(true); }
    size() { return this._count(true); }
    _count(applySkipLimit) {
      if (this._kind !== "find") throw typeError("count() is only for find cursors; add a $count stage");
      const cmd = { count: this._coll._name, query: this._body };
      for (const k of ["hint", "collation", "maxTimeMS"]) if (this._options[k] !== undefined) cmd[k] = this._options[k];
      if (applySkipLimit) for (const k of ["skip", "limit"]) if (this._options[k] !== undefined) cmd[k] = this._options[k];
      return runCommand(this._coll._db._name, cmd).n;
    }
    explain(verbosity) {
      const cmd = this._command();
      if (this._kind === "find") delete cmd.batchSize;
      return stripCluster(runCommand(this._coll._db._name, { explain: cmd, verbosity: explainVerbosity(verbosity) }));
    }
    // The first `n` documents for the shell to show, and whether more exist.
    _batch(n) {
      const docs = [];
      while (docs.length < n && this.hasNext()) docs.push(this._buf.shift());
      return { docs, more: this.hasNext() };
    }
    toString() { return "Cursor(" + this._coll + ")"; }
  }

  function explainVerbosity(v) {
    if (v === undefined || v === false) return "queryPlanner";
    if (v === true) return "allPlansExecution";
    if (typeof v !== "string") throw typeError("explain verbosity must be a string, not " + typeof v);
    if (!["queryPlanner", "executionStats", "allPlansExecution"].includes(v))
      throw typeError("unknown explain verbosity '" + v + "'");
    return v;
  }

  class Explainable {
    constructor(coll, verbosity) { this._coll = coll; this._verbosity = explainVerbosity(verbosity); }
    find(filter, projection, options) {
      const c = this._coll.find(filter, projection, options);
      const v = this._verbosity;
      // Like mongosh: the cursor prints (and `toArray`s) as its explain.
      c._explain = v;
      return c;
    }
    aggregate(...args) { return this._coll._aggregateCursor(args).explain(this._verbosity); }
    count(filter) {
      return stripCluster(runCommand(this._coll._db._name, { explain: { count: this._coll._name, query: filter ?? {} }, verbosity: this._verbosity }));
    }
    distinct(key, filter) {
      return stripCluster(runCommand(this._coll._db._name, { explain: { distinct: this._coll._name, key, query: filter ?? {} }, verbosity: this._verbosity }));
    }
    toString() { return "Explainable(" + this._coll + ")"; }
  }

  // ---- collections -------------------------------------------------------
  class Collection {
    constructor(db, name) { this._db = db; this._name = name; }
    getName() { return this._name; }
    getFullName() { return this._db._name + "." + this._name; }
    getDB() { return this._db; }
    toString() { return this._db._name + "." + this._name; }
    find(filter, projection, options) {
      const opts = {};
      if (projection !== undefined && projection !== null) opts.projection = needDoc(projection, "projection");
      if (options) for (const k of Object.keys(options)) if (FIND_OPTIONS.includes(k)) opts[k] = options[k];
      return new Cursor(this, "find", filter === undefined || filter === null ? {} : needDoc(filter, "filter"), opts);
    }
    findOne(filter, projection, options) {
      const c = this.find(filter, projection, options);
      c._options.limit = 1;
      c._options.singleBatch = true;
      const docs = c.toArray();
      return docs.length > 0 ? docs[0] : null;
    }
    _aggregateCursor(args) {
      let pipeline, options = {};
      if (args.length === 0) pipeline = [];
      else if (Array.isArray(args[0])) { pipeline = args[0]; options = args[1] ?? {}; }
      else pipeline = args;
      for (const s of pipeline) needDoc(s, "each pipeline stage");
      options = { ...options };
      delete options.explain;
      return new Cursor(this, "aggregate", pipeline, options);
    }
    aggregate(...args) {
      const c = this._aggregateCursor(args);
      const opts = Array.isArray(args[0]) ? args[1] : undefined;
      if (opts && opts.explain === true) return c.explain("queryPlanner");
      const last = c._body[c._body.length - 1];
      const stage = last && Object.keys(last)[0];
      if (stage === "$out" || stage === "$merge") {
        // mongosh runs a pipeline that writes at once.
        c.toArray();
        const done = new Cursor(this, "aggregate", c._body, c._options);
        done._executed = true;
        return done;
      }
      return c;
    }
    insertOne(doc, options) {
      const [d, id] = ensureId(needDoc(doc, "document"));
      write(this._db._name, { insert: this._name, documents: [d] }, false);
      return { acknowledged: true, insertedId: id };
    }
    insertMany(docs, options) {
      if (!Array.isArray(docs)) throw typeError("insertMany() needs an array of documents");
      const ids = {};
      const out = docs.map((doc, i) => { const [d, id] = ensureId(needDoc(doc, "document")); ids[String(i)] = id; return d; });
      const ordered = options && options.ordered !== undefined ? !!options.ordered : true;
      write(this._db._name, { insert: this._name, documents: out, ordered }, true);
      return { acknowledged: true, insertedIds: ids };
    }
    insert(docs, options) {
      return Array.isArray(docs) ? this.insertMany(docs, options) : this.insertOne(docs, options);
    }
    _update(filter, update, options, kind) {
      needDoc(filter, "filter");
      if (kind === "replaceOne") {
        needDoc(update, "replacement");
        if (hasOperators(update)) throw new MongoInvalidArgumentError("Replacement document must not contain atomic operators");
      } else if (Array.isArray(update)) {
        // an update pipeline
      } else {
        needDoc(update, "update");
        if (!hasOperators(update)) throw new MongoInvalidArgumentError("Update document requires atomic operators");
      }
      const stmt = { q: filter, u: update };
      copyOpts(options ?? {}, stmt, [["upsert", "upsert"], ["arrayFilters", "arrayFilters"], ["hint", "hint"], ["collation", "collation"]]);
      stmt.multi = kind === "updateMany";
      const r = write(this._db._name, { update: this._name, updates: [stmt] }, false);
      const ups = r.upserted ?? [];
      return {
        acknowledged: true,
        insertedId: ups.length > 0 ? ups[0]._id : null,
        matchedCount: r.n - ups.length,
        modifiedCount: r.nModified,
        upsertedCount: ups.length,
      };
    }
    updateOne(f, u, o) { return this._update(f, u, o, "updateOne"); }
    updateMany(f, u, o) { return this._update(f, u, o, "updateMany"); }
    replaceOne(f, u, o) { return this._update(f, u, o, "replaceOne"); }
    _delete(filter, options, one) {
      const stmt = { q: filter === undefined ? {} : needDoc(filter, "filter"), limit: one ? 1 : 0 };
      copyOpts(options ?? {}, stmt, [["hint", "hint"], ["collation", "collation"]]);
      const r = write(this._db._name, { delete: this._name, deletes: [stmt] }, false);
      return { acknowledged: true, deletedCount: r.n };
    }
    deleteOne(f, o) { return this._delete(f, o, true); }
    deleteMany(f, o) { return this._delete(f, o, false); }
    _findAndModify(filter, update, options, kind) {
      const cmd = { findAndModify: this._name, query: needDoc(filter, "filter") };
      if (kind === "delete") cmd.remove = true;
      else {
        if (kind === "replace") {
          needDoc(update, "replacement");
          if (hasOperators(update)) throw new MongoInvalidArgumentError("Replacement document must not contain atomic operators");
        } else if (!Array.isArray(update)) {
          needDoc(update, "update");
          if (!hasOperators(update)) throw new MongoInvalidArgumentError("Update document requires atomic operators");
        }
        cmd.update = update;
      }
      const o = options ?? {};
      if (kind !== "delete") cmd.new = o.returnDocument === "after" || o.returnNewDocument === true;
      copyOpts(o, cmd, [["projection", "fields"], ["sort", "sort"], ["upsert", "upsert"], ["arrayFilters", "arrayFilters"], ["hint", "hint"], ["collation", "collation"]]);
      const r = runCommand(this._db._name, cmd);
      return r.value === undefined ? null : r.value;
    }
    findOneAndUpdate(f, u, o) { return this._findAndModify(f, u, o, "update"); }
    findOneAndReplace(f, u, o) { return this._findAndModify(f, u, o, "replace"); }
    findOneAndDelete(f, o) { return this._findAndModify(f, undefined, o, "delete"); }
    findAndModify(spec) {
      const s = spec ?? {};
      const kind = s.remove ? "delete" : Array.isArray(s.update) || hasOperators(s.update ?? {}) ? "update" : "replace";
      return this._findAndModify(s.query ?? {}, s.update, { sort: s.sort, upsert: s.upsert, projection: s.fields, returnNewDocument: s.new, arrayFilters: s.arrayFilters, collation: s.collation }, kind);
    }
    bulkWrite(ops, options) {
      if (!Array.isArray(ops)) throw typeError("bulkWrite() needs an array of operations");
      const ordered = options && options.ordered !== undefined ? !!options.ordered : true;
      const inserted = {}, upserted = {};
      let matched = 0, modified = 0, deleted = 0, firstError = null;
      ops.forEach((op, i) => {
        const kind = Object.keys(needDoc(op, "each bulkWrite operation"))[0];
        const body = needDoc(op[kind], "bulkWrite " + kind);
        try {
          switch (kind) {
            case "insertOne": {
              const [d, id] = ensureId(needDoc(body.document, "insertOne document"));
              write(this._db._name, { insert: this._name, documents: [d] }, true);
              inserted[String(i)] = id;
              break;
            }
            case "updateOne": case "updateMany": case "replaceOne": {
              const u = kind === "replaceOne" ? body.replacement : body.update;
              if (u === undefined) throw typeError(kind + " needs { filter, " + (kind === "replaceOne" ? "replacement" : "update") + " }");
              const stmt = { q: body.filter ?? {}, u, multi: kind === "updateMany" };
              copyOpts(body, stmt, [["upsert", "upsert"], ["arrayFilters", "arrayFilters"], ["hint", "hint"], ["collation", "collation"]]);
              const r = write(this._db._name, { update: this._name, updates: [stmt] }, true);
              const ups = r.upserted ?? [];
              if (ups.length > 0) upserted[String(i)] = ups[0]._id;
              matched += r.n - ups.length;
              modified += r.nModified;
              break;
            }
            case "deleteOne": case "deleteMany": {
              const stmt = { q: body.filter ?? {}, limit: kind === "deleteOne" ? 1 : 0 };
              copyOpts(body, stmt, [["hint", "hint"], ["collation", "collation"]]);
              deleted += write(this._db._name, { delete: this._name, deletes: [stmt] }, true).n;
              break;
            }
            default:
              throw typeError("unknown bulkWrite operation '" + kind + "'");
          }
        } catch (e) {
          if (ordered || !(e instanceof MongoBulkWriteError)) throw e;
          if (!firstError) firstError = e;
        }
      });
      if (firstError) throw firstError;
      return {
        acknowledged: true,
        insertedCount: Object.keys(inserted).length,
        insertedIds: inserted,
        matchedCount: matched,
        modifiedCount: modified,
        deletedCount: deleted,
        upsertedCount: Object.keys(upserted).length,
        upsertedIds: upserted,
      };
    }
    countDocuments(filter, options) {
      const o = options ?? {};
      const pipeline = [{ $match: filter === undefined ? {} : needDoc(filter, "filter") }];
      if (o.skip !== undefined) pipeline.push({ $skip: o.skip });
      if (o.limit !== undefined) pipeline.push({ $limit: o.limit });
      pipeline.push({ $group: { _id: 1, n: { $sum: 1 } } });
      const c = new Cursor(this, "aggregate", pipeline, {});
      for (const k of ["hint", "collation", "maxTimeMS", "comment"]) if (o[k] !== undefined) c._options[k] = o[k];
      const docs = c.toArray();
      return docs.length > 0 ? Number(docs[0].n) : 0;
    }
    estimatedDocumentCount(options) { return runCommand(this._db._name, { count: this._name }).n; }
    count(filter, options) { return runCommand(this._db._name, { count: this._name, query: filter ?? {} }).n; }
    distinct(key, filter, options) {
      if (typeof key !== "string") throw typeError("distinct() needs a field name");
      const cmd = { distinct: this._name, key, query: filter ?? {} };
      if (options && options.collation) cmd.collation = options.collation;
      return runCommand(this._db._name, cmd).values;
    }
    createIndex(keys, options, commitQuorum) { return this._createIndexes([needDoc(keys, "index keys")], options)[0]; }
    createIndexes(list, options) {
      if (!Array.isArray(list)) throw typeError("createIndexes() needs an array of key documents");
      return this._createIndexes(list.map((k) => needDoc(k, "each index key")), options);
    }
    ensureIndex(keys, options) { return this.createIndex(keys, options); }
    _createIndexes(keyList, options) {
      const names = [];
      const indexes = keyList.map((key) => {
        const spec = { key, ...(options ?? {}) };
        const name = typeof spec.name === "string" ? spec.name : indexName(key);
        spec.name = name;
        names.push(name);
        return spec;
      });
      runCommand(this._db._name, { createIndexes: this._name, indexes });
      return names;
    }
    dropIndex(index) {
      if (index === undefined) throw typeError("dropIndex() needs an index name or key document");
      return stripCluster(runCommand(this._db._name, { dropIndexes: this._name, index }));
    }
    dropIndexes(index) {
      return stripCluster(runCommand(this._db._name, { dropIndexes: this._name, index: index === undefined ? "*" : index }));
    }
    getIndexes() { return new Cursor(this, "listIndexes", null, {})._listAll(); }
    getIndexKeys() { return this.getIndexes().map((i) => i.key); }
    getIndices() { return this.getIndexes(); }
    stats(scale) {
      const s = typeof scale === "object" && scale !== null ? scale.scale ?? 1 : scale ?? 1;
      return stripCluster(runCommand(this._db._name, { collStats: this._name, scale: s }));
    }
    dataSize() { return this.stats().size; }
    isCapped() { return this.stats().capped === true; }
    storageSize() { return this.stats().storageSize; }
    totalIndexSize() { return this.stats().totalIndexSize; }
    totalSize() { const s = this.stats(); return s.storageSize + s.totalIndexSize; }
    validate(options) {
      const cmd = { validate: this._name };
      if (options && options.full) cmd.full = true;
      return stripCluster(runCommand(this._db._name, cmd));
    }
    renameCollection(to, dropTarget) {
      const db = this._db._name;
      return stripCluster(runCommand("admin", { renameCollection: db + "." + this._name, to: db + "." + to, dropTarget: !!dropTarget }));
    }
    drop() {
      try { runCommand(this._db._name, { drop: this._name }); return true; } catch (e) {
        if (e instanceof MongoServerError && e.code === 26) return false;
        throw e;
      }
    }
    explain(verbosity) { return new Explainable(this, verbosity); }
    exists() {
      const r = runCommand(this._db._name, { listCollections: 1, filter: { name: this._name } });
      return r.cursor.firstBatch[0] ?? null;
    }
  }
  Cursor.prototype._listAll = function () {
    const id = host("cursorOpen", this._coll._db._name, toText({ listIndexes: this._coll._name }));
    const out = [];
    for (;;) {
      const r = host("cursorNext", id, 100000);
      for (const d of fromEJ(r.docs)) out.push(d);
      if (r.done) return out;
    }
  };

  // ---- databases ---------------------------------------------------------
  class Database {
    constructor(name) { this._name = name; this._colls = new Map(); }
    getName() { return this._name; }
    getCollection(name) {
      if (typeof name !== "string") throw typeError("getCollection() needs a collection name");
      let c = this._colls.get(name);
      if (!c) {
        // db.system.profile: an unknown member of a collection names a
        // sub-collection, as in mongosh.
        c = new Proxy(new Collection(this, name), {
          get(target, key, receiver) {
            if (typeof key !== "string" || key in target || key.startsWith("_") || NOT_COLLECTIONS.includes(key))
              return Reflect.get(target, key, receiver);
            return target._db.getCollection(target._name + "." + key);
          },
        });
        this._colls.set(name, c);
      }
      return c;
    }
    getSiblingDB(name) { return makeDb(host("checkDbName", String(name))); }
    getMongo() { return mongo; }
    runCommand(cmd) {
      if (typeof cmd === "string") cmd = { [cmd]: 1 };
      return runCommand(this._name, needDoc(cmd, "command"));
    }
    adminCommand(cmd) {
      if (typeof cmd === "string") cmd = { [cmd]: 1 };
      return runCommand("admin", needDoc(cmd, "command"));
    }
    getCollectionNames() {
      const id = host("cursorOpen", this._name, toText({ listCollections: 1, nameOnly: true }));
      const names = [];
      for (;;) {
        const r = host("cursorNext", id, 100000);
        for (const d of fromEJ(r.docs)) names.push(d.name);
        if (r.done) break;
      }
      return names.sort();
    }
    getCollectionInfos(filter) {
      return runCommand(this._name, { listCollections: 1, filter: filter ?? {} }).cursor.firstBatch;
    }
    createCollection(name, options) {
      const r = runCommand(this._name, { create: name, ...(options ?? {}) });
      return { ok: r.ok };
    }
    createView(name, source, pipeline, options) {
      const r = runCommand(this._name, { create: name, viewOn: source, pipeline, ...(options ?? {}) });
      return { ok: r.ok };
    }
    dropDatabase() {
      runCommand(this._name, { dropDatabase: 1 });
      return { ok: 1, dropped: this._name };
    }
    stats(scale) {
      const s = typeof scale === "object" && scale !== null ? scale.scale ?? 1 : scale ?? 1;
      return stripCluster(runCommand(this._name, { dbStats: 1, scale: s }));
    }
    serverStatus(opts) { return stripCluster(runCommand("admin", { serverStatus: 1, ...(opts ?? {}) })); }
    hostInfo() { return stripCluster(runCommand("admin", { hostInfo: 1 })); }
    version() { return runCommand("admin", { buildInfo: 1 }).version; }
    setProfilingLevel(level, options) {
      const cmd = { profile: level };
      if (typeof options === "number") cmd.slowms = options;
      else if (options) Object.assign(cmd, options);
      return stripCluster(runCommand(this._name, cmd));
    }
    getProfilingStatus() {
      const r = runCommand(this._name, { profile: -1 });
      const out = { was: r.was, slowms: r.slowms };
      if (r.sampleRate !== undefined) out.sampleRate = r.sampleRate;
      if (r.filter !== undefined) out.filter = r.filter;
      out.ok = r.ok;
      return out;
    }
    getProfilingLevel() { return runCommand(this._name, { profile: -1 }).was; }
    aggregate(pipeline, options) {
      const c = new Cursor(new Collection(this, 1), "aggregate", pipeline ?? [], { ...(options ?? {}) });
      c._coll = { _db: this, _name: 1, toString: () => this._name };
      return c;
    }
    getLastError() { return null; }
  }
  const NOT_COLLECTIONS = ["then", "toJSON", "inspect", "asymmetricMatch", "$$typeof", "nodeType", "length"];
  // db.<name>: any property that is not a Database member names a collection.
  function makeDb(name) {
    return new Proxy(new Database(name), {
      get(target, key, receiver) {
        if (typeof key !== "string" || key in target || key.startsWith("_") || NOT_COLLECTIONS.includes(key))
          return Reflect.get(target, key, receiver);
        return target.getCollection(key);
      },
    });
  }
  const mongo = {
    getDB(name) { return makeDb(host("checkDbName", String(name))); },
    getDBNames() { return runCommand("admin", { listDatabases: 1, nameOnly: true }).databases.map((d) => d.name); },
    toString() { return "Mongo"; },
  };

  // ---- printing ----------------------------------------------------------
  function show(v, expanded) {
    if (typeof v === "string") return v;
    if (v === undefined) return "";
    if (typeof v === "bigint") return v + "n";
    if (v instanceof Database) return v._name;
    if (typeof v === "function") return "[Function: " + (v.name || "(anonymous)") + "]";
    if (typeof v === "symbol") return v.toString();
    if (v instanceof Collection || v instanceof Explainable) return String(v);
    if (v instanceof Error) return (v.stack && v.name !== "MongoServerError") ? v.name + ": " + v.message : v.name + ": " + v.message;
    keepUndefined = true;
    try { return host("inspect", toText(v), expanded ? 1 : 0); } catch (e) { return String(v); } finally { keepUndefined = false; }
  }
  function print(...args) { host("print", args.map((a) => show(a, false)).join(" ")); }
  function printjson(...args) { host("print", args.map((a) => show(a, true)).join(" ")); }
  const console = {
    log: print, info: print, warn: print, error: print, debug: print,
  };
  function sleep(ms) { host("sleep", Number(ms) || 0); }

  const EJSON = {
    stringify(v, replacer, space, options) {
      if (replacer && typeof replacer === "object" && !Array.isArray(replacer)) { options = replacer; replacer = undefined; }
      if (space && typeof space === "object") { options = space; space = undefined; }
      const relaxed = !(options && options.relaxed === false);
      return host("ejsonStringify", toText(v), relaxed ? 1 : 0, typeof space === "number" ? space : 0);
    },
    parse(s) { return fromEJ(JSON.parse(host("ejsonParse", String(s)))); },
    serialize(v) { return JSON.parse(host("ejsonStringify", toText(v), 1, 0)); },
    deserialize(v) { return fromEJ(JSON.parse(host("ejsonParse", JSON.stringify(v)))); },
  };

  function bsonsize(d) { return host("bsonsize", toText(needDoc(d, "bsonsize() argument"))); }

  // ---- shell commands (use, show, it) and what the host asks of values ----
  const shell = {
    use(name) {
      const checked = host("checkDbName", String(name));
      const same = global.db && global.db.getName() === checked;
      global.db = makeDb(checked);
      host("use", checked);
      host("message", same ? "already on db " + checked : "switched to db " + checked);
    },
    show(what) {
      switch (what) {
        case "dbs": case "databases": {
          const r = runCommand("admin", { listDatabases: 1 });
          const modelled = r.schemalab && r.schemalab.sizesModelled === true;
          const rows = r.databases.map((d) => [d.name, Number(d.sizeOnDisk ?? 0)]);
          const width = Math.max(0, ...rows.map((x) => x[0].length));
          host("message", rows.map(([n, s]) => n.padEnd(width) + "  " + humanSize(s) + (modelled ? " (modelled)" : "")).join("\n"));
          return undefined;
        }
        case "collections": case "tables": {
          const names = global.db.getCollectionNames();
          if (names.length > 0) host("message", names.join("\n"));
          return undefined;
        }
        case "profile": {
          const docs = global.db.getCollection("system.profile").find().sort({ $natural: -1 }).limit(5).toArray();
          if (docs.length === 0) host("message", "db.system.profile is empty\nUse db.setProfilingLevel(2) to enable profiling");
          else printjson(...docs);
          return undefined;
        }
        default:
          throw new MongoshInvalidInputError("'" + what + "' is not a valid argument for \"show\".");
      }
    },
    it() {
      if (!lastCursor) return new ShellText("no cursor");
      return lastCursor;
    },
  };
  class ShellText { constructor(s) { this.text = s; } }
  function humanSize(bytes) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let v = bytes, u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return v.toFixed(2) + " " + units[u];
  }

  // How the host shows a statement's value. `mode` "shell": what mongosh
  // prints (a cursor's first 20 documents, `it` continues); "value": the
  // whole value (a cursor run to its end, an explain cursor explained);
  // "silent": nothing, and nothing runs (a script file, as `mongosh f.js`).
  function display(v, mode) {
    if (mode === "silent") return JSON.stringify({ k: "none" });
    if (v instanceof ShellText) return JSON.stringify({ k: "msg", s: v.text });
    if (v instanceof Cursor) {
      if (v._explain) return JSON.stringify({ k: "value", v: ej(v.explain(v._explain)) });
      // The documents exactly as the server sent them (a double stays a
      // double), unless the script maps them.
      if (mode === "value") {
        // Not yet run: the host runs it and keeps the documents itself, so
        // a large answer never passes through JavaScript.
        if (!v._transform && v._id === null && !v._executed && v._kind !== "listIndexes")
          return JSON.stringify({ k: "cursor", db: v._coll._db._name, cmd: ej(v._command()) });
        return JSON.stringify({ k: "value", v: v._transform ? ej(v.toArray()) : v._rawAll() });
      }
      const { docs, more } = v._batch(20);
      lastCursor = more ? v : null;
      return JSON.stringify({ k: "batch", docs: ej(docs), more });
    }
    if (v === undefined) return JSON.stringify({ k: "none" });
    if (v === MinKey || v === MaxKey) return JSON.stringify({ k: "value", v: ej(v) });
    if (v instanceof Database) return JSON.stringify({ k: "db", s: v._name });
    if (v instanceof Collection) return JSON.stringify({ k: "coll", db: v._db._name, s: v._name });
    if (v instanceof Explainable || typeof v === "function" || typeof v === "symbol" || v instanceof Error)
      return JSON.stringify({ k: "text", s: show(v, false) });
    if (mode === "value") return JSON.stringify({ k: "value", v: ej(v) });
    keepUndefined = true;
    try { return JSON.stringify({ k: "value", v: ej(v) }); } finally { keepUndefined = false; }
  }

  // Bind `name` to a value given by the host (exercise parameters).
  function bind(name, text) {
    Object.defineProperty(global, name, { value: fromText(text), writable: false, configurable: true, enumerable: false });
  }

  const hidden = (name, value) => Object.defineProperty(global, name, { value, writable: false, configurable: false, enumerable: false });
  hidden("__display", display);
  hidden("__bind", bind);
  hidden("__shell", shell);
  Object.assign(global, {
    ObjectId: ObjectIdF, ISODate, NumberLong, NumberInt, NumberDecimal, Long: LongF, Int32: Int32F,
    Double: DoubleF, Decimal128: Decimal128F, Timestamp: TimestampF, BinData, HexData, UUID, MinKey,
    MaxKey, Binary: BinaryF, BSONRegExp: BSONRegExpF, Code: CodeF,
    MongoServerError, MongoBulkWriteError, MongoInvalidArgumentError, BSONError, EJSON, print, printjson, console, sleep, bsonsize,
  });
  // mongosh also offers Object.bsonsize.
  Object.defineProperty(Object, "bsonsize", { value: bsonsize, writable: true, configurable: true });
  global.db = makeDb(host("initialDb"));
})(globalThis);
