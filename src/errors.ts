/**
 * The one error type of Hearth. Every area renders it in its own envelope
 * (SPEC 2.16): REST as `{message, code, details, hint}`, auth/storage/management
 * as `{error: {code, message}}`. Throw it from anywhere; the server's error
 * handler picks the envelope from the request's area. Its code, status and
 * default message come from the catalogue (src/error-catalogue.ts).
 */
import { CATALOGUE, type ErrorCode, type StatusOf } from './error-catalogue.ts';

export type { ErrorCode, StatusOf } from './error-catalogue.ts';

export interface FailOptions<C extends ErrorCode> {
  /** One of the statuses the catalogue lists for the code; its first status when left out. */
  status?: StatusOf<C>;
  details?: string | null;
  hint?: string | null;
}

export class HearthError<C extends ErrorCode = ErrorCode> extends Error {
  readonly status: number;
  readonly details: string | null;
  readonly hint: string | null;

  /** Call sites use fail(); subclasses (rate limits, SQL errors...) call this with their code. */
  constructor(
    readonly code: C,
    message?: string,
    options: FailOptions<C> = {},
  ) {
    const entry = CATALOGUE[code];
    super(message ?? entry.message);
    this.name = 'HearthError';
    this.status = options.status ?? entry.status;
    this.details = options.details ?? null;
    this.hint = options.hint ?? null;
  }
}

/** An error of the catalogue: `throw fail('invalid_credentials')`, or with a message that says more. */
export const fail = <C extends ErrorCode>(code: C, message?: string, options?: FailOptions<C>): HearthError<C> =>
  new HearthError(code, message, options);
