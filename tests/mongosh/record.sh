#!/usr/bin/env bash
# Re-record the expected outputs of the mongosh compatibility corpus.
#
#   tests/mongosh/record.sh [SCRIPT.js ...]
#
# Starts `schemalab serve` on a free port, runs real mongosh on every
# script (or only the ones named) and writes SCRIPT.out next to each:
# the format is described in tests/mongosh/README.md.
#
# Environment:
#   MONGOSH    the mongosh to run (default: `mongosh` on PATH)
#   SCHEMALAB  the schemalab binary that serves (default: target/release/schemalab)
#   URI        record against this server instead of starting one
#              (e.g. a real mongod: mongodb://127.0.0.1:27017/test)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
MONGOSH="${MONGOSH:-mongosh}"
SCHEMALAB="${SCHEMALAB:-$root/target/release/schemalab}"

server_pid=""
cleanup() { if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

if [ -z "${URI:-}" ]; then
  log="$(mktemp)"
  "$SCHEMALAB" serve --port 0 >"$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do
    if grep -q 'mongodb://127.0.0.1:' "$log"; then break; fi
    sleep 0.1
  done
  port="$(grep -o 'mongodb://127.0.0.1:[0-9]*' "$log" | head -1 | sed 's/.*://')"
  if [ -z "$port" ]; then echo "record.sh: schemalab serve did not start:" >&2; cat "$log" >&2; exit 1; fi
  URI="mongodb://127.0.0.1:$port/test"
fi
echo "recording with $("$MONGOSH" --version) against $URI" >&2

if [ "$#" -gt 0 ]; then scripts=("$@"); else mapfile -t scripts < <(find "$here" -name '*.js' | sort); fi

# The normalisation that tests/it/mongosh_corpus.rs applies too (see
# README.md): Node.js process warnings ("(node:PID) ..." and the
# "(Use `node --trace-warnings ...`" hint after them) are dropped, and of a
# SyntaxError only its first line is kept (mongosh's parser appends a code
# frame that no other engine reproduces).
normalise_stderr() {
  awk 'skip { next }
       /^\(node:[0-9]+\) / { next }
       /^\(Use `node --trace-warnings/ { next }
       /^SyntaxError: / { print; skip = 1; next }
       { print }'
}

for js in "${scripts[@]}"; do
  out="${js%.js}.out"
  so="$(mktemp)"; se="$(mktemp)"
  code=0
  (cd "$(dirname "$js")" && "$MONGOSH" --quiet --norc "$URI" "$(basename "$js")") >"$so" 2>"$se" </dev/null || code=$?
  normalise_stderr <"$se" >"$se.n"
  {
    cat "$so"
    if [ -s "$se.n" ]; then echo "--- stderr"; cat "$se.n"; fi
    echo "--- exit $code"
  } >"$out"
  rm -f "$se.n"
  rm -f "$so" "$se"
  printf '%s exit %s\n' "${js#"$root"/}" "$code" >&2
done
