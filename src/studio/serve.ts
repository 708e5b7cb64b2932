/**
 * Serves Hearth Studio at /dashboard from the build made by `npm install`
 * (dist/studio) or, when that is missing or older than the source, from one
 * made on the first request into the data folder (HEARTH_DATA_DIR/studio).
 * A browser's `GET /` (Accept: text/html) is sent to /dashboard; API clients
 * keep the JSON 404 they always had there.
 *
 * Every page goes out with a strict Content-Security-Policy: scripts and
 * styles only from this origin (no inline code, no eval), connections only
 * to this origin, never framed. Assets are sent precompressed (brotli or
 * gzip, by Accept-Encoding) and, as their names carry a content hash,
 * cached for good; index.html is revalidated on every load.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Platform } from '../context.ts';
import { INSTALL_BUILD_DIR, buildStudio, isCurrentBuild, sourceHash } from './build.ts';

/** The policy of one page; `styleNonce` admits the <style> elements CodeMirror writes its theme into. */
export const contentSecurityPolicy = (styleNonce: string) =>
  [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${styleNonce}'`,
    // CodeMirror sizes its gutters and positions its cursor with style attributes, which run no code.
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' blob: data:",
    "media-src 'self' blob:",
    "font-src 'self'",
    "connect-src 'self'",
    // Previews of PDFs and text files are blob: URLs of bytes fetched with the key in a header.
    "frame-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

/** Finds or makes the build of the current source; one build at a time per process. */
function studioBuild(p: Platform): () => Promise<string> {
  let pending: Promise<string> | undefined;
  return () => {
    pending ??= (async () => {
      const hash = sourceHash();
      if (isCurrentBuild(INSTALL_BUILD_DIR, hash)) return INSTALL_BUILD_DIR;
      const dir = path.join(p.config.dataDir, 'studio');
      if (isCurrentBuild(dir, hash)) return dir;
      const started = Date.now();
      p.log.info({ dir }, 'building Hearth Studio (no current build from npm install)');
      await buildStudio(dir, hash);
      p.log.info({ ms: Date.now() - started }, 'Hearth Studio built');
      return dir;
    })().catch((err) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}

function securityHeaders(reply: FastifyReply, styleNonce = randomBytes(16).toString('base64')): FastifyReply {
  return reply
    .header('content-security-policy', contentSecurityPolicy(styleNonce))
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('x-frame-options', 'DENY');
}

/** Sends `file` of the build, precompressed when the client accepts it. */
async function sendFile(request: FastifyRequest, reply: FastifyReply, file: string, cache: string) {
  const accepts = String(request.headers['accept-encoding'] ?? '');
  const encoding = /\bbr\b/.test(accepts) ? 'br' : /\bgzip\b/.test(accepts) ? 'gzip' : null;
  const body = await readFile(encoding ? `${file}.${encoding === 'br' ? 'br' : 'gz'}` : file);
  if (encoding) reply.header('content-encoding', encoding);
  return securityHeaders(reply)
    .header('vary', 'Accept-Encoding')
    .header('cache-control', cache)
    .type(TYPES[path.extname(file)] ?? 'application/octet-stream')
    .send(body);
}

export async function studioRoutes(app: FastifyInstance, opts: { p: Platform }) {
  const build = studioBuild(opts.p);

  app.get('/', async (request, reply) => {
    if (!/\btext\/html\b/.test(String(request.headers.accept ?? ''))) return reply.callNotFound();
    return reply.redirect('/dashboard', 302);
  });

  // index.html is small and made per response: it hands the page the nonce its CSP admits for styles.
  const index = async (_request: FastifyRequest, reply: FastifyReply) => {
    const nonce = randomBytes(16).toString('base64');
    const html = (await readFile(path.join(await build(), 'index.html'), 'utf8')).replace('{{STYLE_NONCE}}', nonce);
    return securityHeaders(reply, nonce).header('cache-control', 'no-store').type(TYPES['.html']!).send(html);
  };
  app.get('/dashboard', index);
  app.get('/dashboard/', index);

  app.get<{ Params: { file: string } }>('/dashboard/assets/:file', async (request, reply) => {
    const name = request.params.file;
    // Only names the build wrote: no separators, no dot files, a known extension.
    if (!/^[\w-]+\.(?:js|css|svg|woff2)$/.test(name)) return reply.callNotFound();
    const file = path.join(await build(), 'assets', name);
    try {
      return await sendFile(request, reply, file, 'public, max-age=31536000, immutable');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return reply.callNotFound();
      throw err;
    }
  });
}
