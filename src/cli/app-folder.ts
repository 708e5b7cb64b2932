/**
 * The app folder: `hearth/` in the working directory (or --workdir), holding
 * migrations/, seed.sql, functions/, workflows/, config.toml and the linked
 * project ref (.temp/project-ref, kept out of git).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { CliError } from './output.ts';

export interface AppFolder {
  /** The `hearth/` folder itself. */
  root: string;
  migrations: string;
  functions: string;
  workflows: string;
  seed: string;
  config: string;
}

export function appFolder(workdir: string = process.cwd()): AppFolder {
  const root = path.resolve(workdir, 'hearth');
  return {
    root,
    migrations: path.join(root, 'migrations'),
    functions: path.join(root, 'functions'),
    workflows: path.join(root, 'workflows'),
    seed: path.join(root, 'seed.sql'),
    config: path.join(root, 'config.toml'),
  };
}

/** The app folder, or a one-line error saying to run `hearth init`. */
export function requireAppFolder(workdir?: string): AppFolder {
  const folder = appFolder(workdir);
  if (!existsSync(folder.root))
    throw new CliError(
      `No hearth/ folder in ${path.dirname(folder.root)}: run \`hearth init\` there first (or pass --workdir).`,
    );
  return folder;
}

const linkFile = (folder: AppFolder) => path.join(folder.root, '.temp', 'project-ref');

/** hearth/.gitignore: the linked project (.temp/) is this checkout's, not the app's. */
export const GITIGNORE = '.temp/\n';

export function linkedRef(workdir?: string): string | null {
  const file = linkFile(appFolder(workdir));
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || null : null;
}

/** Writes the linked ref, and hearth/.gitignore when there is none yet (a link before `hearth init`), so .temp/ stays out of git. */
export function writeLink(folder: AppFolder, ref: string): string {
  const file = linkFile(folder);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${ref}\n`);
  const gitignore = path.join(folder.root, '.gitignore');
  if (!existsSync(gitignore)) writeFileSync(gitignore, GITIGNORE);
  return file;
}

/** Function folders: hearth/functions/<name>/, except _shared-style folders (leading _ or .). */
export function functionNames(folder: AppFolder): string[] {
  if (!existsSync(folder.functions)) return [];
  return readdirSync(folder.functions)
    .filter((n) => !n.startsWith('_') && !n.startsWith('.') && statSync(path.join(folder.functions, n)).isDirectory())
    .sort();
}

export interface CronJobConfig {
  name: string;
  schedule: string;
  target_kind: 'enqueue' | 'webhook' | 'workflow';
  target: string;
  payload?: unknown;
}

export interface AppConfig {
  /** [settings.<area>] tables: PATCHed into config/<area> by `hearth push`. */
  settings: Record<string, Record<string, unknown>>;
  /** [[cron]] entries. */
  cron: CronJobConfig[];
  /** [functions.<name>] tables: deploy options (verify_jwt). */
  functions: Record<string, { verify_jwt?: boolean }>;
}

export function readAppConfig(folder: AppFolder): AppConfig {
  if (!existsSync(folder.config)) return { settings: {}, cron: [], functions: {} };
  const where = path.relative(process.cwd(), folder.config) || folder.config;
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(readFileSync(folder.config, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    // smol-toml's error carries where it stopped (1-based line and column).
    const { line, column } = err as { line?: number; column?: number };
    const at = line ? `:${line}${column ? `:${column}` : ''}` : '';
    throw new CliError(`${where}${at}: ${(err as Error).message.split('\n')[0]}`);
  }
  for (const key of Object.keys(raw)) {
    if (!['settings', 'cron', 'functions'].includes(key))
      throw new CliError(
        `${where}: unknown section [${key}] (expected [settings.<area>], [functions.<name>] and [[cron]]).`,
      );
  }
  const settings = (raw.settings ?? {}) as Record<string, Record<string, unknown>>;
  const cron = (raw.cron ?? []) as CronJobConfig[];
  if (!Array.isArray(cron)) throw new CliError(`${where}: cron must be written as [[cron]] entries.`);
  cron.forEach((job, i) => {
    for (const field of ['name', 'schedule', 'target_kind', 'target'] as const) {
      if (typeof job[field] !== 'string')
        throw new CliError(`${where}: [[cron]] entry ${i + 1} needs ${field} (a string).`);
    }
  });
  const functions = (raw.functions ?? {}) as Record<string, { verify_jwt?: boolean }>;
  const folders = new Set(functionNames(folder));
  for (const [name, f] of Object.entries(functions)) {
    // A misspelt name would leave the function it meant with the default options, silently.
    if (!folders.has(name))
      throw new CliError(
        `${where}: [functions.${name}] names no function: there is no folder ${path.relative(process.cwd(), path.join(folder.functions, name)) || name}/ (rename the section or remove it).`,
      );
    for (const [k, v] of Object.entries(f)) {
      if (k !== 'verify_jwt' || typeof v !== 'boolean')
        throw new CliError(`${where}: [functions.${name}] takes verify_jwt = true|false, not ${k}.`);
    }
  }
  return { settings, cron, functions };
}
