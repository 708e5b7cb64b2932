/**
 * A deleted project's bytes. Its database, and with it every row and staging
 * record that named them, is dropped first (deleteProject, platform/projects.ts);
 * then everything stored under its ref goes: the local folder `storage/<ref>`,
 * or every S3 key under `<ref>/` and the project's unfinished multipart uploads.
 * The project is gone whatever happens here: a failure is logged with what an
 * operator removes by hand (docs/storage.md), never turned into a failed delete.
 */
import type { Platform } from '../context.ts';
import { REF_PATTERN } from '../platform/projects.ts';
import { createBackend } from './backend/index.ts';

export async function removeDeletedProjectBytes(p: Platform, ref: string): Promise<void> {
  // A ref is what names the folder or prefix removed: anything else could name far more.
  if (!REF_PATTERN.test(ref)) throw new Error(`not a project ref: ${JSON.stringify(ref)}`);
  const where =
    p.config.storageBackend === 's3'
      ? `every key under ${ref}/ in the S3 bucket ${p.config.s3.bucket}`
      : `the folder ${p.config.dataDir}/storage/${ref}`;
  const backend = await createBackend(p.config);
  try {
    p.faults.hit('storage.project.remove', { ref });
    await backend.removeProject(ref);
  } catch (err) {
    p.log.error({ err, ref }, `storage: the deleted project's bytes were not all removed: remove ${where} by hand`);
  } finally {
    backend.close();
  }
}
