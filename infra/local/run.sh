#!/usr/bin/env bash
# The one entry point for a fresh machine: installs what is missing (npm
# packages; the stack script installs the services), starts the local stack,
# then either runs the service or runs the whole test suite.
#
#   bash infra/local/run.sh         ingress + workers in the foreground (Ctrl-C stops them)
#   bash infra/local/run.sh test    the whole test suite (unit + integration, real services)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mode="${1:-serve}"

say() { printf '[run] %s\n' "$*"; }

# Node packages, pinned by package-lock.json (exact versions in package.json too); npm keeps its
# download cache in ~/.npm. `npm install` rather than `npm ci`: the registry mirror here lacks some
# optional platform packages (rollup's for other OSes), which npm ci refuses and npm install skips.
# A changed patch (patches/, applied by postinstall) installs again too.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
   || [ -n "$(find patches -newer node_modules/.package-lock.json 2>/dev/null)" ]; then
  say "installing npm packages…"
  npm install --no-audit --no-fund --prefer-offline
  # npm leaves this file alone when nothing changed; touched, it marks the patches as applied.
  touch node_modules/.package-lock.json
fi

bash infra/local/stack.sh start

case "$mode" in
  serve)
    # Outside production a newcomer gets a way in: an admin token kept in .stack/local-admin-token
    # (unless ADMIN_TOKEN is set), and once the ingress answers /readyz, an Enterprise workspace
    # "local" with an API key kept in .stack/local-api-key, printed with a first curl. Later runs
    # print the same ones (a new key if the database was reset). src/links/admin/local-access.ts.
    bootstrap=
    if [ "${NODE_ENV:-development}" != production ]; then
      mkdir -p .stack
      ADMIN_TOKEN="${ADMIN_TOKEN:-$(npx tsx src/links/admin/local-access-cli.ts admin-token)}"
      export ADMIN_TOKEN
      npx tsx src/links/admin/local-access-cli.ts bootstrap &
      bootstrap=$!
    fi
    say "starting workers and ingress (Ctrl-C stops both)…"
    # As `npm run workers` (its young-generation size, README "Deployment"), started directly because
    # npm does not pass the stopping signal on to its child.
    NODE_OPTIONS="--max-semi-space-size=32 ${NODE_OPTIONS:-}" npx tsx workers/all.ts &
    workers=$!
    trap 'kill -TERM $workers $bootstrap 2>/dev/null; wait $workers 2>/dev/null' EXIT
    # npm start: the ingress with its malloc settings (see README, "QR codes and barcodes").
    npm start
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
