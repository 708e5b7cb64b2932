/**
 * Deploys from the app folder: `hearth functions deploy|list|delete|logs`,
 * `hearth secrets set|list|unset`, `hearth workflows deploy`, `hearth cron`,
 * and `hearth push`, which applies all of it in order (migrations, settings,
 * functions, workflows, cron) and says what changed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { HearthError } from '../errors.ts';
import { bundleFunction, stopBundler } from '../functions/bundle.ts';
import { ApiError, target, type Target } from './api.ts';
import {
  functionNames,
  readAppConfig,
  requireAppFolder,
  type AppConfig,
  type AppFolder,
  type CronJobConfig,
} from './app-folder.ts';
import { checksumOf, deployedState, forgetDeploy, recordDeploy } from './deploy-state.ts';
import { pushMigrations } from './migrations.ts';
import { CliError, print, progress, progressDone, type Output } from './output.ts';
import { accepts, acceptsEach, act, examples, integerBetween, optionsOf, outputOption } from './program.ts';
import { isFunctionName } from '../functions/validate.ts';
import { WORKFLOW_NAME } from '../workflows/validate.ts';

const relative = (file: string) => path.relative(process.cwd(), file) || file;

/** A function name argument: one the server could never take is a usage error, before any work. */
const functionName = accepts(
  isFunctionName,
  (v) => `A function name is 1-64 characters a-z, 0-9, "_" and "-", starting with a letter or digit, not "${v}".`,
);
const SOURCE = /\.(ts|tsx|mts|js|mjs|jsx|json)$/;

/** Every source file under hearth/functions/, keyed by its path there, so `../_shared/x.ts` resolves. */
function sourceFiles(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const key = prefix + entry.name;
    if (entry.isDirectory()) Object.assign(out, sourceFiles(path.join(dir, entry.name), `${key}/`));
    else if (SOURCE.test(entry.name)) out[key] = readFileSync(path.join(dir, entry.name), 'utf8');
  }
  return out;
}

/** The function bundled here (esbuild, as the server does), so errors name the local file and line. */
async function bundle(folder: AppFolder, name: string): Promise<string> {
  const dir = path.join(folder.functions, name);
  if (!existsSync(dir))
    throw new CliError(
      `There is no function folder ${relative(dir)}/: \`hearth functions deploy\` deploys the folders of ${relative(folder.functions)}/.`,
    );
  const entry = ['index.ts', 'index.js', 'index.tsx', 'index.mjs'].find((f) => existsSync(path.join(dir, f)));
  if (!entry)
    throw new CliError(
      `${relative(dir)}/ has no entry point: write ${relative(path.join(dir, 'index.ts'))} (Deno.serve(...) or export default { fetch }).`,
    );
  try {
    return await bundleFunction(sourceFiles(folder.functions), `${name}/${entry}`);
  } catch (err) {
    if (err instanceof HearthError && err.code === 'function_bundle_failed') {
      const first = err.message.split('\n')[1] ?? err.message;
      throw new CliError(`${relative(folder.functions)}/${first}`);
    }
    throw err;
  }
}

interface Change {
  what: string;
  detail: string;
}

const changedSomething = (c: Change) => !/^(unchanged|up to date)/.test(c.detail);

/**
 * Runs the steps of a deploy in order, each adding what it did to `changes`.
 * A failure stops it there, and what the steps before it changed stays
 * (docs/cli.md): its one line then says what that was, so the user knows
 * where the project stands.
 */
async function inOrder(command: string, steps: ((changes: Change[]) => Promise<void>)[]): Promise<Change[]> {
  const changes: Change[] = [];
  try {
    for (const step of steps) await step(changes);
  } catch (err) {
    const done = changes.filter(changedSomething);
    if (!(err instanceof CliError) || done.length === 0) throw err;
    const migrations = done.filter((c) => c.what.startsWith('migration ')).length;
    const items = [
      ...(migrations ? [`${migrations} migration${migrations === 1 ? '' : 's'} applied`] : []),
      ...done.filter((c) => !c.what.startsWith('migration ')).map((c) => `${c.what} ${c.detail}`),
    ];
    throw new CliError(
      `${err.message} Before it: ${items.join(', ')} (${done.length === 1 ? 'this stays' : 'these stay'}); fix it and run \`${command}\` again (unchanged items are skipped).`,
    );
  }
  return changes;
}

