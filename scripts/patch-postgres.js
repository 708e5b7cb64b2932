// Patches postgres.js 3.4.9 (node_modules/postgres) so that a connection whose
// backend died cannot crash the process: upstream porsager/postgres#1208
// (fix PR #1209, related #1155, #1186, #1215; unreleased in 3.4.9). Run by the
// root "postinstall" script, so `npm ci` applies it; idempotent. It checks the
// installed version and the exact upstream text of every spot it changes and
// fails loudly when either differs: then re-check upstream and drop or rework
// this patch (docs/architecture.md, "Driver patch").
//
// What changes, in src/, cjs/src/ and cf/src/ (the ESM, CommonJS and workerd builds):
// connection.js
//   execute    a query given to a connection without a socket (closed, not yet
//              reconnected) is rejected with CONNECTION_CLOSED instead of being
//              written into a buffer that a setImmediate later writes to `null`.
//   nextWrite  last guard: with no socket, the pending bytes are dropped and the
//              pending queries rejected with CONNECTION_CLOSED; nothing throws.
//   closed     forgets the dead socket's pending write (a stale timer handle
//              kept the next socket's startup message from ever being sent) and
//              its in-flight query and error (the old backend's FATAL error
//              otherwise rejected the first query after the reconnect).
// index.js
//   reserve    once the reserved connection closed (the pool takes it back and
//              reconnects it), the reserved handle rejects its queued and later
//              queries with CONNECTION_CLOSED, and release() no longer hands the
//              connection to the pool a second time.
//   begin      the same for a transaction: its queued queries, later queries and
//              its own ROLLBACK/COMMIT reject instead of running on the
//              reconnected session, outside the transaction.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const VERSION = '3.4.9';
const MARK = '// hearth-patch porsager/postgres#1208';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'postgres');

/** [file name, upstream text (must occur exactly once), replacement] */
const edits = [
  [
    'connection.js',
    `    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))
`,
    `    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))

    if (!socket) ${MARK}: closed; true keeps callers from parking it in \`full\`
      return (queryError(q, Errors.connection('CONNECTION_CLOSED', options)), true)
`,
  ],
  [
    'connection.js',
    `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)
`,
    `  function nextWrite(fn) {
    if (!socket) { ${MARK}: settle, never throw from the timer
      clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options))
      return false
    }
    const x = socket.write(chunk, fn)
`,
  ],
  [
    'connection.js',
    `    clearImmediate(nextWriteTimer)
    socket.removeListener('data', data)
    socket.removeListener('connect', connected)
    idleTimer.cancel()
`,
    `    clearImmediate(nextWriteTimer)
    chunk = nextWriteTimer = null ${MARK}: the next socket starts clean
    socket.removeListener('data', data)
    socket.removeListener('connect', connected)
    idleTimer.cancel()
`,
  ],
  [
    'connection.js',
    `    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))
`,
    `    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))
    query = results = errorResponse = null ${MARK}: settled above; not the next backend's
    result = new Result()
`,
  ],
  [
    'index.js',
    `    c.reserved.release = true

    const sql = Sql(handler)
    sql.release = () => {
      c.reserved = null
      onopen(c)
    }

    return sql

    function handler(q) {
      c.queue === full
`,
    `    c.reserved.release = true

    let lost = null ${MARK}: the connection closed under this handle
    c.onclose = e => {
      lost = e
      while (queue.length) queue.shift().reject(e)
    }

    const sql = Sql(handler)
    sql.release = () => {
      if (lost)
        return
      c.onclose = null
      c.reserved = null
      onopen(c)
    }

    return sql

    function handler(q) {
      if (lost)
        return q.reject(lost)
      c.queue === full
`,
  ],
  [
    'index.js',
    `      , connection
      , prepare = null
`,
    `      , connection
      , prepare = null
      , lost = null ${MARK}: the connection closed under this transaction
`,
  ],
  [
    'index.js',
    `        new Promise((_, reject) => connection.onclose = reject)
`,
    `        new Promise((_, reject) => connection.onclose = e => {
          lost = e
          while (queries.length) queries.shift().reject(e)
          reject(e)
        })
`,
  ],
  [
    'index.js',
    `        q.catch(e => uncaughtError || (uncaughtError = e))
        c.queue === full
`,
    `        q.catch(e => uncaughtError || (uncaughtError = e))
        if (lost)
          return q.reject(lost)
        c.queue === full
`,
  ],
];

function fail(message) {
  console.error(`patch-postgres: ${message}`);
  process.exit(1);
}

function count(text, part) {
  return text.split(part).length - 1;
}

const pkg = path.join(root, 'package.json');
if (!existsSync(pkg)) fail(`${pkg} not found: is postgres installed?`);
const version = JSON.parse(readFileSync(pkg, 'utf8')).version;
if (version !== VERSION) {
  fail(
    `postgres ${version} installed, this patch is written for ${VERSION}: check whether porsager/postgres#1208 ` +
      'is fixed upstream, then remove or rework scripts/patch-postgres.js (docs/architecture.md, "Driver patch")',
  );
}

// Every file is checked before any is written, so a mismatch leaves the driver untouched.
const writes = [];
let applied = 0;
for (const dir of ['src', 'cjs/src', 'cf/src']) {
  for (const name of ['connection.js', 'index.js']) {
    const file = path.join(root, dir, name);
    let text = readFileSync(file, 'utf8');
    const before = text;
    for (const [target, from, to] of edits) {
      if (target !== name) continue;
      if (text.includes(to)) continue; // applied by an earlier run
      if (count(text, from) !== 1) fail(`${dir}/${name}: the upstream text to patch differs from postgres ${VERSION}:\n${from}`);
      text = text.replace(from, () => to);
      applied++;
    }
    if (text !== before) writes.push([file, text]);
  }
}
for (const [file, text] of writes) writeFileSync(file, text);

console.log(
  applied
    ? `patch-postgres: postgres ${VERSION} patched (${applied} edits in ${writes.length} files, porsager/postgres#1208)`
    : `patch-postgres: postgres ${VERSION} already patched (porsager/postgres#1208)`,
);
