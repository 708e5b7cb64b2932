// Patches postgres.js 3.4.9 (node_modules/postgres) so that a connection whose
// backend died neither crashes the process nor leaves a query unsettled:
// upstream porsager/postgres#1208 (fix PR #1209, related #1155, #1186, #1215;
// unreleased in 3.4.9) and the hangs described in docs/architecture.md
// ("Driver patch"), which also has the write-up offered upstream. Run by the
// root "postinstall" script, so `npm ci` applies it; idempotent. It checks the
// installed version and the exact upstream text of every spot it changes and
// fails loudly when either differs: then re-check upstream and drop or rework
// this patch. The version and the mark it leaves in every patched spot are in
// postgres-patch.json, which src/db/driver-patch.ts checks at start (bump the
// mark's "rev" whenever the edits change).
//
// What changes, in src/, cjs/src/ and cf/src/ (the ESM, CommonJS and workerd builds):
// connection.js
//   execute    a query given to a connection without a socket (closed, not yet
//              reconnected) is rejected with CONNECTION_CLOSED instead of being
//              written into a buffer that a setImmediate later writes to `null`.
//   nextWrite  last guard: with no socket, the pending bytes are dropped and the
//              pending queries rejected with CONNECTION_CLOSED; nothing throws.
//   closed     rejects every pending query, also after a socket error (a query
//              written between the 'error' and the 'close' event, such as the
//              caller's ROLLBACK, was never settled); forgets the dead socket's
//              pending write and the old backend's in-flight query and error;
//              tells the pool whether the connection never became ready, and why.
//   ReadyForQuery  a connection opened for a reserve() without a types fetch is
//              handed to the pool's queue (it was left in "connecting" for good).
//              The array-types fetch a new connection runs first no longer rejects
//              without a handler when the connection closes during it (the close
//              already fails the reserve() waiting for that connection).
//   CommandComplete  a simple query sent with the option `everyResult` (only
//              src/platform/database-query.ts does) resolves to one result per
//              statement, each with its command, count and columns, as pg does;
//              upstream keeps only the statements that returned rows.
// index.js
//   reserve    a waiting reserve() that a failed connect rejects leaves the queue
//              (a later connection was handed to it and leaked); once the
//              reserved connection closed, the handle rejects its queued and
//              later queries with CONNECTION_CLOSED, and release() no longer
//              hands the connection to the pool a second time.
//   begin      the same for a transaction: its queued queries, later queries and
//              its own ROLLBACK/COMMIT reject instead of running on the
//              reconnected session, outside the transaction.
//   onclose    a failed connect rejects every query waiting for a connection
//              (not one per attempt with a growing backoff in between); a
//              reconnect for the queue no longer takes its first entry as the
//              connection's own query (a reserve() taken so was never settled).
//
// queue.js
//   remove     searched the whole array behind the queue, whose shifted prefix
//              (kept as holes until the queue empties through shift) grows for as
//              long as a busy pool's queues never empty: under steady load every
//              query paid a scan over thousands of holes (8% of the process's CPU
//              on ../shared/perf rest-100). It searches the live part, resets
//              when it empties the queue, and shift drops a prefix past 1024.
//
// types.js
//   arrayParserLoop  an unquoted NULL element of an array is null, as PostgreSQL
//              means it: upstream handed the text "NULL" to the element parser, so
//              a text[] gave the string "NULL" and an int[] NaN (the SQL API and
//              Studio showed {a,NULL} as ["a","NULL"]). A quoted "NULL" stays text.
//
// And one addition, in connection.js:
//   prelude    the query option `prelude: { text, values }` sends a statement ahead
//              of the query with no Sync between them, so both run in one implicit
//              transaction: src/db/with-role.ts sends the caller's role and claims
//              (set_config(..., true)) this way, one statement's worth of driver
//              work instead of BEGIN, settings, statement and COMMIT as four
//              (docs/architecture.md, "A data-plane request").
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { version: VERSION, mark } = JSON.parse(readFileSync(path.join(here, 'postgres-patch.json'), 'utf8'));
const MARK = `// ${mark}`;

const root = path.join(here, '..', 'node_modules', 'postgres');