interface Bundle {
  name: string;
  source: string;
  verifyJwt: boolean;
  checksum: string;
}

/**
 * Every function bundled before any is deployed: one without an entry point or
 * that does not compile stops the command with nothing deployed, rather than
 * leaving the project with some functions new and some old. `outcome` ends
 * that error line (what was left untouched).
 */
async function bundleFunctions(
  folder: AppFolder,
  config: AppConfig,
  names: string[],
  outcome: string,
): Promise<Bundle[]> {
  const bundles: Bundle[] = [];
  try {
    for (const [i, name] of names.entries()) {
      progress(`Bundling function ${i + 1}/${names.length}: ${name}`);
      let source: string;
      try {
        source = await bundle(folder, name);
      } catch (err) {
        if (err instanceof CliError) throw new CliError(`${err.message.replace(/\.$/, '')}; ${outcome}.`);
        throw err;
      }
      const verifyJwt = config.functions[name]?.verify_jwt ?? true;
      bundles.push({ name, source, verifyJwt, checksum: checksumOf({ source, verifyJwt }) });
    }
  } finally {
    progressDone();
    await stopBundler();
  }
  return bundles;
}

/** Deploys each bundle whose source or options changed since the CLI last deployed it. */
async function deployBundles(t: Target, bundles: Bundle[], changes: Change[]): Promise<void> {
  if (bundles.length === 0) return;
  const state = await deployedState(t, 'function');
  const remote = new Map(
    (await t.api.call<{ name: string; version: number }[]>('GET', `${t.path}/functions`)).map((f) => [
      f.name,
      f.version,
    ]),
  );
  try {
    for (const [i, { name, source, verifyJwt, checksum }] of bundles.entries()) {
      const before = state.get(name);
      if (before && before.checksum === checksum && remote.get(name) === before.version) {
        changes.push({ what: `function ${name}`, detail: `unchanged (version ${before.version})` });
        continue;
      }
      progress(`Deploying function ${i + 1}/${bundles.length}: ${name}`);
      let deployed: { version: number };
      try {
        deployed = await t.api.call<{ version: number }>('PUT', `${t.path}/functions/${encodeURIComponent(name)}`, {
          source,
          verify_jwt: verifyJwt,
        });
      } catch (err) {
        // The server's refusal (too large, a bad name) names no function: say which.
        if (err instanceof ApiError) throw new CliError(`function ${name}: ${err.message}`);
        throw err;
      }
      await recordDeploy(t, 'function', name, { checksum, version: deployed.version });
      changes.push({ what: `function ${name}`, detail: `deployed version ${deployed.version}` });
    }
  } finally {
    progressDone();
  }
}

