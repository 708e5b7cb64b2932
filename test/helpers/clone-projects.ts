/**
 * Many projects, cheaply: one project is created through the management API
 * (database, migrations, keys), given a table `public.cold` with one row, and
 * then copied with CREATE DATABASE ... TEMPLATE plus its control rows (a new
 * ref, owner role and secret key; the same signing key). A copy is a project
 * like any other to the data plane, and TestHearth.close() drops it with the
 * rest, since it is listed in platform.projects. Copies are owned by the
 * template's owner role, so they are dropped before it: run this on a private
 * server (private-postgres.ts) that is thrown away whole.
 */
import assert from 'node:assert/strict';
import postgres from 'postgres';
import { newApiKey } from '../../src/platform/api-keys.ts';
import { randomToken, sha256 } from '../../src/secrets.ts';
import { withDatabase } from '../../src/db/pools.ts';
import type { TestHearth } from './hearth.ts';

export interface ClonedProject {
  ref: string;
  db: string;
  /** The secret key (service_role). */
  key: string;
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz';

/** `count` projects with a `public.cold` table holding the row {id: 1}, readable with their secret key. */
export async function cloneProjects(h: TestHearth, count: number, parallel = 4): Promise<ClonedProject[]> {
  const orgs = await h.api('GET', '/v1/organizations');
  const created = await h.api('POST', '/v1/projects', { body: { name: 'Template', organization_id: orgs.body[0].id } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const control = h.hearth.p.dbs.control;
  const [template] = await control`select * from platform.projects where ref = ${created.body.ref}`;
  const server = postgres(h.hearth.databaseUrl, { max: parallel, onnotice: () => {} });
  try {
    const db = postgres(withDatabase(h.hearth.databaseUrl, template!.db_name as string), {
      max: 1,
      onnotice: () => {},
    });
    await db.unsafe(
      'create table public.cold (id int primary key); insert into public.cold values (1); grant select on public.cold to service_role',
    );
    await db.end();
    // A template must have no connections: Hearth's (migrations, background passes) included.
    await h.hearth.p.dbs.closeProject(template!.db_name as string);
    const copies: ClonedProject[] = [];
    const copyOne = async () => {
      const ref = randomToken(20, LOWER);
      const copy = { ref, db: `hearth_${ref}`, key: newApiKey('secret') };
      await server.unsafe(`create role "hearth_${ref}_owner" nologin`);
      for (let attempt = 0; ; attempt++) {
        try {
          await server.unsafe(`create database "${copy.db}" template "${template!.db_name}" strategy file_copy`);
          break;
        } catch (err) {
          // 55006: a background pass touched the template just now.
          if ((err as { code?: string }).code !== '55006' || attempt > 50) throw err;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      await control.begin(async (tx) => {
        const [row] =
          await tx`insert into platform.projects (ref, name, organization_id, db_name, owner_role, owner_password_sealed)
          values (${ref}, ${`Copy ${ref}`}, ${template!.organization_id}, ${copy.db}, ${`hearth_${ref}_owner`}, ${template!.owner_password_sealed})
          returning id`;
        await tx`insert into platform.signing_keys (project_id, kid, public_jwk, private_jwk_sealed)
          select ${row!.id}, kid, public_jwk, private_jwk_sealed from platform.signing_keys where project_id = ${template!.id}`;
        await tx`insert into platform.api_keys (project_id, name, type, key_hash, key_sealed)
          values (${row!.id}, 'default', 'secret', ${sha256(copy.key)}, ${h.hearth.p.master.encrypt(copy.key)})`;
      });
      copies.push(copy);
    };
    let started = 0;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (started < count) {
          started++;
          await copyOne();
        }
      }),
    );
    return copies;
  } finally {
    await server.end();
  }
}
