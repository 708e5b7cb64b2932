import type { FastifyInstance } from 'fastify';

/**
 * GET /auth/v1/.well-known/jwks.json: the project's public signing keys (SPEC
 * 2.4), a public call (SPEC 5). Credentials are not even looked at: a verifier
 * that forwards a stale or wrong apikey must still get the keys.
 */
export async function jwksRoutes(app: FastifyInstance) {
  app.get('/auth/v1/.well-known/jwks.json', { config: { ignoreCredentials: true } }, (request, reply) => {
    // Not async: the document is in memory, so the reply needs no promise.
    reply
      .header('cache-control', 'public, max-age=600')
      .type('application/json; charset=utf-8')
      .send(request.hearth.project.jwksJson);
  });
}
