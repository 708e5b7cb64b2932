/**
 * Commander wiring shared by every command module: usage errors that name the
 * command (exit 2), examples in `--help`, the common options, and actions whose
 * return value is the exit status.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { UsageError, type Output } from './output.ts';

/** The flag the user typed among an option's spellings ('-o, --output <format>'), for messages. */
function typedFlag(flags: string): string {
  const names = flags.split(/[ ,|]+/).filter((f) => f.startsWith('-'));
  const argv = process.argv.slice(2);
  for (let i = argv.length - 1; i >= 0; i--) {
    const found = names.find((n) => argv[i] === n || argv[i]!.startsWith(`${n}=`));
    if (found) return found;
  }
  return names.at(-1) ?? flags;
}

/** Commander's parse errors, reworded to say which command and what to type. */
function usageMessage(cmd: Command, message: string, code: string | undefined): string {
  const name = `hearth ${commandPath(cmd)}`.trim();
  const text = message.replace(/^error: /, '');
  let m: RegExpExecArray | null;
  switch (code) {
    case 'commander.unknownOption':
      if ((m = /'([^']+)'/.exec(text))) return `unknown option "${m[1]}" for \`${name}\`.`;
      break;
    case 'commander.unknownCommand':
      if ((m = /'([^']+)'/.exec(text))) return `unknown command "${m[1]}"${cmd.parent ? ` for \`${name}\`` : ''}.`;
      break;
    case 'commander.excessArguments': {
      const extra = cmd.args[cmd.registeredArguments.length];
      return `unexpected argument "${extra}" for \`${name}\`.`;
    }
    case 'commander.optionMissingArgument':
      if ((m = /option '([^']+)'/.exec(text))) return `option ${typedFlag(m[1]!)} needs a value.`;
      break;
    case 'commander.missingArgument':
      if ((m = /argument '([^']+)'/.exec(text))) return `\`${name}\` needs <${m[1]}>.`;
      break;
    case 'commander.invalidArgument':
      if ((m = /option '([^']+)' argument '([^']*)' is invalid\. Allowed choices are (.*)\.$/.exec(text))) {
        return `option ${typedFlag(m[1]!)} must be ${m[3]}, not "${m[2]}".`;
      }
      // A value refused by accepts(): its own sentence says what is accepted.
      if ((m = / is invalid(?: for argument '[^']+')?\. (.+)$/s.exec(text))) return m[1]!;
      break;
  }
  return text;
}

export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** A Command whose parse errors throw UsageError (exit 2) instead of exiting. */
export class HearthCommand extends Command {
  override createCommand(name?: string): HearthCommand {
    return new HearthCommand(name);
  }

  override error(message: string, opts?: { code?: string; exitCode?: number }): never {
    throw Object.assign(new UsageError(usageMessage(this, message, opts?.code)), { command: this });
  }
}

/** `Examples:` under a command's help: `[command line, what it does]` pairs. */
export function examples(cmd: Command, lines: [string, string][]): Command {
  const width = Math.max(...lines.map(([c]) => c.length));
  return cmd.addHelpText(
    'after',
    `\nExamples:\n${lines.map(([c, what]) => `  $ ${c.padEnd(width)}  # ${what}`).join('\n')}`,
  );
}

/**
 * The parser of an argument's or option's value: a value `ok` refuses is a
 * usage error (exit 2) whose one line is `refusal(value)`, saying what is
 * accepted, as a wrong option choice is.
 */
export function accepts(ok: (value: string) => boolean, refusal: (value: string) => string): (value: string) => string {
  return (value) => {
    if (!ok(value)) throw new InvalidArgumentError(refusal(value));
    return value;
  };
}

/** accepts() for a variadic argument (`<NAME=value...>`): each value is checked, the list kept. */
export function acceptsEach(
  ok: (value: string) => boolean,
  refusal: (value: string) => string,
): (value: string, previous: string[] | undefined) => string[] {
  const one = accepts(ok, refusal);
  return (value, previous = []) => [...previous, one(value)];
}

/** An integer option value from min to max (`--limit`, `--port`). */
export const integerBetween = (flag: string, min: number, max: number) =>
  accepts(
    (v) => /^\d+$/.test(v) && Number(v) >= min && Number(v) <= max,
    (v) => `option ${flag} must be an integer from ${min} to ${max}, not "${v}".`,
  );

/** The names of a `--schema a,b` value, without blanks or repeats. */
export const schemaNames = (value: string): string[] => [
  ...new Set(
    value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ),
];

/** `--schema <names>`: comma-separated schema names, at least one. */
export function schemaOption(description: string, fallback?: string): Option {
  const option = new Option('--schema <names>', description).argParser(
    accepts(
      (v) => schemaNames(v).length > 0,
      () => 'option --schema needs at least one schema name (comma-separated).',
    ),
  );
  return fallback === undefined ? option : option.default(fallback);
}

export function outputOption(choices: Output[] | string[], fallback: string): Option {
  return new Option('-o, --output <format>', 'output format').choices(choices).default(fallback);
}

/** The options every project command inherits from the program. */
export interface GlobalOptions {
  projectRef?: string;
  workdir?: string;
  yes?: boolean;
}

// Commander hands an action its arguments untyped; each action declares its own.
// biome-ignore lint/suspicious/noExplicitAny: see above.
// biome-ignore lint/suspicious/noConfusingVoidType: an action that returns nothing exits 0.
export type Action = (...args: any[]) => Promise<number | void>;

/** Runs an action and keeps its exit status for main(). */
export let exitStatus = 0;
export function act(fn: Action): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    exitStatus = (await fn(...args)) ?? 0;
  };
}

/** The options of the command an action belongs to, with the program's (--project-ref, --workdir). */
export function optionsOf<T>(args: unknown[]): T & GlobalOptions {
  const cmd = args.at(-1) as Command;
  return cmd.optsWithGlobals() as T & GlobalOptions;
}