/** [file name, upstream text (must occur exactly once), replacement] */
const edits = [
  [
    'types.js',
    `      s.last < s.i && xs.push(parser ? parser(x.slice(s.last, s.i)) : x.slice(s.last, s.i))
      s.last = s.i + 1
      break
`,
    `      s.last < s.i && xs.push(arrayElement(x.slice(s.last, s.i), parser)) ${MARK}
      s.last = s.i + 1
      break
`,
  ],
  [
    'types.js',
    `    } else if (s.char === delimiter && s.p !== '}' && s.p !== '"') {
      xs.push(parser ? parser(x.slice(s.last, s.i)) : x.slice(s.last, s.i))
`,
    `    } else if (s.char === delimiter && s.p !== '}' && s.p !== '"') {
      xs.push(arrayElement(x.slice(s.last, s.i), parser)) ${MARK}
`,
  ],
  [
    'types.js',
    `  s.last < s.i && xs.push(parser ? parser(x.slice(s.last, s.i + 1)) : x.slice(s.last, s.i + 1))
  return xs
`,
    `  s.last < s.i && xs.push(arrayElement(x.slice(s.last, s.i + 1), parser)) ${MARK}
  return xs
`,
  ],
  [
    'types.js',
    `function arrayParserLoop(s, x, parser, typarray) {
`,
    `${MARK}: an unquoted NULL element is a null, never the text "NULL" handed to the parser
function arrayElement(text, parser) {
  return text === 'NULL' ? null : parser ? parser(text) : text
}

function arrayParserLoop(s, x, parser, typarray) {
`,
  ],
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
    `  function errored(err) {
    stream && (stream.destroy(err), stream = null)
`,
    `  function errored(err) {
    lastError = err ${MARK}: what a failed connect reports to the pool
    stream && (stream.destroy(err), stream = null)
`,
  ],
  [
    'connection.js',
    `    , query = null
    , final = null
`,
    `    , query = null
    , final = null
    , lastError = null ${MARK}
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
    closedTime = performance.now()
    hadError && options.shared.retries++
    delay = (typeof backoff === 'function' ? backoff(options.shared.retries) : backoff) * 1000
    onclose(connection, Errors.connection('CONNECTION_CLOSED', options, socket))
`,
    `    ${MARK}: also after a socket error, which settled only what was pending then: a query
    // written between the 'error' and the 'close' event (a caller's ROLLBACK) was left unsettled
    if (query || sent.length)
      error(Errors.connection('CONNECTION_CLOSED', options, socket))
    query = results = errorResponse = null // settled above; not the next backend's
    result = new Result()
    const failed = connection.queue === queues.connecting // never became ready: the pool fails its waiting queries
    const cause = failed && lastError || Errors.connection('CONNECTION_CLOSED', options, socket)
    lastError = null
    closedTime = performance.now()
    hadError && options.shared.retries++
    delay = (typeof backoff === 'function' ? backoff(options.shared.retries) : backoff) * 1000
    onclose(connection, cause, failed)
`,
  ],
  [
    'connection.js',
    `      initial && !initial.reserve && execute(initial)
      options.shared.retries = retries = 0
      initial = null
      return
`,
    `      const waiting = initial.reserve ${MARK}: nothing of its own to run: the pool's queue gets it
      initial && !initial.reserve && execute(initial)
      options.shared.retries = retries = 0
      initial = null
      waiting && onopen(connection)
      return
`,
  ],
  [
    'index.js',
    `      : await new Promise((resolve, reject) => {
        const query = { reserve: resolve, reject }
        queries.push(query)
`,
    `      : await new Promise((resolve, reject) => {
        const query = { reserve: resolve, reject: e => (queries.remove(query), reject(e)) } ${MARK}: a failed connect rejects it; no connection is handed to it later
        queries.push(query)
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
  [
    'index.js',
    `  function onclose(c, e) {
    move(c, closed)
    c.reserved = null
    c.onclose && (c.onclose(e), c.onclose = null)
    options.onclose && options.onclose(c.id)
    queries.length && connect(c, queries.shift())
  }
`,
    `  function onclose(c, e, failed) {
    move(c, closed)
    c.reserved = null
    c.onclose && (c.onclose(e), c.onclose = null)
    options.onclose && options.onclose(c.id)
    ${MARK}: a connect that failed (server down, refusing, too many clients) fails every
    // waiting query now, rather than one per attempt with a growing backoff in between; otherwise the
    // connection reconnects for the queue, which onopen serves in order, a reserve() included (it was
    // shifted off as this connect's first query and lost)
    if (failed)
      while (queries.length) queries.shift().reject(e)
    else
      queries.length && connect(c, { reserve: () => { /* noop */ }, reject: () => { /* noop */ } })
  }
`,
  ],
  [
    'connection.js',
    `    if (query.options.simple)
      return BindComplete()
`,
    `    if (query.options.simple)
      return query.options.everyResult ? nextResult() : BindComplete() ${MARK}: database/query

  // One result per statement of a simple query, each with its own columns (upstream starts a
  // new result only at a row description, so statements without rows were overwritten).
  function nextResult() {
    result.columns = query.statement.columns || []
    ;(results = results || []).push(result)
    result = new Result()
    query.statement.columns = null
  }
`,
  ],
  [
    'connection.js',
    `        initial.reserve && (initial = null)
        return fetchArrayTypes()
`,
    `        initial.reserve && (initial = null)
        return fetchArrayTypes().catch(() => {}) ${MARK}: a close during the fetch fails the waiting queries itself; this promise had no handler
`,
  ],
  [
    'connection.js',
    `    , ExecuteUnnamed = Buffer.concat([b().E().str(b.N).i32(0).end(), Sync])
`,
    `    , ExecuteUnnamed = Buffer.concat([b().E().str(b.N).i32(0).end(), Sync])
    , ExecuteWithoutSync = b().E().str(b.N).i32(0).end() ${MARK}: prelude
`,
  ],
  [
    'connection.js',
    `    , statements = {}
    , statementId`,
    `    , statements = {}
    , preludes = new Map() ${MARK}: prelude text -> its statement's name on this connection
    , statementId`,
  ],
  [
    'connection.js',
    `      statements = {}
      needsTypes = options.fetch_types`,
    `      statements = {}
      preludes.clear() ${MARK}: prelude
      needsTypes = options.fetch_types`,
  ],
  [
    'connection.js',
    `    return q.options.simple
      ? b().Q().str(q.statement.string + b.N).end()`,
    `    const main = q.options.simple ${MARK}: prelude
      ? b().Q().str(q.statement.string + b.N).end()`,
  ],
  [
    'connection.js',
    `          : unnamed(q)
  }

  function describe(q) {`,
    `          : unnamed(q)
    return q.options.prelude ? Buffer.concat([prelude(q), main]) : main
  }

  ${MARK}: prelude. The option \`prelude: { text, values }\` (text parameters
  // only) runs that statement ahead of the query with no Sync between them: one
  // implicit transaction, so its set_config(..., true) hold for the query and end
  // with it. Its statement is prepared once per connection; its messages (parse,
  // bind, rows, completion) are consumed here and never reach the query's result.
  function prelude(q) {
    if (q.options.simple)
      throw Errors.generic('PRELUDE_NEEDS_EXTENDED', 'A prelude needs the extended protocol: pass simple: false')
    const { text, values } = q.options.prelude
    let name = preludes.get(text)
    q.preludeParse = !name
    q.preludePending = true
    q.preludeParse && preludes.set(text, name = statementId + statementCount++)
    const types = values.map(() => 25)
    return Buffer.concat([
      q.preludeParse ? Parse(text, values, types, name) : Buffer.alloc(0),
      Bind(values.slice(), types, name),
      ExecuteWithoutSync
    ])
  }

  function preludeMessage(x) {
    x === 49 && (query.preludeParse = false) // ParseComplete: the statement exists on the server
    x === 67 && (query.preludePending = false) // CommandComplete: what follows is the query's
  }

  function describe(q) {`,
  ],
  [
    'connection.js',
    `  function handle(xs, x = xs[0]) {
    (`,
    `  function handle(xs, x = xs[0]) {
    if (query && query.preludePending && (x === 49 || x === 50 || x === 68 || x === 67)) ${MARK}: prelude
      return preludeMessage(x);
    (`,
  ],
  [
    'connection.js',
    `  function ReadyForQuery(x) {
    if (query) {
      if (errorResponse) {
`,
    `  function ReadyForQuery(x) {
    if (query) {
      if (errorResponse) {
        query.preludePending && query.preludeParse && preludes.delete(query.options.prelude.text) ${MARK}: its Parse failed
`,
  ],
  [
    'queue.js',
    `    remove: (x) => {
      const index = xs.indexOf(x)
      return index === -1
        ? null
        : (xs.splice(index, 1), x)
    },`,
    `    remove: (x) => { ${MARK}: search the live part only, and start afresh once empty
      const at = xs.indexOf(x, index)
      if (at === -1)
        return null
      xs.splice(at, 1)
      index === xs.length && (index = 0, xs = [])
      return x
    },`,
  ],
  [
    'queue.js',
    `      if (index === xs.length) {
        index = 0
        xs = []
      } else {
        xs[index - 1] = undefined
      }`,
    `      if (index === xs.length) {
        index = 0
        xs = []
      } else if (index > 1024) { ${MARK}: drop the shifted prefix of a queue that never empties
        xs = xs.slice(index)
        index = 0
      } else {
        xs[index - 1] = undefined
      }`,
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
  for (const name of ['connection.js', 'index.js', 'queue.js', 'types.js']) {
    const file = path.join(root, dir, name);
    let text = readFileSync(file, 'utf8');
    const before = text;
    for (const [target, from, to] of edits) {
      if (target !== name) continue;
      if (text.includes(to)) continue; // applied by an earlier run
      if (count(text, from) !== 1)
        fail(`${dir}/${name}: the upstream text to patch differs from postgres ${VERSION}:\n${from}`);
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
