/**
 * Fastify's JSON body parser (secure-json-parse), refusing as it does a body
 * with a `__proto__` key or a `constructor` holding `prototype`: code that
 * copies such an object into another could change the prototype every object
 * shares (prototype poisoning). Fastify reports that body as "not valid
 * JSON", which sends the caller looking for a syntax error; it is answered
 * here with the reason instead.
 */
import type { FastifyBodyParser, FastifyInstance } from 'fastify';
import { fail } from '../errors.ts';

const POISONING =
  'The request body has a "__proto__" key (or a "constructor" key holding "prototype"), which is refused for safety: such keys can change the prototype of every object on the server (prototype poisoning). Rename or remove the key.';

function parsesAsJson(body: string): boolean {
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

export function safeJsonParser(app: FastifyInstance): FastifyBodyParser<string> {
  const parse = app.getDefaultJsonParser('error', 'error');
  // Only a refused body is parsed a second time, to tell poisoning from bad syntax.
  return (request, body, done) =>
    parse(request, body, (err, value) =>
      done(err && parsesAsJson(body) ? fail('invalid_request', POISONING) : err, value),
    );
}
