/**
 * Where object bytes live. Keys are opaque (`<project ref>/<version uuid>`):
 * every upload writes a new key, so a replace or a crash never leaves a
 * half-written object under a key a row points at.
 */
import type { Readable } from 'node:stream';
import { RETRY_AFTER_SECONDS } from '../../db/unavailable.ts';
import { fail, HearthError } from '../../errors.ts';

/** A missing object, as the API reports it (Supabase Storage's words): a backend's read or copy of a key that holds nothing too. */
export const objectNotFound = () => fail('not_found', 'Object not found');

/**
 * The bytes' store cannot serve right now (an S3 endpoint down or answering
 * 5xx): a passing condition, so 503 with Retry-After, named as the store's and
 * not the database's (the network error codes are the same).
 */
export class StorageUnavailable extends HearthError {
  readonly retryAfterSeconds = RETRY_AFTER_SECONDS;
  constructor() {
    super('storage_unavailable');
  }
}

export interface ByteRange {
  start: number;
  /** Inclusive, as in HTTP. */
  end: number;
}

export interface BytesBackend {
  /**
   * Stores the whole stream, or bytes already gathered (a small body); on failure nothing
   * usable is left under key (remove() tidies any rest).
   */
  write(key: string, body: Readable | Buffer, length: number | null): Promise<void>;
  /** The bytes (or a range of them); rejects with a 404 HearthError when the key holds nothing. */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /**
   * Optional, for a small object or range: its bytes at once, which costs less than a
   * stream where per-request overhead dominates. Same errors as read().
   */
  readBuffer?(key: string, range?: ByteRange): Promise<Buffer>;
  /** Idempotent: removing a missing key succeeds. */
  remove(key: string): Promise<void>;
  /**
   * remove(), for the key of an upload whose writer died mid-body: on S3 it also aborts
   * the multipart upload a chunked body may have left open for it (stores keep those
   * parts, unseen and billed, until aborted).
   */
  removeAbandoned(key: string): Promise<void>;
  /** Removes every key of a deleted project (`<ref>/...`), and on S3 its unfinished multipart uploads. */
  removeProject(ref: string): Promise<void>;
  copy(from: string, to: string): Promise<void>;
  close(): void;
}
