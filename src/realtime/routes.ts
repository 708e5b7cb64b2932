/**
 * /realtime/v1 over HTTP: the broadcast API supabase-js uses when a channel is
 * not joined (`send()` falls back to POST /api/broadcast with {messages}) and
 * for `httpSend()` (POST /api/broadcast/{topic}/events/{event}, JSON or
 * bytes), both answering 202; and the WebSocket endpoint (server.ts). A
 * private message is written to realtime.messages as the caller, so its
 * INSERT policies decide (403 when they refuse); public ones need only a key.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Platform } from '../context.ts';
import { fail } from '../errors.ts';
import type { ProjectRegistry, ProjectRuntime } from '../platform/registry.ts';
import { maySend } from './authorization.ts';
import type { PerSecond } from './limits.ts';
import { attachRealtime } from './server.ts';
import { limitsOf } from './settings.ts';
import { isObject } from '../rest/errors.ts';

interface OutMessage {
  topic: string;
  event: string;
  payload: unknown;
  binary: Buffer | null;
  private: boolean;
}

const MAX_MESSAGES = 100;

function checkName(what: string, v: unknown): string {
  if (typeof v !== 'string' || !v || Buffer.byteLength(v) > 255)
    throw fail('invalid_message', `${what} must be a string of 1 to 255 bytes.`);
  return v;
}

async function publish(request: FastifyRequest, messages: OutMessage[], events: PerSecond): Promise<void> {
  const { project, auth } = request.hearth;
  const limits = limitsOf(await project.settings('realtime'));
  if (!limits.enabled) throw fail('realtime_disabled');
  for (const m of messages) {
    const size = m.binary ? m.binary.length : Buffer.byteLength(JSON.stringify(m.payload ?? {}));
    if (size > limits.maxPayloadBytes)
      throw fail(
        'payload_too_large',
        `A message payload is at most ${limits.maxPayloadBytes} bytes (config/realtime max_payload_size_in_kb).`,
      );
  }
  // The project's max_events_per_second, shared with its sockets' messages, as Supabase's BatchBroadcast checks it.
  const taken = events.takeMany(project.id, messages.length, limits.maxEventsPerSecond);
  if (taken === 'full') throw fail('too_many_requests');
  if (taken === 'batch')
    throw fail(
      'too_many_requests',
      `Too many messages to broadcast, please reduce the batch size (config/realtime max_events_per_second is ${limits.maxEventsPerSecond})`,
    );
  const caller = auth!.caller;
  const refused = await maySend(
    project.sql,
    caller,
    messages.filter((m) => m.private).map((m) => m.topic),
  );
  if (refused !== null)
    throw fail(
      'forbidden',
      `You do not have permissions to write to the private topic "${refused}" (INSERT policies of realtime.messages).`,
    );
  await relayAll(project, messages);
}

/** One statement for all the messages: each a relay body, delivered on commit. */
function relayAll(project: ProjectRuntime, messages: OutMessage[]): Promise<unknown> {
  const bodies = messages.map((m) =>
    JSON.stringify({
      k: 'b',
      topic: m.topic,
      event: m.event,
      private: m.private,
      ...(m.binary ? { bin: m.binary.toString('base64'), payload: null } : { payload: m.payload ?? {} }),
    }),
  );
  return project.sql`select realtime.relay_send(b) from unnest(${bodies}::text[]) as b`;
}

export async function realtimeRoutes(
  app: FastifyInstance,
  opts: { p: Platform; registry: ProjectRegistry },
): Promise<void> {
  const server = attachRealtime(app, opts.p, opts.registry);
  app.addHook('preClose', () => server.close());
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.post('/realtime/v1/api/broadcast', async (request, reply) => {
    const body = request.body;
    if (
      !isObject(body) ||
      !Array.isArray(body.messages) ||
      !body.messages.length ||
      body.messages.length > MAX_MESSAGES
    ) {
      throw fail(
        'invalid_request',
        `The body must be {"messages": [{topic, event, payload, private}]} with 1 to ${MAX_MESSAGES} messages.`,
      );
    }
    const messages = body.messages.map((m: unknown, i: number): OutMessage => {
      if (!isObject(m)) throw fail('invalid_message', `messages[${i}] must be an object.`);
      return {
        topic: checkName(`messages[${i}].topic`, m.topic),
        event: checkName(`messages[${i}].event`, m.event),
        payload: m.payload,
        binary: null,
        private: m.private === true,
      };
    });
    await publish(request, messages, server.events);
    return reply.code(202).send();
  });

  app.post<{ Params: { topic: string; event: string }; Querystring: { private?: string } }>(
    '/realtime/v1/api/broadcast/:topic/events/:event',
    async (request, reply) => {
      const binary = Buffer.isBuffer(request.body) ? request.body : null;
      const message: OutMessage = {
        topic: checkName('topic', request.params.topic),
        event: checkName('event', request.params.event),
        payload: binary ? null : request.body,
        binary,
        private: request.query.private === 'true',
      };
      if (!binary && request.body === undefined)
        throw fail(
          'invalid_request',
          'The body is the payload to broadcast (JSON, or bytes as application/octet-stream).',
        );
      await publish(request, [message], server.events);
      return reply.code(202).send();
    },
  );
}
