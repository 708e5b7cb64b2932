// The part of @20minutes/s3rver the S3 backend test uses (the package ships no types).
declare module '@20minutes/s3rver' {
  interface S3rverOptions {
    port?: number;
    address?: string;
    silent?: boolean;
    allowMismatchedSignatures?: boolean;
    directory?: string;
    configureBuckets?: { name: string }[];
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<unknown>;
    close(): Promise<void>;
  }
}
