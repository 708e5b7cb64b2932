/**
 * The one error type of Hearth. Every area renders it in its own envelope
 * (SPEC 2.16): REST as `{message, code, details, hint}`, auth/storage/management
 * as `{error: {code, message}}`. Throw it from anywhere; the server's error
 * handler picks the envelope from the request's area.
 */
export class HearthError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: string | null = null,
    readonly hint: string | null = null,
  ) {
    super(message);
    this.name = 'HearthError';
  }
}

export const badRequest = (code: string, message: string) => new HearthError(400, code, message);
export const unauthorized = (message = 'Missing or invalid credentials.', code = 'unauthorized') =>
  new HearthError(401, code, message);
export const forbidden = (message = 'You are not allowed to do this.', code = 'forbidden') =>
  new HearthError(403, code, message);
export const notFound = (message = 'Not found.', code = 'not_found') => new HearthError(404, code, message);
export const conflict = (code: string, message: string) => new HearthError(409, code, message);
