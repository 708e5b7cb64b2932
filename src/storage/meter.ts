/**
 * The pass-through every upload streams through: counts and BLAKE3-hashes
 * the bytes as they go by, and fails the stream the moment it passes the
 * limit, so an oversized body is never stored whole. BLAKE3 (native, SIMD)
 * costs about a quarter of SHA-256's CPU per byte here, and hashing is the one
 * per-byte cost an upload adds to plain streaming (docs/storage.md).
 */
import { createRequire } from 'node:module';
import { Transform, type TransformCallback } from 'node:stream';
import { fail } from '../errors.ts';

export const tooLarge = (limit: number) =>
  fail('entity_too_large', undefined, {
    hint: `The limit here is ${limit} bytes: the smaller of 50 MiB, the project's file_size_limit and the bucket's.`,
  });

type Blake = typeof import('@napi-rs/blake-hash');
// The native addon is loaded at the first upload, not at start: loading it
// probes the C library (a process report) and maps the library, ~3 MB of
// resident memory a server that stores nothing need not hold.
let blake: Blake | undefined;
const blakeHash = (): Blake => (blake ??= createRequire(import.meta.url)('@napi-rs/blake-hash') as Blake);

export class Meter extends Transform {
  size = 0;
  private readonly hash = new (blakeHash().Blake3Hasher)();

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.limit) {
      done(tooLarge(this.limit));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }

  /** `blake3:<hex>`, as storage.objects.content_hash holds it. */
  contentHash(): string {
    return `blake3:${this.hash.digest('hex')}`;
  }
}

/** The content hash of bytes gathered whole (a small body): what a Meter would give for them. */
export const contentHashOf = (bytes: Buffer) => `blake3:${blakeHash().blake3(bytes).toString('hex')}`;
