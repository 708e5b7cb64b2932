/**
 * What the storage routes share within one Hearth process: the platform, the
 * bytes backend and this process's writer id (see sweeper.ts).
 */
import type { Platform } from '../context.ts';
import type { ProjectRuntime } from '../platform/registry.ts';
import type { BytesBackend } from './backend/index.ts';

export interface StorageContext {
  p: Platform;
  backend: BytesBackend;
  /** Lock id this process holds while it lives; staged uploads carry it. */
  writer: number;
  /** Removes bytes that no row references any more (after a delete or replace), in the background. */
  drain(project: ProjectRuntime): void;
}

export const bytesKey = (project: { ref: string }, version: string) => `${project.ref}/${version}`;