/** The PUT body of a workflow file, or a one-line error naming the file. */
function workflowBody(file: string): { enabled?: boolean; steps: unknown[] } {
  let body: unknown;
  const text = readFileSync(file, 'utf8');
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${relative(file)}: not valid JSON (${(err as Error).message}).`);
  }
  if (
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body) ||
    !Array.isArray((body as { steps?: unknown }).steps)
  ) {
    throw new CliError(`${relative(file)}: a workflow file holds {"enabled"?: true|false, "steps": [...]} (SPEC 4.6).`);
  }
  return body as { enabled?: boolean; steps: unknown[] };
}

async function deployWorkflows(t: Target, folder: AppFolder, changes: Change[], only?: string): Promise<void> {
  const files = existsSync(folder.workflows)
    ? readdirSync(folder.workflows)
        .filter((f) => f.endsWith('.json'))
        .sort()
    : [];
  const chosen = only ? files.filter((f) => f === `${only}.json`) : files;
  if (only && chosen.length === 0)
    throw new CliError(`There is no ${relative(path.join(folder.workflows, `${only}.json`))}.`);
  if (chosen.length === 0) return;
  const state = await deployedState(t, 'workflow');
  let remote: Map<string, number>;
  try {
    remote = new Map(
      (await t.api.call<{ name: string; version: number }[]>('GET', `${t.path}/workflows`)).map((w) => [
        w.name,
        w.version,
      ]),
    );
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) {
      throw new CliError(
        `Workflows are off for project ${t.project.ref}: add [settings.workflows] enabled = true to hearth/config.toml and run \`hearth push\`.`,
      );
    }
    throw err;
  }
  // Every file read before any is published: one that is not a workflow publishes none.
  const bodies = chosen.map((f) => workflowBody(path.join(folder.workflows, f)));
  try {
    for (const [i, f] of chosen.entries()) {
      const name = f.slice(0, -5);
      const file = path.join(folder.workflows, f);
      const body = bodies[i]!;
      const checksum = checksumOf(body);
      const before = state.get(name);
      if (before && before.checksum === checksum && remote.get(name) === before.version) {
        changes.push({ what: `workflow ${name}`, detail: `unchanged (version ${before.version})` });
        continue;
      }
      progress(`Publishing workflow ${i + 1}/${chosen.length}: ${name}`);
      let published: { version: number };
      try {
        published = await t.api.call<{ version: number }>(
          'PUT',
          `${t.path}/workflows/${encodeURIComponent(name)}`,
          body,
        );
      } catch (err) {
        if (err instanceof ApiError && err.status === 400) throw new CliError(`${relative(file)}: ${err.message}`);
        throw err;
      }
      await recordDeploy(t, 'workflow', name, { checksum, version: published.version });
      changes.push({ what: `workflow ${name}`, detail: `published version ${published.version}` });
    }
  } finally {
    progressDone();
  }
}

interface CronJob extends CronJobConfig {
  payload: unknown;
}

const sameJob = (a: CronJob, b: CronJobConfig) =>
  a.schedule === b.schedule &&
  a.target_kind === b.target_kind &&
  a.target === b.target &&
  checksumOf(a.payload ?? null) === checksumOf(b.payload ?? null);

async function applyCron(t: Target, config: AppConfig, changes: Change[]): Promise<void> {
  if (config.cron.length === 0) return;
  const jobs = new Map((await t.api.call<CronJob[]>('GET', `${t.path}/cron-jobs`)).map((j) => [j.name, j]));
  for (const job of config.cron) {
    const existing = jobs.get(job.name);
    if (existing && sameJob(existing, job)) {
      changes.push({ what: `cron job ${job.name}`, detail: 'unchanged' });
      continue;
    }
    // There is no edit (SPEC 4.5): a changed job is deleted and created again.
    if (existing) await t.api.call('DELETE', `${t.path}/cron-jobs/${encodeURIComponent(job.name)}`);
    let created: { secret?: string };
    try {
      created = await t.api.call('POST', `${t.path}/cron-jobs`, {
        name: job.name,
        schedule: job.schedule,
        target_kind: job.target_kind,
        target: job.target,
        payload: job.payload ?? null,
      });
    } catch (err) {
      if (err instanceof ApiError && err.status < 500)
        throw new CliError(`hearth/config.toml, cron job ${job.name}: ${err.message}`);
      throw err;
    }
    const secret = created.secret ? ` (webhook signing secret, shown once: ${created.secret})` : '';
    changes.push({ what: `cron job ${job.name}`, detail: `${existing ? 'recreated' : 'created'}${secret}` });
  }
}

