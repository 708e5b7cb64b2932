#!/usr/bin/env bash
# Run the upstream postgrest-js jest suite (supabase-js packages/core/postgrest-js)
# against Hearth's /rest/v1, end to end (docs/rest.md "Running the postgrest-js suite"):
#   fresh data folder + fresh control DB on a PostgreSQL 15 (PGJS_PG, default the
#   machine's :5432) -> start Hearth on :54321 -> load the fixture (schema + seed) over
#   DB_URL as the project owner -> expose `personal` -> jest --ci --runInBand -> stop Hearth.
# Run from the project root: PGJS_DIR=~/pgjs scripts/postgrest-js-suite/run.sh
# Prints the totals. Results: $PGJS_OUT (default $PGJS_DIR/out)/jest-results.json, jest.log
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${PGJS_DIR:?set PGJS_DIR to the folder holding packages/core/postgrest-js (see README.md)}
PKG=$ROOT/packages/core/postgrest-js
HEARTH=${HEARTH_DIR:-$(pwd)}
OUT=${PGJS_OUT:-$ROOT/out}
export HEARTH_DATA_DIR=${HEARTH_DATA_DIR:-/tmp/pgrst-hearth}
export HEARTH_CONTROL_DB=${HEARTH_CONTROL_DB:-pgjs_hearth}
SU=${PGJS_PG:-postgres://postgres@127.0.0.1:5432}
export DATABASE_URL="$SU/postgres"
mkdir -p "$OUT"; rm -f "$OUT"/*
# jest and its helpers live beside the package (PGJS_DIR), installed once
if [ ! -d "$ROOT/node_modules/jest" ]; then
  cp "$HERE/package.json" "$HERE/tsconfig.base.json" "$ROOT/" && (cd "$ROOT" && npm install --no-audit --no-fund >/dev/null) || { echo "npm install in $ROOT failed" >&2; exit 1; }
fi

psu() { psql "$SU/$1" -X -q -At -v ON_ERROR_STOP=1 -c "$2"; }

drop_previous() {  # only what a previous run of this script created (refs from our own control DB)
  if [ "$(psu postgres "select 1 from pg_database where datname='$HEARTH_CONTROL_DB'")" = 1 ]; then
    for ref in $(psu "$HEARTH_CONTROL_DB" "select ref from platform.projects" 2>/dev/null); do
      psu postgres "select pg_terminate_backend(pid) from pg_stat_activity where datname='hearth_$ref'" >/dev/null
      psu postgres "drop database if exists hearth_$ref" && psu postgres "drop role if exists hearth_${ref}_owner"
    done
    psu postgres "select pg_terminate_backend(pid) from pg_stat_activity where datname='$HEARTH_CONTROL_DB'" >/dev/null
    psu postgres "drop database if exists $HEARTH_CONTROL_DB"
  fi
}

if curl -s -o /dev/null "http://127.0.0.1:54321/"; then echo "port 54321 is already in use; stop that first" >&2; exit 1; fi
drop_previous
rm -rf "$HEARTH_DATA_DIR"

# 1. start Hearth
( cd "$HEARTH" && exec node bin/hearth.js start ) > "$OUT/hearth.log" 2>&1 &
HPID=$!
echo "$HPID" > "$OUT/hearth.pid"
stop_hearth() {
  if kill -0 "$HPID" 2>/dev/null; then kill -TERM "$HPID"; for i in $(seq 1 30); do kill -0 "$HPID" 2>/dev/null || break; sleep 1; done; fi
}
trap stop_hearth EXIT
for i in $(seq 1 60); do grep -q "Hearth is running" "$OUT/hearth.log" && break; kill -0 $HPID 2>/dev/null || { cat "$OUT/hearth.log"; exit 1; }; sleep 1; done
( cd "$HEARTH" && npx hearth status -o json ) > "$OUT/status.json" || { echo "hearth status failed" >&2; exit 1; }
j() { node -e "console.log(JSON.parse(require('fs').readFileSync('$OUT/status.json','utf8'))['$1'])"; }
BASE_URL=$(j BASE_URL); REF=$(j PROJECT_REF); PUB=$(j PUBLISHABLE_KEY); DB_URL=$(j DB_URL); MGMT=$(j MANAGEMENT_TOKEN)
echo "Hearth pid $HPID, project $REF"

# 2. fixture, all of it as the owner role (DB_URL), as Supabase runs migrations as
#    `postgres` (its CREATE SCHEMA personal included); failing statements are logged, not fatal.
psql "$DB_URL" -X -q -v ON_ERROR_STOP=0 -f "$PKG/test/supabase/migrations/00000000000000_schema.sql" > "$OUT/fixture-schema.log" 2>&1
psql "$DB_URL" -X -q -v ON_ERROR_STOP=0 -f "$PKG/test/supabase/seed.sql" > "$OUT/fixture-seed.log" 2>&1
echo "fixture errors:"; grep -h "ERROR" "$OUT/fixture-schema.log" "$OUT/fixture-seed.log" | sed 's/^/  /'

# 3. expose the schemas of test/supabase/config.toml that exist (graphql_public does not)
curl -s -X PATCH -H "Authorization: Bearer $MGMT" -H 'content-type: application/json' \
  -d '{"db_schema": "public,personal"}' "$BASE_URL/v1/projects/$REF/config/api" > "$OUT/config-api.json"; echo; cat "$OUT/config-api.json"; echo
# the fixture's `alter role authenticator set pgrst.db_plan_enabled` asks for explain(): Hearth's setting for it
curl -s -X PATCH -H "Authorization: Bearer $MGMT" -H 'content-type: application/json' \
  -d '{"db_plan_enabled": true}' "$BASE_URL/v1/projects/$REF/config/api" > "$OUT/config-api-plan.json"; cat "$OUT/config-api-plan.json"; echo
sleep 2

# 4. jest (no -u; inline snapshots are the expected answers)
cd "$ROOT"
PGJS_DIR=$ROOT HEARTH_PUBLISHABLE_KEY=$PUB npx jest -c "$HERE/jest.config.js" --ci --runInBand \
  --json --outputFile="$OUT/jest-results.json" > "$OUT/jest.log" 2>&1
JEST_RC=$?
stop_hearth
trap - EXIT
[ "${KEEP_DB:-0}" = 1 ] || drop_previous
rm -rf "$HEARTH_DATA_DIR"

node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
console.log(`test files: ${r.numTotalTestSuites} (passed ${r.numPassedTestSuites}, failed ${r.numFailedTestSuites})`);
console.log(`tests: ${r.numTotalTests} total, ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
for (const s of r.testResults) {
  const c = {passed:0, failed:0, other:0}; for (const t of s.assertionResults) c[t.status in c ? t.status : "other"]++;
  console.log(`  ${s.name.replace(/.*\/test\//, "")}: ${c.passed} passed, ${c.failed} failed, ${c.other} skipped${s.assertionResults.length ? "" : " (suite error: " + (s.message||"").split("\n").slice(0,3).join(" ") + ")"}`);
}' "$OUT/jest-results.json"
echo "jest exit code $JEST_RC; full log $OUT/jest.log"
