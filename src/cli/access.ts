/**
 * Which Hearth and which project: `hearth login`/`logout`, `hearth link`,
 * `hearth projects list|create|delete` and `hearth keys`.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { appFolder, writeLink } from './app-folder.ts';
import { Api, ApiError, connect, target, type ProjectJson } from './api.ts';
import { forgetLogin, saveLogin } from './credentials.ts';
import { CliError, print, type Output } from './output.ts';
import { accepts, act, examples, integerBetween, optionsOf, outputOption } from './program.ts';
import { lazy } from '../lazy.ts';

/** The terminal prompts (with their encoding tables): loaded only when a question is asked at a terminal, never by `hearth start`. */
const prompts = lazy(() => import('@inquirer/prompts'));

const DEFAULT_URL = 'http://127.0.0.1:54321';

/** Yes from --yes, from the user at a terminal, else a one-line refusal naming --yes. */
export async function confirmed(question: string, yes: boolean | undefined): Promise<boolean> {
  if (yes) return true;
  if (!process.stdin.isTTY) throw new CliError(`${question} Pass --yes to confirm when not at a terminal.`);
  return (await prompts()).confirm({ message: question, default: false });
}

/** Checks a token against the server (and that the server is Hearth): the account's projects. */
async function checkToken(url: string, token: string): Promise<ProjectJson[]> {
  const api = new Api(
    url,
    token,
    `${url} refused the token (expired or revoked): sign in again with \`hearth login --url ${url}\`.`,
    false,
  );
  return api.call<ProjectJson[]>('GET', '/v1/projects');
}

async function login(opts: { url: string; email?: string }): Promise<number> {
  const url = opts.url.replace(/\/+$/, '');
  let token = process.env.HEARTH_ACCESS_TOKEN || null;
  let email: string | null = null;
  let expiresAt: string | null = null;
  if (!token) {
    // At a terminal both are asked; in a script the e-mail comes from --email and the password from stdin.
    const tty = process.stdin.isTTY;
    email = opts.email ?? (tty ? await (await prompts()).input({ message: 'E-mail' }) : null);
    if (!email)
      throw new CliError('Pass --email (and the password on stdin), or set HEARTH_ACCESS_TOKEN to a management token.');
    const secret = tty
      ? await (await prompts()).password({ message: 'Password', mask: '*' })
      : readFileSync(0, 'utf8').split('\n')[0]!;
    const res = await fetch(`${url}/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: secret }),
    }).catch((err: Error) => {
      throw new CliError(
        `Cannot reach ${url} (${(err.cause as Error | undefined)?.message ?? err.message}): check the URL.`,
      );
    });
    const body = (await res.json().catch(() => null)) as {
      access_token?: string;
      expires_in?: number;
      error?: { code?: string; message?: string };
    } | null;
    if (body?.error?.code === 'unauthorized') throw new CliError(`Wrong e-mail or password for ${url}.`);
    if (!res.ok || typeof body?.access_token !== 'string') {
      // A URL with a path (a data-plane route pasted by mistake) reached some other route of a Hearth.
      const path = new URL(url).pathname.replace(/\/+$/, '');
      const hint = path ? ` Give the server's own URL, without ${path}: the management API is at its root.` : '';
      if (body?.error?.code)
        throw new CliError(`${url} refused the sign-in: ${body.error.message} (${body.error.code}).${hint}`);
      throw new CliError(
        `${url} does not answer as a Hearth server (POST /v1/login: ${res.status} ${res.headers.get('content-type') ?? ''}): check the URL.`,
      );
    }
    token = body.access_token;
    if (typeof body.expires_in === 'number') expiresAt = new Date(Date.now() + body.expires_in * 1000).toISOString();
  }
  const projects = await checkToken(url, token);
  const file = saveLogin({ api_url: url, access_token: token, email, expires_at: expiresAt });
  console.log(
    `Logged in to ${url}${email ? ` as ${email}` : ' with HEARTH_ACCESS_TOKEN'} (${projects.length} project${projects.length === 1 ? '' : 's'}). Saved in ${file}.`,
  );
  return 0;
}