async function applySettings(t: Target, config: AppConfig, changes: Change[]): Promise<void> {
  for (const [area, wanted] of Object.entries(config.settings)) {
    const current = await t.api
      .call<Record<string, unknown>>('GET', `${t.path}/config/${encodeURIComponent(area)}`)
      .catch((err) => {
        // The server's message lists the areas it has.
        if (err instanceof ApiError && err.status === 404)
          throw new CliError(`hearth/config.toml [settings.${area}]: ${err.message}`);
        throw err;
      });
    const diff = Object.fromEntries(
      Object.entries(wanted).filter(([k, v]) => checksumOf(current[k] ?? null) !== checksumOf(v)),
    );
    if (Object.keys(diff).length === 0) {
      changes.push({ what: `settings ${area}`, detail: 'unchanged' });
      continue;
    }
    try {
      await t.api.call('PATCH', `${t.path}/config/${encodeURIComponent(area)}`, diff);
    } catch (err) {
      if (err instanceof ApiError && err.status === 400)
        throw new CliError(`hearth/config.toml [settings.${area}]: ${err.message}`);
      throw err;
    }
    changes.push({ what: `settings ${area}`, detail: `set ${Object.keys(diff).join(', ')}` });
  }
}

function report(changes: Change[], output: Output): void {
  if (output === 'json') console.log(JSON.stringify(changes, null, 2));
  else if (changes.length === 0) console.log('Nothing to deploy.');
  else print(changes, ['what', 'detail'], 'table');
}

