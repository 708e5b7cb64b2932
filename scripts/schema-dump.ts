// `npm run schema:dump`: rewrites migrations/schema/{control,project}.pg<major>.sql
// from a fresh build of both databases (see test/helpers/schema-dump.ts).
// Commit the result with the migration that changed it.
import { writeFileSync } from 'node:fs';
import { ensureDatabaseUrl } from './scratch-db.ts';
import { dumpSchemas, snapshotFile, versions } from '../test/helpers/schema-dump.ts';

const stop = await ensureDatabaseUrl();
try {
  const url = process.env.DATABASE_URL!;
  const { server, pgDump } = await versions(url);
  if (pgDump === null || pgDump < server) {
    console.error(
      `schema:dump: needs pg_dump ${server} or newer on PATH (found ${pgDump ?? 'none'}) for the PostgreSQL ${server} server.`,
    );
    process.exitCode = 1;
  } else {
    const dumps = await dumpSchemas(url);
    for (const set of ['control', 'project'] as const) {
      writeFileSync(snapshotFile(set, server), dumps[set]);
      console.log(`wrote ${snapshotFile(set, server)}`);
    }
  }
} finally {
  await stop();
}
