/**
 * Several `hearth start` processes of one deployment (DATABASE_URL, one
 * control database, one HEARTH_MASTER_KEY), as docs/configuration.md runs them
 * to scale out: a data folder nobody made yet is made, and the server.json
 * that `hearth status` reads names a live server whichever process stops.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { randomToken } from '../../src/secrets.ts';
import { dropDeployment, startSpawned, stopSpawned } from '../helpers/spawned-hearth.ts';

const root = mkdtempSync(path.join(tmpdir(), 'hearth-shared-'));
const controlDb = `hearth_t_${randomToken(10, 'abcdefghijklmnopqrstuvwxyz')}`;
const shared = {
  HEARTH_CONTROL_DB: controlDb,
  HEARTH_MASTER_KEY: randomBytes(32).toString('base64'),
  // Not made by anyone yet: the key comes from the environment, so no master.key is written there either.
  HEARTH_DATA_DIR: path.join(root, 'fresh', 'data'),
};
const record = () => JSON.parse(readFileSync(path.join(shared.HEARTH_DATA_DIR, 'server.json'), 'utf8'));

after(() => dropDeployment(controlDb, root));

test('a second process on the same data folder: the folder is made; stopping either leaves server.json naming one that runs', {
  timeout: 180_000,
}, async () => {
  const a = await startSpawned(shared);
  assert.equal(record().pid, a.child.pid, 'the folder was made and the server recorded there');
  const b = await startSpawned({ ...shared, HEARTH_ROLE: 'api' });
  assert.equal(record().pid, b.child.pid, 'the last to start is named');

  await stopSpawned(a.child);
  assert.equal(record().pid, b.child.pid, "a process that stops removes only its own record, not another's");
  assert.equal((await fetch(`${b.url}/health`)).status, 200);

  await stopSpawned(b.child);
  assert.equal(existsSync(path.join(shared.HEARTH_DATA_DIR, 'server.json')), false);
});