export function registerDeploys(program: Command): void {
  const functions = program.command('functions').description('deploy, list, delete functions and read their logs');
  examples(functions, [
    ['hearth functions deploy', 'every folder of hearth/functions/'],
    ['hearth functions logs hello --follow', "stream a function's logs"],
  ]);
  const deploy = functions
    .command('deploy')
    .argument('[name]', 'a folder of hearth/functions/', functionName)
    .description(
      'bundle hearth/functions/<name>/index.ts (with its imports) and deploy it; without a name, every function',
    )
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(
      act(async (name: string | undefined, ...args) => {
        const opts = optionsOf<{ output: Output }>(args);
        const folder = requireAppFolder(opts.workdir);
        const config = readAppConfig(folder);
        if (!name && functionNames(folder).length === 0)
          throw new CliError(
            `${relative(folder.functions)}/ has no function folders: create ${relative(folder.functions)}/<name>/index.ts.`,
          );
        const t = await target(opts);
        const bundles = name
          ? await bundleFunctions(folder, config, [name], `function ${name} was not deployed`)
          : await bundleFunctions(folder, config, functionNames(folder), 'no function was deployed');
        report(
          await inOrder('hearth functions deploy', [(changes) => deployBundles(t, bundles, changes)]),
          opts.output,
        );
      }),
    );
  examples(deploy, [
    ['hearth functions deploy hello', 'one function'],
    ['hearth functions deploy', 'all of them (unchanged ones are skipped)'],
  ]);
  const list = functions
    .command('list')
    .description("the project's functions")
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(
      act(async (...args) => {
        const opts = optionsOf<{ output: Output }>(args);
        const t = await target(opts);
        print(
          await t.api.call('GET', `${t.path}/functions`),
          ['name', 'version', 'status', 'verify_jwt', 'updated_at'],
          opts.output,
        );
      }),
    );
  examples(list, [['hearth functions list -o json', 'for scripts']]);
  const del = functions
    .command('delete')
    .argument('<name>', 'the function', functionName)
    .description('delete a function, every version and its logs')
    .action(
      act(async (name: string, ...args) => {
        const opts = optionsOf(args);
        const t = await target(opts);
        try {
          await t.api.call('DELETE', `${t.path}/functions/${encodeURIComponent(name)}`);
        } catch (err) {
          if (err instanceof ApiError && err.status === 404)
            throw new CliError(`Project ${t.project.ref} has no function "${name}" (\`hearth functions list\`).`);
          throw err;
        }
        await forgetDeploy(t, 'function', name);
        console.log(`Deleted function ${name}.`);
      }),
    );
  examples(del, [['hearth functions delete hello', 'removes it from the project']]);
  const logs = functions
    .command('logs')
    .argument('<name>', 'the function', functionName)
    .description("a function's recent log lines, oldest first")
    .option('--limit <n>', 'how many lines (1-1000)', integerBetween('--limit', 1, 1000), '100')
    .option('-f, --follow', 'keep printing new lines until Ctrl-C')
    .addOption(outputOption(['text', 'json'], 'text'))
    .action(
      act(async (name: string, ...args) => {
        const opts = optionsOf<{ limit: string; follow?: boolean; output: string }>(args);
        const t = await target(opts);
        type Entry = {
          id: string;
          timestamp: string;
          level: string;
          message: string;
          status?: number;
          duration_ms?: number;
        };
        const seen = new Set<string>();
        const line = (e: Entry) =>
          opts.output === 'json'
            ? JSON.stringify(e)
            : `${e.timestamp} ${e.level.padEnd(5)} ${e.message}${e.status ? ` (${e.status}, ${e.duration_ms} ms)` : ''}`;
        const show = (entries: Entry[]) => {
          const fresh = entries.reverse().filter((e) => !seen.has(e.id));
          for (const e of fresh) seen.add(e.id);
          // -o json: an array, as the other commands print; while following, one object per line (NDJSON) as they come.
          if (opts.output === 'json' && !opts.follow) console.log(JSON.stringify(fresh, null, 2));
          else for (const e of fresh) console.log(line(e));
        };
        const read = async (limit: string) => {
          try {
            return await t.api.call<Entry[]>(
              'GET',
              `${t.path}/functions/${encodeURIComponent(name)}/logs?limit=${encodeURIComponent(limit)}`,
            );
          } catch (err) {
            if (err instanceof ApiError && err.status === 404)
              throw new CliError(`Project ${t.project.ref} has no function "${name}" (\`hearth functions list\`).`);
            throw err;
          }
        };
        show(await read(opts.limit));
        if (!opts.follow) return 0;
        for (;;) {
          await new Promise((resolve) => setTimeout(resolve, 1000));
          show(await read('100'));
        }
      }),
    );
  examples(logs, [
    ['hearth functions logs hello', 'the last 100 lines'],
    ['hearth functions logs hello -f', 'and new ones as they come'],
  ]);

  const secrets = program.command('secrets').description("the functions' secrets (values are never printed)");
  examples(secrets, [
    ['hearth secrets set API_KEY=abc OTHER=xyz', 'set or change'],
    ['hearth secrets list', 'names and SHA-256 digests'],
  ]);
  const set = secrets
    .command('set')
    .argument(
      '<NAME=value...>',
      'each secret',
      acceptsEach(
        (p) => p.indexOf('=') > 0,
        // Never the whole text: it may be a value typed without its name.
        (p) =>
          p.startsWith('=')
            ? 'Write each secret as NAME=value: one has no NAME.'
            : `Write each secret as NAME=value, not "${p.length > 40 ? `${p.slice(0, 3)}...` : p}".`,
      ),
    )
    .description('set secrets (all or nothing)')
    .action(
      act(async (pairs: string[], ...args) => {
        const opts = optionsOf(args);
        const items = pairs.map((p) => {
          const eq = p.indexOf('=');
          return { name: p.slice(0, eq), value: p.slice(eq + 1) };
        });
        const t = await target(opts);
        await t.api.call('PUT', `${t.path}/secrets`, items);
        console.log(`Set ${items.map((i) => i.name).join(', ')} on project ${t.project.ref}.`);
      }),
    );
  examples(set, [['hearth secrets set STRIPE_KEY="$STRIPE_KEY"', 'from a shell variable']]);
  const slist = secrets
    .command('list')
    .description('secret names with the SHA-256 digest of each value')
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(
      act(async (...args) => {
        const opts = optionsOf<{ output: Output }>(args);
        const t = await target(opts);
        const rows = await t.api.call<{ name: string; value: string }[]>('GET', `${t.path}/secrets`);
        print(
          rows.map((r) => ({ name: r.name, digest: r.value })),
          ['name', 'digest'],
          opts.output,
        );
      }),
    );
  examples(slist, [['hearth secrets list', 'compare a digest with: printf %s "$VALUE" | sha256sum']]);
  const unset = secrets
    .command('unset <NAME...>')
    .description('remove secrets')
    .action(
      act(async (names: string[], ...args) => {
        const t = await target(optionsOf(args));
        const set = new Set((await t.api.call<{ name: string }[]>('GET', `${t.path}/secrets`)).map((s) => s.name));
        const present = names.filter((n) => set.has(n));
        const missing = names.filter((n) => !set.has(n));
        if (present.length) {
          await t.api.call('DELETE', `${t.path}/secrets`, present);
          console.log(`Removed ${present.join(', ')} from project ${t.project.ref}.`);
        }
        // A name that is not set is most likely misspelt: a failure, as for a function that does not exist.
        if (missing.length)
          throw new CliError(
            `Project ${t.project.ref} has no secret ${missing.join(', ')} (\`hearth secrets list\`)${present.length ? '; the others were removed' : ''}.`,
          );
      }),
    );
  examples(unset, [['hearth secrets unset OLD_KEY', 'a name that is not set fails (exit 1)']]);

  const workflows = program.command('workflows').description('publish workflows from hearth/workflows/<name>.json');
  const wdeploy = workflows
    .command('deploy')
    .argument(
      '[name]',
      'a file hearth/workflows/<name>.json',
      accepts(
        (v) => WORKFLOW_NAME.test(v),
        (v) => `A workflow name is 1-64 characters a-z, 0-9, "_" and "-", starting with a letter or digit, not "${v}".`,
      ),
    )
    .description('publish each changed hearth/workflows/<name>.json ({enabled?, steps}) as a new version')
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(
      act(async (name: string | undefined, ...args) => {
        const opts = optionsOf<{ output: Output }>(args);
        const folder = requireAppFolder(opts.workdir);
        const t = await target(opts);
        report(
          await inOrder('hearth workflows deploy', [(changes) => deployWorkflows(t, folder, changes, name)]),
          opts.output,
        );
      }),
    );
  examples(wdeploy, [
    ['hearth workflows deploy', 'every changed workflow file'],
    ['hearth workflows deploy onboarding', 'one'],
  ]);
  examples(workflows, [['hearth workflows deploy', 'every changed workflow file']]);

  const cron = program
    .command('cron')
    .description('create or recreate the cron jobs listed in hearth/config.toml ([[cron]])')
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(
      act(async (...args) => {
        const opts = optionsOf<{ output: Output }>(args);
        const folder = requireAppFolder(opts.workdir);
        const config = readAppConfig(folder);
        const t = await target(opts);
        report(await inOrder('hearth cron', [(changes) => applyCron(t, config, changes)]), opts.output);
      }),
    );
  examples(cron, [['hearth cron', 'apply the [[cron]] entries']]);

  const push = program
    .command('push')
    .description(
      'apply the app folder in order: migrations, settings, functions, workflows, cron jobs; prints what changed',
    )
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(
      act(async (...args) => {
        const opts = optionsOf<{ output: Output }>(args);
        const folder = requireAppFolder(opts.workdir);
        const config = readAppConfig(folder);
        const t = await target(opts);
        // Functions are bundled first: one that does not compile stops the push before anything changes.
        const bundles = await bundleFunctions(folder, config, functionNames(folder), 'nothing was pushed');
        const changes = await inOrder('hearth push', [
          async (changes) => {
            const migrations = await pushMigrations(t, folder);
            changes.push(
              ...(migrations.length
                ? migrations.map((m) => ({ what: `migration ${path.basename(m.file)}`, detail: 'applied' }))
                : [{ what: 'migrations', detail: 'up to date' }]),
            );
          },
          (changes) => applySettings(t, config, changes),
          (changes) => deployBundles(t, bundles, changes),
          (changes) => deployWorkflows(t, folder, changes),
          (changes) => applyCron(t, config, changes),
        ]);
        report(changes, opts.output);
      }),
    );
  examples(push, [
    ['hearth push', 'to the linked or default project'],
    ['hearth push --project-ref <ref> -o json', 'from CI'],
  ]);
}
