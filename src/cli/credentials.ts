/**
 * The login `hearth login` keeps: the API URL and a management token, in the
 * user's config folder ($XDG_CONFIG_HOME/hearth or ~/.config/hearth), readable
 * by the user alone (folder 0700, file 0600).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CliError } from './output.ts';

export interface Login {
  api_url: string;
  access_token: string;
  /** Who signed in (absent when the token came from HEARTH_ACCESS_TOKEN). */
  email: string | null;
  /** When the token stops working, if the server said (ISO time). */
  expires_at: string | null;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_CONFIG_HOME || path.join(homedir(), '.config'), 'hearth');
}

export function credentialsFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), 'credentials.json');
}

export function readLogin(env: NodeJS.ProcessEnv = process.env): Login | null {
  const file = credentialsFile(env);
  if (!existsSync(file)) return null;
  try {
    const login = JSON.parse(readFileSync(file, 'utf8')) as Login;
    if (typeof login.api_url !== 'string' || typeof login.access_token !== 'string') throw new Error('fields missing');
    return login;
  } catch (err) {
    throw new CliError(
      `The saved login ${file} is unreadable (${(err as Error).message}): run \`hearth login\` again.`,
    );
  }
}

export function saveLogin(login: Login, env: NodeJS.ProcessEnv = process.env): string {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = credentialsFile(env);
  // Written 0600 from the start (no moment where another user could read it), and
  // chmod'ed in case the file existed with wider rights.
  writeFileSync(file, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

export function forgetLogin(env: NodeJS.ProcessEnv = process.env): boolean {
  const file = credentialsFile(env);
  if (!existsSync(file)) return false;
  rmSync(file);
  return true;
}
