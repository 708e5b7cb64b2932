/**
 * Which overload of /rpc/{name} a request calls, as PostgREST's findProc
 * decides, and its 404 PGRST202 / 300 PGRST203 answers word for word:
 *
 * - Only callable functions count (every argument named, or one unnamed
 *   json/jsonb/text/xml/bytea argument; schema-cache.ts).
 * - An overload matches when the argument names given (JSON keys, form
 *   fields or query parameters; an unnamed argument is the name "") are all
 *   its required arguments plus any of its optional ones.
 * - A POST body may instead go whole to a function of one unnamed argument of
 *   the type its Content-Type names (json/jsonb for JSON, text for
 *   text/plain, xml for text/xml, bytea for application/octet-stream); that
 *   is the fallback when no overload matches by name.
 * - More than one candidate is 300 PGRST203 (SPEC 7 rules only on embeds).
 */
import { fail, type HearthError } from '../errors.ts';
import type { RestFunction } from './schema-cache.ts';
import { closest } from './suggest.ts';

/** Body media types a function of one unnamed parameter of these types takes whole. */
const SINGLE_UNNAMED: Record<string, string[]> = {
  'application/json': ['json', 'jsonb'],
  'text/plain': ['text'],
  'text/xml': ['xml'],
  'application/octet-stream': ['bytea'],
};
const RAW_TYPES = ['text/plain', 'text/xml', 'application/octet-stream'];

export interface CallShape {
  /** The argument names given; '' for an unnamed one. */
  given: string[];
  /** POST (a body may go whole to the function); GET and HEAD read the query string. */
  post: boolean;
  /** The body's media type, without parameters. */
  type: string;
  /** Prefer: params=single-object: only a function of one json/jsonb argument, named or not, qualifies. */
  wholeBody: boolean;
}

/**
 * The chosen function, and whether it takes the whole body as its one
 * positional argument (a function of a single unnamed parameter).
 */
export function chooseFunction(
  all: RestFunction[],
  schema: string,
  name: string,
  call: CallShape,
  callableNames: () => Iterable<string>,
): { fn: RestFunction; whole: boolean } {
  const fns = all.filter((f) => f.callable);
  if (call.wholeBody) {
    const json = fns.filter((f) => f.args.length === 1 && (f.args[0].type === 'json' || f.args[0].type === 'jsonb'));
    if (json.length === 1) return { fn: json[0], whole: true };
    if (json.length > 1) throw ambiguous(json);
    throw notFound(schema, name, call, fns, callableNames);
  }
  const given = new Set(call.given);
  const matching = fns.filter((f) => matchesArguments(f, given, call));
  const accepted = SINGLE_UNNAMED[call.type] ?? [];
  const fallback = call.post
    ? fns.filter(
        (f) =>
          f.args.length === 1 && f.args[0].name === '' && accepted.includes(f.args[0].type) && !matching.includes(f),
      )
    : [];
  const candidates = matching.length ? matching : fallback;
  if (candidates.length > 1) throw ambiguous(candidates);
  if (!candidates.length) throw notFound(schema, name, call, fns, callableNames);
  const fn = candidates[0];
  return { fn, whole: fn.args.length === 1 && fn.args[0].name === '' };
}

function matchesArguments(f: RestFunction, given: Set<string>, call: CallShape): boolean {
  if (!f.args.length) return given.size === 0 && !(call.post && RAW_TYPES.includes(call.type));
  const required = f.args.filter((a) => !a.hasDefault).map((a) => a.name);
  const optional = new Set(f.args.filter((a) => a.hasDefault).map((a) => a.name));
  const rest = [...given].filter((g) => !optional.has(g));
  return rest.length === required.length && required.every((r) => given.has(r));
}

// PostgREST's order of candidates: fewer arguments first, then by signature.
const byArity = (a: RestFunction, b: RestFunction) =>
  a.args.length - b.args.length || (signature(a) < signature(b) ? -1 : signature(a) > signature(b) ? 1 : 0);
const signature = (f: RestFunction) =>
  `${f.schema}.${f.name}(${f.args.map((a) => `${a.name} => ${a.type}`).join(', ')})`;

function ambiguous(fns: RestFunction[]): HearthError {
  return fail(
    'PGRST203',
    `Could not choose the best candidate function between: ${[...fns].sort(byArity).map(signature).join(', ')}`,
    {
      hint: 'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
    },
  );
}

function notFound(
  schema: string,
  name: string,
  call: CallShape,
  overloads: RestFunction[],
  callableNames: () => Iterable<string>,
): HearthError {
  const keys = [...new Set(call.given)].sort();
  const func = `${schema}.${name}`;
  const raw = call.post && RAW_TYPES.includes(call.type);
  const withParams = keys.length
    ? ` with parameter${keys.length > 1 ? 's' : ''} ${keys.join(', ')}`
    : ' without parameters';
  let searched = withParams;
  if (call.post && call.type !== 'application/json' && raw)
    searched = ` with a single unnamed ${SINGLE_UNNAMED[call.type][0]} parameter`;
  else if (call.post && call.type === 'application/json') searched += ' or with a single unnamed json/jsonb parameter';
  let hint: string | null = null;
  if (!raw) {
    // A close function name, or, when the name exists, the closest argument list of its overloads.
    const list = (names: string[]) => `(${[...names].sort().join(', ')})`;
    const match = overloads.length
      ? closest(
          overloads.map((f) => list(f.args.map((a) => a.name))),
          list(keys),
          0.33,
        )
      : closest(
          [...callableNames()].filter((n) => n !== name),
          name,
          0.75,
        );
    if (match)
      hint = `Perhaps you meant to call the function ${overloads.length ? `${func}${match}` : `${schema}.${match}`}`;
  }
  return fail(
    'PGRST202',
    `Could not find the function ${func}${raw ? '' : keys.length ? `(${keys.join(', ')})` : ' without parameters'} in the schema cache`,
    {
      details: `Searched for the function ${func}${searched}, but no matches were found in the schema cache.`,
      hint,
    },
  );
}