function projectRow(p: ProjectJson) {
  return {
    ref: p.ref,
    name: p.name,
    default: p.is_default ? 'yes' : '',
    base_url: p.base_url,
    created_at: p.created_at,
  };
}

export function registerAccess(program: Command): void {
  const loginCmd = program
    .command('login')
    .description('sign in to a Hearth (asks e-mail and password, or saves HEARTH_ACCESS_TOKEN)')
    .option(
      '--url <api_url>',
      'the server root (API_URL of `hearth status`)',
      accepts(
        (v) => /^https?:\/\/./.test(v),
        (v) => `option --url must be an http:// or https:// URL (the API_URL of \`hearth status\`), not "${v}".`,
      ),
      DEFAULT_URL,
    )
    .option('--email <email>', 'sign in as this account (in scripts, the password is read from stdin)')
    .action(act(async (...args) => login(optionsOf<{ url: string; email?: string }>(args))));
  examples(loginCmd, [
    ['hearth login --url https://hearth.example.com', 'asks for e-mail and password'],
    ['HEARTH_ACCESS_TOKEN=... hearth login --url https://hearth.example.com', 'saves a management token'],
    ['echo "$PW" | hearth login --url https://hearth.example.com --email me@example.com', 'in a script'],
  ]);

  const logoutCmd = program
    .command('logout')
    .description('forget the saved login: commands go to the local Hearth again')
    .action(
      act(async () => {
        console.log(forgetLogin() ? 'Logged out.' : 'There was no saved login.');
      }),
    );
  examples(logoutCmd, [['hearth logout', 'remove the saved token']]);

  const linkCmd = program
    .command('link')
    .description('remember a project for this app folder (hearth/.temp/project-ref)')
    .action(
      act(async (...args) => {
        const opts = optionsOf(args);
        // A missing option the command needs: a usage error (exit 2) like a missing argument.
        if (!opts.projectRef)
          (args.at(-1) as Command).error(
            'Say which project: `hearth link --project-ref <ref>` (`hearth projects list` shows them).',
          );
        const t = await target(opts);
        const file = writeLink(appFolder(opts.workdir), t.project.ref);
        console.log(`Linked to project ${t.project.ref} (${t.project.name}) at ${t.api.url}: ${file}`);
      }),
    );
  examples(linkCmd, [
    ['hearth link --project-ref abcdefghijklmnopqrst', 'later commands in this folder use that project'],
  ]);

  const projects = program.command('projects').description('list, create and delete projects');
  examples(projects, [
    ['hearth projects list', 'your projects'],
    ['hearth projects create shop', 'a new project in your organization'],
    ['hearth projects delete <ref> --yes', 'drop a project and its database'],
  ]);
  const list = projects
    .command('list')
    .description('the projects of your organizations')
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(
      act(async (...args) => {
        const { output } = optionsOf<{ output: Output }>(args);
        const api = await connect();
        const rows = await api.call<ProjectJson[]>('GET', '/v1/projects');
        if (output === 'json') console.log(JSON.stringify(rows, null, 2));
        else print(rows.map(projectRow), ['ref', 'name', 'default', 'base_url', 'created_at'], 'table');
      }),
    );
  examples(list, [['hearth projects list -o json', 'for scripts']]);

  const create = projects
    .command('create <name>')
    .description('create a project (its database, role, keys)')
    .option('--org <organization_id>', 'the organization (default: your only one)')
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(
      act(async (name: string, ...args) => {
        const opts = optionsOf<{ org?: string; output: Output }>(args);
        const api = await connect();
        let org = opts.org;
        if (!org) {
          const orgs = await api.call<{ id: string; name: string; role: string }[]>('GET', '/v1/organizations');
          const mine = orgs.filter((o) => o.role === 'owner' || o.role === 'admin');
          if (mine.length !== 1)
            throw new CliError(
              `You administer ${mine.length} organizations: choose one with --org (${mine.map((o) => `${o.id} ${o.name}`).join(', ') || 'none'}).`,
            );
          org = mine[0]!.id;
        }
        const project = await api.call<ProjectJson>('POST', '/v1/projects', { name, organization_id: org });
        if (opts.output === 'json') console.log(JSON.stringify(project, null, 2));
        else console.log(`Created project ${project.ref} (${project.name}): ${project.base_url}`);
      }),
    );
  examples(create, [['hearth projects create shop --org <organization_id>', 'in a chosen organization']]);

  const del = projects
    .command('delete <ref>')
    .description('delete a project: drops its database and role')
    .option('-y, --yes', 'do not ask')
    .action(
      act(async (ref: string, ...args) => {
        const opts = optionsOf<{ yes?: boolean }>(args);
        const api = await connect();
        if (!(await confirmed(`Delete project ${ref} and its database at ${api.url}?`, opts.yes))) return 1;
        try {
          await api.call('DELETE', `/v1/projects/${encodeURIComponent(ref)}`, { confirm: ref });
        } catch (err) {
          if (err instanceof ApiError && err.status === 404)
            throw new CliError(`There is no project "${ref}" at ${api.url}: \`hearth projects list\` shows yours.`);
          throw err;
        }
        console.log(`Deleted project ${ref}.`);
      }),
    );
  examples(del, [['hearth projects delete abcdefghijklmnopqrst --yes', 'without a question']]);

  const keys = program
    .command('keys')
    .description("the project's API keys (-o env: with its BASE_URL and PROJECT_REF, for an app's .env)")
    .addOption(outputOption(['table', 'env', 'json'], 'table'))
    .action(
      act(async (...args) => {
        const opts = optionsOf<{ output: Output }>(args);
        const t = await target(opts);
        const keys = await t.api.call<{ name: string; type: string; api_key: string }[]>('GET', `${t.path}/api-keys`);
        if (opts.output === 'json') console.log(JSON.stringify(keys, null, 2));
        else if (opts.output === 'env') {
          const key = (type: string) => keys.find((k) => k.type === type)?.api_key ?? '';
          console.log(
            `BASE_URL=${t.project.base_url}\nPROJECT_REF=${t.project.ref}\nPUBLISHABLE_KEY=${key('publishable')}\nSECRET_KEY=${key('secret')}`,
          );
        } else print(keys, ['name', 'type', 'api_key'], 'table');
      }),
    );
  examples(keys, [
    ['hearth keys -o env >> .env', 'for an app'],
    ['hearth keys --project-ref <ref> -o json', 'another project, for scripts'],
  ]);

  const mailbox = program
    .command('mailbox')
    .description(
      'the auth mail the project kept instead of sending (no SMTP server set): sign-in codes and links, newest first',
    )
    .option('--to <email>', 'only mail to this address')
    .option('--limit <n>', 'how many of the newest (1-1000)', integerBetween('--limit', 1, 1000), '10')
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(
      act(async (...args) => {
        const opts = optionsOf<{ to?: string; limit: string; output: Output }>(args);
        const limit = Number(opts.limit);
        const t = await target(opts);
        // Filtered here: the API lists the newest (up to 1000) of every address.
        const all = await t.api.call<MailJson[]>('GET', `${t.path}/mailbox?limit=${opts.to ? 1000 : limit}`);
        const to = opts.to?.trim().toLowerCase();
        const mails = (to ? all.filter((m) => m.to.toLowerCase() === to) : all).slice(0, limit);
        if (opts.output === 'json') print(mails, [], 'json');
        // For people: what to type or open, beside who it was for.
        else
          print(
            mails.map((m) => ({ ...m, code: m.body.match(CODE)?.[0] ?? '', link: m.body.match(LINK)?.[0] ?? '' })),
            ['created_at', 'to', 'subject', 'code', 'link'],
            'table',
          );
      }),
    );
  examples(mailbox, [
    ['hearth mailbox', 'the newest ten'],
    ['hearth mailbox --to ada@example.com --limit 1 -o json', 'the last mail to one address, for scripts'],
  ]);
}

interface MailJson {
  id: number;
  to: string;
  subject: string;
  body: string;
  created_at: string;
}
/** The 6-digit code and the first link of an auth mail's text (src/auth/messages.ts). */
const CODE = /\b\d{6}\b/;
const LINK = /https?:\/\/\S+/;
