/** The configured bytes backend: the local folder (default) or S3. */
import path from 'node:path';
import type { Config } from '../../config.ts';
import { FsBackend } from './fs.ts';
import type { BytesBackend } from './types.ts';

export type { BytesBackend, ByteRange } from './types.ts';

/** The S3 client (25 MB of modules) is loaded only when the backend is S3. */
export async function createBackend(config: Config): Promise<BytesBackend> {
  if (config.storageBackend !== 's3') return new FsBackend(path.join(config.dataDir, 'storage'));
  const { S3Backend } = await import('./s3.ts');
  return new S3Backend(config.s3);
}
