/**
 * The Phoenix channels wire format as realtime-js speaks it. vsn 1.0.0: each
 * message a JSON object {join_ref, ref, topic, event, payload}. vsn 2.0.0 (its
 * default): a JSON array [join_ref, ref, topic, event, payload], plus binary
 * frames for user broadcasts — kind 3 (a client's push: join_ref, ref, topic,
 * event, metadata, payload) and kind 4 (the server's broadcast: topic, event,
 * metadata, payload), each length-prefixed by one byte, the payload JSON
 * (encoding 1) or raw bytes (encoding 0). Supabase Realtime's V2Serializer is
 * the reference.
 */
import { isObject } from '../rest/errors.ts';

export type Vsn = '1.0.0' | '2.0.0';

export interface Message {
  join_ref: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: Record<string, unknown>;
}

/** A user broadcast: the payload kept as JSON text or bytes, so a relay need not parse it. */
export interface UserBroadcast {
  topic: string;
  event: string;
  /** JSON text (json) or raw bytes (binary). */
  body: string | Buffer;
  encoding: 'json' | 'binary';
  /** Sent beside the payload (realtime-js's `meta`): `{id}` of a broadcast from the database, `replayed`. */
  meta?: Record<string, unknown>;
}

export class FrameError extends Error {}

const KIND_USER_BROADCAST_PUSH = 3;
const KIND_USER_BROADCAST = 4;

function refOf(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  throw new FrameError('join_ref and ref must be strings or null');
}

/** One text frame, in the socket's format. */
export function decodeText(vsn: Vsn, text: string): Message {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new FrameError('the frame is not valid JSON');
  }
  let join_ref: unknown, ref: unknown, topic: unknown, event: unknown, payload: unknown;
  if (vsn === '2.0.0') {
    if (!Array.isArray(parsed) || parsed.length !== 5)
      throw new FrameError('a 2.0.0 frame must be [join_ref, ref, topic, event, payload]');
    [join_ref, ref, topic, event, payload] = parsed;
  } else {
    if (!isObject(parsed)) throw new FrameError('a 1.0.0 frame must be an object {topic, event, payload, ref}');
    ({ join_ref, ref, topic, event, payload } = parsed);
  }
  if (typeof topic !== 'string' || typeof event !== 'string') throw new FrameError('topic and event must be strings');
  if (payload === undefined || payload === null) payload = {};
  if (!isObject(payload)) throw new FrameError('payload must be an object');
  return { join_ref: refOf(join_ref), ref: refOf(ref), topic, event, payload };
}

/** A binary frame (2.0.0 only): the client's user broadcast push. */
/** (The metadata, realtime-js's allowed payload keys, is read past and not relayed.) */
export function decodeBinary(frame: Buffer): { join_ref: string | null; ref: string | null; broadcast: UserBroadcast } {
  if (frame.length < 7 || frame[0] !== KIND_USER_BROADCAST_PUSH)
    throw new FrameError('a binary frame must be a user broadcast push (kind 3)');
  const lengths = [frame[1]!, frame[2]!, frame[3]!, frame[4]!, frame[5]!];
  const encoding = frame[6];
  let offset = 7;
  const parts = lengths.map((n) => {
    if (offset + n > frame.length) throw new FrameError('a binary frame is shorter than its header says');
    const s = frame.toString('utf8', offset, offset + n);
    offset += n;
    return s;
  });
  const [joinRef, ref, topic, event] = parts as [string, string, string, string, string];
  const rest = frame.subarray(offset);
  let body: string | Buffer;
  if (encoding === 1) {
    body = rest.toString('utf8');
    try {
      JSON.parse(body);
    } catch {
      throw new FrameError('the broadcast payload is not valid JSON');
    }
  } else if (encoding === 0) body = Buffer.from(rest);
  else throw new FrameError('unknown payload encoding in a binary frame');
  return {
    join_ref: joinRef || null,
    ref: ref || null,
    broadcast: { topic, event, body, encoding: encoding === 1 ? 'json' : 'binary' },
  };
}

/** A message in the socket's format (a string). */
export function encode(vsn: Vsn, m: Message): string {
  return vsn === '2.0.0' ? JSON.stringify([m.join_ref, m.ref, m.topic, m.event, m.payload]) : JSON.stringify(m);
}

export function reply(
  vsn: Vsn,
  joinRef: string | null,
  ref: string | null,
  topic: string,
  status: 'ok' | 'error',
  response: Record<string, unknown>,
): string {
  return encode(vsn, { join_ref: joinRef, ref, topic, event: 'phx_reply', payload: { status, response } });
}

/**
 * A user broadcast for one socket: binary kind 4 on 2.0.0 (the only binary
 * frame realtime-js decodes; `meta` as its metadata, JSON), a JSON
 * `broadcast` event on 1.0.0 (`meta` beside the payload; null there for a
 * binary payload, which 1.0.0 cannot carry).
 */
export function encodeBroadcast(vsn: Vsn, b: UserBroadcast): string | Buffer | null {
  if (vsn === '2.0.0') {
    const topic = Buffer.from(b.topic);
    const event = Buffer.from(b.event);
    const body = typeof b.body === 'string' ? Buffer.from(b.body) : b.body;
    const meta = Buffer.from(b.meta ? JSON.stringify(b.meta) : '');
    if (topic.length > 255 || event.length > 255 || meta.length > 255) return jsonBroadcast(vsn, b);
    const head = Buffer.from([
      KIND_USER_BROADCAST,
      topic.length,
      event.length,
      meta.length,
      b.encoding === 'json' ? 1 : 0,
    ]);
    return Buffer.concat([head, topic, event, meta, body]);
  }
  return jsonBroadcast(vsn, b);
}

function jsonBroadcast(vsn: Vsn, b: UserBroadcast): string | null {
  if (b.encoding === 'binary') return null;
  // The payload is spliced in as the JSON text it already is.
  const meta = b.meta ? `,"meta":${JSON.stringify(b.meta)}` : '';
  const payload = `{"type":"broadcast","event":${JSON.stringify(b.event)}${meta},"payload":${b.body as string}}`;
  return vsn === '2.0.0'
    ? `[null,null,${JSON.stringify(b.topic)},"broadcast",${payload}]`
    : `{"join_ref":null,"ref":null,"topic":${JSON.stringify(b.topic)},"event":"broadcast","payload":${payload}}`;
}
