/**
 * What a failed start of the embedded PostgreSQL says: the line of initdb's
 * output or the server's log that gives the cause, not the clean-up after it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cause } from '../../src/db/embedded.ts';

test("initdb's cause, not its clean-up line; the server's FATAL; a taken port; a silent exit", () => {
  const initdb = `The files belonging to this database system will be owned by user "postgres".
creating directory /var/lib/hearth/abc ... ok
running bootstrap script ... 2026-11-27 11:20:01.123 UTC [4242] FATAL:  could not create semaphores: No space left on device
2026-11-27 11:20:01.123 UTC [4242] DETAIL:  Failed system call was semget(1, 20, 03600).
child process exited with exit code 1
initdb: removing contents of data directory "/var/lib/hearth/abc"
`;
  assert.match(cause(initdb), /FATAL: {2}could not create semaphores: No space left on device$/);
  assert.equal(
    cause('initdb: error: could not access directory "/x/pg": Not a directory\n'),
    'initdb: error: could not access directory "/x/pg": Not a directory',
  );
  assert.equal(
    cause('LOG:  starting PostgreSQL 18\nLOG:  could not bind IPv4 address "127.0.0.1": Address in use\n'),
    'LOG:  could not bind IPv4 address "127.0.0.1": Address in use (is the port taken? choose another with HEARTH_DB_PORT)',
  );
  assert.equal(cause(''), 'it exited without a message');
});
