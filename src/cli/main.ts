/**
 * The `hearth` command:
 *   hearth start [--role all|api|worker] [--port N]   start the platform (npm start)
 *   hearth status [-o text|env|json]                   connection details of the default project
 * Both read the same environment (HEARTH_*, DATABASE_URL) and data folder.
 * Exit status: 0 done, 1 failed, 2 a usage error (unknown command or option).
 */
import { loadConfig, type Role } from '../config.ts';
import { HearthError } from '../errors.ts';
import { runStart } from './start.ts';
import { runStatus } from './status.ts';

const USAGE = `Usage:
  hearth start [--role all|api|worker] [--port N]   start Hearth (HTTP on HEARTH_HOST:HEARTH_PORT)
  hearth status [-o text|env|json]                  print the URLs and keys of the default project
  hearth help                                       print this text (also -h, --help after any command)
Configuration comes from HEARTH_* variables and DATABASE_URL (see docs/configuration.md).`;

/** The options each command takes, each with a value; an alias maps to its canonical name. */
const OPTIONS: Record<string, Record<string, string>> = {
  start: { '--role': '--role', '--port': '--port' },
  status: { '-o': '-o', '--output': '-o' },
};

/** Options whose value is one of a fixed list (another value is a usage error). */
const CHOICES: Record<string, string[]> = {
  '--role': ['all', 'api', 'worker'],
  '-o': ['text', 'env', 'json'],
};

class UsageError extends Error {}

/** `--name value` or `--name=value`; anything else (an unknown option, a stray word, a missing value) is a usage error. */
function parseOptions(command: string, args: string[]): Record<string, string> {
  const known = OPTIONS[command]!;
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const canonical = Object.hasOwn(known, name) ? known[name] : undefined;
    if (!canonical) {
      throw new UsageError(arg.startsWith('-') ? `unknown option "${arg}" for \`hearth ${command}\`.` : `unexpected argument "${arg}" for \`hearth ${command}\`.`);
    }
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === '' || (eq < 0 && value.startsWith('-'))) throw new UsageError(`option ${name} needs a value.`);
    const choices = CHOICES[canonical];
    if (choices && !choices.includes(value)) throw new UsageError(`option ${name} must be ${choices.join(', ')}, not "${value}".`);
    out[canonical] = value;
  }
  return out;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined || command === 'help' || args.some((a) => a === '-h' || a === '--help') || command === '-h' || command === '--help') {
    console.log(USAGE);
    return 0;
  }
  if (!Object.hasOwn(OPTIONS, command)) throw new UsageError(`unknown command "${command}".`);
  const options = parseOptions(command, args);
  const env = { ...process.env };
  if (options['--role']) env.HEARTH_ROLE = options['--role'] as Role;
  if (options['--port']) env.HEARTH_PORT = options['--port'];
  const config = loadConfig(env);
  return command === 'start' ? runStart(config) : runStatus(config, options['-o'] ?? 'text');
}

// An explicit exit, so a failed start ends at once with its status (a pool or
// timer still open would otherwise keep the process alive).
main(process.argv.slice(2)).then(
  (code) => {
    // -1: `start` keeps running until a signal stops it.
    if (code !== -1) process.exit(code);
  },
  (err) => {
    if (err instanceof UsageError) {
      console.error(`hearth: ${err.message}\n${USAGE}`);
      process.exit(2);
    }
    console.error(`hearth: ${err instanceof HearthError ? err.message : (err as Error).stack ?? err}`);
    process.exit(1);
  },
);
