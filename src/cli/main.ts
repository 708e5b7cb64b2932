/**
 * The `hearth` command:
 *   hearth start [--role all|api|worker]    start the platform (npm start)
 *   hearth status [-o text|env|json]         connection details of the default project
 * Both read the same environment (HEARTH_*, DATABASE_URL) and data folder.
 */
import { loadConfig, type Role } from '../config.ts';
import { HearthError } from '../errors.ts';
import { runStart } from './start.ts';
import { runStatus } from './status.ts';

const USAGE = `Usage:
  hearth start [--role all|api|worker] [--port N]   start Hearth (HTTP on HEARTH_HOST:HEARTH_PORT)
  hearth status [-o text|env|json]                  print the URLs and keys of the default project
Configuration comes from HEARTH_* variables and DATABASE_URL (see docs/configuration.md).`;

function option(args: string[], ...names: string[]): string | undefined {
  for (const name of names) {
    const i = args.findIndex((a) => a === name || a.startsWith(name + '='));
    if (i >= 0) return args[i]!.includes('=') ? args[i]!.split('=').slice(1).join('=') : args[i + 1];
  }
  return undefined;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const env = { ...process.env };
  const role = option(args, '--role');
  if (role) env.HEARTH_ROLE = role as Role;
  const port = option(args, '--port');
  if (port) env.HEARTH_PORT = port;
  const config = loadConfig(env);
  switch (command) {
    case 'start':
      return runStart(config);
    case 'status':
      return runStatus(config, option(args, '-o', '--output') ?? 'text');
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return 0;
    default:
      console.error(`hearth: unknown command "${command}".\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== -1) process.exitCode = code;
  },
  (err) => {
    console.error(`hearth: ${err instanceof HearthError ? err.message : (err as Error).stack ?? err}`);
    process.exitCode = 1;
  },
);
