#!/usr/bin/env bash
# What a person sees with `make run`: time until all four /readyz answer 200,
# then Ctrl-C (SIGINT to the process group, as a terminal sends it) and a ps
# check that nothing of the stack is left. Loopback only.
#
#   scripts/check_make_run.sh            # first run
#   scripts/check_make_run.sh SO...      # later run: fetch an order made earlier
set -u
cd "$(dirname "$0")/.."
log=.reach/check_make_run.log
mkdir -p .reach
setsid make run >"$log" 2>&1 &
pgid=$!
start=$(date +%s%N)
for port in 8080 8081 8082 9000; do
  until curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; do
    kill -0 "$pgid" 2>/dev/null || { echo "make run exited early; see $log"; exit 1; }
    sleep 0.2
  done
done
echo "all four /readyz answered 200 after $(( ($(date +%s%N) - start) / 1000000 )) ms"
for port in 8080 8081 8082 9000; do
  echo "  :$port /readyz -> $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")"
done
if [ $# -ge 1 ]; then
  echo "order $1 from an earlier run: $(curl -s "http://127.0.0.1:9000/api/orders/$1")"
else
  echo "new order: $(curl -s -X POST http://127.0.0.1:9000/api/orders -H 'content-type: application/json' \
    -d '{"sku":"SKU2024001","quantity":1,"customer":"check-make-run"}')"
fi
kill -INT -- "-$pgid"
wait "$pgid"
echo "make run exited with $?"
sleep 2
left=$(ps -eo args | grep -E 'reach_common.stack|-m (shop|gateway|agent|retriever)$|redis-server|postgres' | grep -cv grep)
echo "processes of the stack left: $left"
