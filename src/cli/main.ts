/**
 * The `hearth` command (docs/cli.md). Each area registers its commands:
 * start/status (the local server), login/link/projects/keys (which Hearth and
 * project), gen types, migrations and db, functions/secrets/workflows/cron and
 * push (the app folder). Exit status: 0 done, 1 failed, 2 a usage error.
 */
import { CommanderError, Option } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import { loadConfig, type Role } from '../config.ts';
import { HearthError } from '../errors.ts';
import { registerAccess } from './access.ts';
import { registerDeploys } from './deploys.ts';
import { registerGen } from './gen-types.ts';
import { registerMigrations } from './migrations.ts';
import { CliError, UsageError } from './output.ts';
import {
  act,
  commandPath,
  examples,
  exitStatus,
  HearthCommand,
  integerBetween,
  optionsOf,
  outputOption,
} from './program.ts';

function buildProgram(): HearthCommand {
  const program = new HearthCommand('hearth');
  program
    .description(
      "Hearth: run it (start, status), point at a project (login, link), and keep an app's backend as files (hearth/).",
    )
    .usage('<command> [options]')
    .version(pkg.version, '-v, --version', "print Hearth's version")
    .option('--project-ref <ref>', 'the project to act on (default: the linked one, else the default project)')
    .option('--workdir <dir>', 'the folder holding hearth/ (default: the current folder)')
    .exitOverride()
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    .addHelpText(
      'after',
      '\nConfiguration of the local Hearth comes from HEARTH_* variables and DATABASE_URL (docs/configuration.md); the CLI is described in docs/cli.md.',
    );
  examples(program, [
    ['hearth start', 'run Hearth locally'],
    ['hearth status -o env', 'URLs and keys of the default project'],
    ['hearth init && hearth migration new create_todos', 'start an app folder and a migration'],
    ['hearth push', 'apply migrations, functions, workflows and cron jobs'],
  ]);

  const start = program
    .command('start')
    .description('start Hearth (HTTP on HEARTH_HOST:HEARTH_PORT) until Ctrl-C')
    .addOption(new Option('--role <role>', 'which parts this process runs').choices(['all', 'api', 'worker']))
    .option('--port <n>', 'HTTP port (HEARTH_PORT)', integerBetween('--port', 0, 65535))
    .action(
      act(async (opts: { role?: Role; port?: string }) => {
        const env = { ...process.env };
        if (opts.role) env.HEARTH_ROLE = opts.role;
        if (opts.port) env.HEARTH_PORT = opts.port;
        const { runStart } = await import('./start.ts'); // the server: loaded only to run it
        return runStart(loadConfig(env));
      }),
    );
  examples(start, [
    ['hearth start', 'API and workers in one process'],
    ['hearth start --role worker', 'a worker-only process beside an API one'],
  ]);

  const status = program
    .command('status')
    .description('print the URLs and keys of the local default project, or of --project-ref (with a management token)')
    .addOption(outputOption(['text', 'env', 'json'], 'text'))
    .action(
      act(async (...args: unknown[]) => {
        const opts = optionsOf<{ output: string }>(args);
        const { runStatus, localConfig } = await import('./status.ts');
        return runStatus(localConfig(process.env), opts.output, opts.projectRef);
      }),
    );
  examples(status, [
    ['hearth status', 'as a table'],
    ['eval "$(hearth status -o env)"', 'as shell variables (API_URL, MANAGEMENT_TOKEN, ...)'],
  ]);

  registerAccess(program);
  registerGen(program);
  registerMigrations(program);
  registerDeploys(program);
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  await program.parseAsync(argv, { from: 'user' });
  return exitStatus;
}

function usageOf(err: UsageError): string {
  const cmd = (err as UsageError & { command?: HearthCommand }).command;
  const name = cmd ? `hearth ${commandPath(cmd)}`.trim() : 'hearth';
  return cmd
    ? `Usage: ${name} ${cmd.usage()}\nRun \`${name} --help\` for its options and examples.`
    : 'Usage: hearth <command> [options]';
}

// An explicit exit, so a failed start ends at once with its status (a pool or
// timer still open would otherwise keep the process alive).
main(process.argv.slice(2)).then(
  (code) => {
    // -1: `start` keeps running until a signal stops it.
    if (code !== -1) process.exit(code);
  },
  (err) => {
    // --help and help: printed, exit 0. A command group without its subcommand
    // (`hearth projects`): its help went to stderr; that is a usage error.
    if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
    if (err instanceof UsageError) {
      console.error(`hearth: ${err.message}\n${usageOf(err)}`);
      process.exit(2);
    }
    if (err instanceof CliError || err instanceof HearthError) {
      console.error(`hearth: ${err.message}`);
      process.exit(1);
    }
    if ((err as Error).name === 'ExitPromptError') process.exit(1); // Ctrl-C at a prompt
    // Anything else is still one line; the stack only when asked for (HEARTH_LOG_LEVEL=debug).
    const debug = ['debug', 'trace'].includes(process.env.HEARTH_LOG_LEVEL ?? '');
    const message =
      err instanceof Error ? `${err.message}${'code' in err && err.code ? ` (${String(err.code)})` : ''}` : String(err);
    console.error(`hearth: ${debug && err instanceof Error ? err.stack : message.split('\n')[0]}`);
    process.exit(1);
  },
);
