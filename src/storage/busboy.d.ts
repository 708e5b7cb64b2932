// The part of busboy's API the upload body parser uses (the package ships no types).
declare module 'busboy' {
  import type { IncomingHttpHeaders } from 'node:http';
  import type { Readable, Writable } from 'node:stream';
  interface BusboyConfig {
    headers: IncomingHttpHeaders;
    limits?: { files?: number; fields?: number; fieldSize?: number; parts?: number };
  }
  interface FileInfo {
    filename: string | undefined;
    encoding: string;
    mimeType: string;
  }
  interface Busboy extends Writable {
    on(event: 'file', listener: (name: string, stream: Readable, info: FileInfo) => void): this;
    on(event: 'field', listener: (name: string, value: string) => void): this;
    on(event: 'close' | 'finish', listener: () => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
  function busboy(config: BusboyConfig): Busboy;
  export default busboy;
}
