#!/usr/bin/env bash
# `npm test` after the build: the type check and the tests side by side (RFC-001, "How long the suite
# takes"). The suite keeps two cores about 90% busy (it waits on processes and loopback services now
# and then); the type check, at the lowest priority, takes its 15-20 s of CPU from those gaps
# instead of running before the tests beside the build. Its output is printed after the tests', and
# either failing fails the whole.
set -u
log=$(mktemp "${TMPDIR:-/tmp}/recall-tsc.XXXXXX")
nice -n 19 tsc --noEmit >"$log" 2>&1 &
typecheck=$!
# A background job ignores the ^C that stops the tests: it is stopped here.
trap 'kill "$typecheck" 2>/dev/null; rm -f "$log"' EXIT
vitest run "$@"
tests=$?
if ! wait "$typecheck"; then
  cat "$log"
  echo "npm test: the type check (tsc --noEmit) failed" >&2
  exit 1
fi
exit "$tests"
