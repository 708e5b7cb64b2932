/**
 * A real Hearth worker process (role worker) for durability tests: started by
 * a test with `node --import tsx`, configured by the environment the test
 * passes (same control database and data folder as the test's server), and
 * killed by it. Prints "ready" once its background workers run.
 */
import { loadConfig } from '../../src/config.ts';
import { startHearth } from '../../src/server/runtime.ts';

const hearth = await startHearth(loadConfig({ ...process.env, HEARTH_ROLE: 'worker' }));
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void hearth.stop().then(() => process.exit(0));
});
