/** The configured bytes backend: the local folder (default) or S3. */
import path from 'node:path';
import type { Config } from '../../config.ts';
import { FsBackend } from './fs.ts';
import { S3Backend } from './s3.ts';
import type { BytesBackend } from './types.ts';

export type { BytesBackend, ByteRange } from './types.ts';

export function createBackend(config: Config): BytesBackend {
  return config.storageBackend === 's3' ? new S3Backend(config.s3) : new FsBackend(path.join(config.dataDir, 'storage'));
}
