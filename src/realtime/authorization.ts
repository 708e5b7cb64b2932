/**
 * Private channels, as Supabase's Realtime Authorization: the RLS policies of
 * realtime.messages decide. SELECT lets a user receive on a topic, INSERT lets
 * them send; policies read the topic with realtime.topic() and the kind
 * ('broadcast' or 'presence') in the `extension` column. Checked in one
 * transaction that is rolled back: probe rows are written (bypassing RLS) and
 * read back as the user, then inserted as the user.
 */
import type { Sql } from '../db/pools.ts';
import type { Caller } from '../db/with-role.ts';

export interface Policies {
  broadcastRead: boolean;
  broadcastWrite: boolean;
  presenceRead: boolean;
  presenceWrite: boolean;
}

export const OPEN: Policies = { broadcastRead: true, broadcastWrite: true, presenceRead: true, presenceWrite: true };

class Rollback extends Error {
  constructor(readonly policies: Policies) {
    super('rollback');
  }
}

function settings(tx: Sql, caller: Caller, subTopic: string) {
  return tx`select set_config('role', ${caller.role}, true), set_config('request.jwt.claims', ${JSON.stringify(caller.claims)}, true),
    set_config('realtime.topic', ${subTopic}, true), set_config('statement_timeout', '10s', true)`;
}

/** What the caller may do on a private topic (service_role: everything, as it bypasses RLS). */
export async function channelPolicies(sql: Sql, caller: Caller, subTopic: string): Promise<Policies> {
  if (caller.role === 'service_role') return OPEN;
  try {
    await sql.begin(async (tx) => {
      const probes =
        await tx`insert into realtime.messages (topic, extension) values (${subTopic}, 'broadcast'), (${subTopic}, 'presence') returning id, extension`;
      await settings(tx as unknown as Sql, caller, subTopic);
      const seen = new Set(
        (await tx`select extension from realtime.messages where id in ${tx(probes.map((p) => p.id as string))}`).map(
          (r) => r.extension as string,
        ),
      );
      const write = async (extension: string) => {
        try {
          await tx.savepoint(
            (sp) => sp`insert into realtime.messages (topic, extension) values (${subTopic}, ${extension})`,
          );
          return true;
        } catch (err) {
          if ((err as { code?: string }).code === '42501') return false; // new row violates row-level security policy
          throw err;
        }
      };
      const policies = {
        broadcastRead: seen.has('broadcast'),
        presenceRead: seen.has('presence'),
        broadcastWrite: await write('broadcast'),
        presenceWrite: await write('presence'),
      };
      throw new Rollback(policies);
    });
  } catch (err) {
    if (err instanceof Rollback) return err.policies;
    throw err;
  }
  throw new Error('unreachable');
}

/** Whether the caller may send on private topics (the HTTP broadcast API): one insert each, as the caller, rolled back. */
export async function maySend(sql: Sql, caller: Caller, subTopics: string[]): Promise<string | null> {
  if (caller.role === 'service_role') return null;
  for (const topic of new Set(subTopics)) {
    const p = await channelPolicies(sql, caller, topic);
    if (!p.broadcastWrite) return topic;
  }
  return null;
}
