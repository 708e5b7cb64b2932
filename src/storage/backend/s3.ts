/**
 * Any S3-compatible store through @aws-sdk/client-s3. A body of known length
 * streams in one PutObject; a chunked body goes up as a multipart upload in
 * 8 MiB parts (at most one part buffered), aborted if the body fails.
 * Checksums are only computed when an operation requires them, so stores
 * that do not understand the SDK's streamed checksum framing keep the bytes
 * intact.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { finished, type Readable } from 'node:stream';
import type { Config } from '../../config.ts';
import { fail } from '../../errors.ts';
import { type ByteRange, type BytesBackend, objectNotFound, StorageUnavailable } from './types.ts';

const PART_SIZE = 8 * 1024 * 1024;

export class S3Backend implements BytesBackend {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(s3: Config['s3']) {
    if (!s3.bucket) throw fail('invalid_config', 'HEARTH_STORAGE_BACKEND=s3 needs HEARTH_S3_BUCKET.');
    this.bucket = s3.bucket;
    this.client = new S3Client({
      region: s3.region,
      endpoint: s3.endpoint ?? undefined,
      forcePathStyle: s3.forcePathStyle,
      credentials:
        s3.accessKeyId && s3.secretAccessKey
          ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }
          : undefined,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async write(key: string, body: Readable | Buffer, length: number | null): Promise<void> {
    if (Buffer.isBuffer(body)) {
      await this.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length }));
      return;
    }
    const failed = abortedWhenFails(body);
    try {
      if (length === null) await this.writeParts(key, body, failed.signal);
      else
        await this.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: length }), {
          abortSignal: failed.signal,
        });
    } finally {
      failed.stop();
    }
  }

  private async writeParts(key: string, body: Readable, abortSignal: AbortSignal): Promise<void> {
    let uploadId: string | undefined;
    const parts: { ETag: string | undefined; PartNumber: number }[] = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      const chunk = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      uploadId ??= (
        await this.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key }), { abortSignal })
      ).UploadId;
      const PartNumber = parts.length + 1;
      const res = await this.send(
        new UploadPartCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          PartNumber,
          Body: chunk,
          ContentLength: chunk.length,
        }),
        { abortSignal },
      );
      parts.push({ ETag: res.ETag, PartNumber });
    };
    try {
      for await (const data of body) {
        pending.push(data as Buffer);
        pendingBytes += (data as Buffer).length;
        if (pendingBytes >= PART_SIZE) await flush();
      }
      if (!uploadId) {
        const whole = Buffer.concat(pending, pendingBytes);
        await this.send(
          new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: whole, ContentLength: whole.length }),
          { abortSignal },
        );
        return;
      }
      if (pendingBytes > 0) await flush();
      await this.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
        { abortSignal },
      );
    } catch (err) {
      if (uploadId)
        await this.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId })).catch(
          () => {},
        );
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    try {
      const res = await this.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
      return res.Body as Readable;
    } catch (err) {
      if (err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') {
        throw fail('not_found', 'The object bytes are missing.');
      }
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    await this.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async removeAbandoned(key: string): Promise<void> {
    await this.abortUploads(key, (upload) => upload.Key === key);
    await this.remove(key);
  }

  async removeProject(ref: string): Promise<void> {
    const prefix = `${ref}/`;
    let ContinuationToken: string | undefined;
    do {
      const page = await this.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken }),
      );
      // One DeleteObject per key (at most 1000 a page; the client's sockets bound how many run at once):
      // DeleteObjects needs a checksum header that not every S3-compatible store takes.
      await Promise.all((page.Contents ?? []).map((o) => this.remove(o.Key!)));
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
    await this.abortUploads(prefix);
  }

  /**
   * Aborts the multipart uploads open under prefix (those `only` picks). A store that does
   * not implement ListMultipartUploads (s3rver) cannot say: nothing is aborted there, and
   * the store's own lifecycle rule has to (docs/storage.md).
   */
  private async abortUploads(prefix: string, only: (upload: { Key?: string }) => boolean = () => true): Promise<void> {
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    do {
      const page = await this.send(
        new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: prefix, KeyMarker, UploadIdMarker }),
      ).catch((err: { name?: string }) => {
        if (err.name === 'NotImplemented') return null;
        throw err;
      });
      if (!page) return;
      for (const upload of (page.Uploads ?? []).filter(only))
        await this.send(
          new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: upload.Key, UploadId: upload.UploadId }),
        ).catch((err: { name?: string }) => {
          if (err.name !== 'NoSuchUpload') throw err; // aborted or completed meanwhile
        });
      [KeyMarker, UploadIdMarker] = page.IsTruncated ? [page.NextKeyMarker, page.NextUploadIdMarker] : [];
    } while (KeyMarker);
  }

  async copy(from: string, to: string): Promise<void> {
    try {
      await this.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: to,
          CopySource: `${this.bucket}/${encodeURIComponent(from).replaceAll('%2F', '/')}`,
        }),
      );
    } catch (err) {
      if ((err as { name?: string }).name === 'NoSuchKey') throw objectNotFound();
      throw err;
    }
  }

  /** The client's send, where a store that cannot be reached, or answers 5xx, is 503 storage_unavailable. */
  private readonly send = (async (
    command: Parameters<S3Client['send']>[0],
    options?: { abortSignal?: AbortSignal },
  ) => {
    try {
      return await this.client.send(command, options);
    } catch (err) {
      throw unreachable(err) ? new StorageUnavailable() : err;
    }
  }) as S3Client['send'];

  close(): void {
    this.client.destroy();
  }
}

/**
 * A signal that aborts when the body fails: a refusal stops the stream, or the
 * client goes away. The SDK pipes the body into its request, and a source that
 * fails never ends that request, so without this the store would wait for the
 * rest of the body for ever and the upload would never settle.
 */
function abortedWhenFails(body: Readable): { signal: AbortSignal; stop(): void } {
  const controller = new AbortController();
  const stop = finished(body, (err) => {
    if (err) controller.abort(err);
  });
  return { signal: controller.signal, stop };
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

function unreachable(err: unknown): boolean {
  const e = err as { code?: string; name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return (
    (typeof e?.code === 'string' && NETWORK_CODES.has(e.code)) ||
    e?.name === 'TimeoutError' ||
    // 501 NotImplemented is the store's lasting answer to an operation it lacks, not an outage.
    ((e?.$metadata?.httpStatusCode ?? 0) >= 500 && e?.$metadata?.httpStatusCode !== 501)
  );
}
