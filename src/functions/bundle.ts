/**
 * Turns a deploy's file map (TypeScript or JavaScript, one file or several)
 * into one ES module. The bundler only ever sees the deployed files: every
 * import is resolved inside the map, so a deploy cannot pull a host file into
 * its bundle (`import x from "/etc/passwd"` is a 400 here, not a leak). The
 * two remote modules nearly every Supabase function imports are the
 * exception, served from Hearth's own copies (nothing is fetched): Deno
 * std's `serve` and supabase-js 2.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message, Metafile, Plugin } from 'esbuild';
import { lazy } from '../lazy.ts';

const esbuild = lazy(() => import('esbuild'));
let bundlerStarted = false;
import { fail } from '../errors.ts';

const LOADERS = { ts: 'ts', mts: 'ts', tsx: 'tsx', js: 'js', mjs: 'js', jsx: 'jsx', json: 'json' } as const;
const SUFFIXES = ['', '.ts', '.tsx', '.js', '.mjs', '.jsx', '.json', '/index.ts', '/index.js'];

function loaderOf(file: string) {
  const ext = file.slice(file.lastIndexOf('.') + 1) as keyof typeof LOADERS;
  return Object.hasOwn(LOADERS, ext) ? LOADERS[ext]! : 'ts';
}

/** `a/b.ts` + `../c` → `c`, or null when the path leaves the bundle. */
function join(from: string, spec: string): string | null {
  const parts = from.split('/').slice(0, -1);
  for (const seg of spec.split('/')) {
    if (seg === '..') {
      if (parts.pop() === undefined) return null;
    } else if (seg !== '.' && seg !== '') parts.push(seg);
  }
  return parts.join('/');
}

function findFile(files: Record<string, string>, base: string): string | undefined {
  // TypeScript projects import "./lib.js" meaning lib.ts.
  const bases = /\.m?js$/.test(base) ? [base, base.replace(/\.m?js$/, '')] : [base];
  for (const b of bases) for (const s of SUFFIXES) if (b + s in files) return b + s;
  return undefined;
}

/**
 * Node's modules the functions runtime lacks (workerd with nodejs_compat at the
 * compatibility date of workerd-config.ts): a static import of one stops the
 * function from starting ("No such module"), so the deploy is refused instead.
 * Dynamic imports and require() are left alone, since code may catch their
 * failure. runtime.test.ts checks this list against workerd itself.
 */
export const UNAVAILABLE_NODE_MODULES: ReadonlySet<string> = new Set(
  [
    '_stream_wrap',
    'child_process',
    'cluster',
    'console',
    'dgram',
    'domain',
    'fs',
    'inspector',
    'inspector/promises',
    'os',
    'perf_hooks',
    'punycode',
    'readline',
    'readline/promises',
    'repl',
    'sea',
    'sqlite',
    'test/reporters',
    'trace_events',
    'tty',
    'v8',
    'vm',
    'wasi',
    'worker_threads',
  ].map((m) => `node:${m}`),
);

/** `https://deno.land/std@0.168.0/http/server.ts`, the import of Supabase's first function template. */
const STD_HTTP_SERVER = /^https:\/\/deno\.land\/std(@[^/]+)?\/http\/server\.ts$/;
// std's serve(handler, options) on Deno.serve. Its promise settles when the
// server closes; this one settles at once, so a top-level `await serve(...)`
// cannot hold the module's evaluation (workerd serves only once it is done).
const STD_HTTP_SERVER_MODULE = `export function serve(handler, options = {}) {
  Deno.serve(options, handler);
  return Promise.resolve();
}`;
/**
 * supabase-js as npm:, jsr:, esm.sh or jsDelivr name it; group 1 is the
 * version asked for, group 2 one of the package's public subpaths (`/cors`,
 * Supabase's CORS headers for functions, and `/tracing`), nothing else of it.
 */
const SUPABASE_JS =
  /^(?:npm:|jsr:|https:\/\/esm\.sh\/(?:v\d+\/)?|https:\/\/cdn\.jsdelivr\.net\/npm\/)@supabase\/supabase-js(?:@([^/?#]+))?(?:\/(cors|tracing))?(?:\/\+esm)?(?:\?[^#]*)?$/;
const supabaseJsEntry = (subpath = '') =>
  fileURLToPath(import.meta.resolve(`@supabase/supabase-js${subpath && `/${subpath}`}`));
const supabaseJsVersion = lazy(
  async () =>
    JSON.parse(readFileSync(path.join(path.dirname(supabaseJsEntry()), '../package.json'), 'utf8')).version as string,
);

async function providedModule(spec: string) {
  if (STD_HTTP_SERVER.test(spec)) return { path: spec, namespace: 'std-http-server' };
  const supabaseJs = SUPABASE_JS.exec(spec);
  if (!supabaseJs) return null;
  const asked = supabaseJs[1] === undefined ? '2' : decodeURIComponent(supabaseJs[1]);
  if (!/^[\^~]?2(\.|$)/.test(asked)) {
    return {
      errors: [
        {
          text: `Cannot resolve import "${spec}": Hearth provides @supabase/supabase-js ${await supabaseJsVersion()} for imports of version 2 (npm:, jsr:, esm.sh or jsDelivr); bundle other versions into the deploy.`,
        },
      ],
    };
  }
  return { path: supabaseJsEntry(supabaseJs[2]), namespace: 'file' };
}

/** Deno's import map of a deploy: the folder of the file that holds it, and its `imports`. */
interface ImportMap {
  dir: string;
  imports: Record<string, string>;
}

/**
 * The `imports` of a deno.json or import_map.json beside the entrypoint (a
 * Supabase function's own config), else at the deploy's root (the shared
 * import_map.json of older Supabase projects), as Deno would use it.
 */
function importMapOf(files: Record<string, string>, entrypoint: string): ImportMap | null {
  const folder = entrypoint.slice(0, entrypoint.lastIndexOf('/') + 1);
  for (const dir of folder ? [folder, ''] : ['']) {
    for (const name of ['deno.json', 'import_map.json']) {
      const text = files[dir + name];
      if (text === undefined) continue;
      let imports: unknown;
      try {
        imports = (JSON.parse(text) as { imports?: unknown } | null)?.imports;
      } catch (e) {
        throw fail('function_bundle_failed', `${dir}${name} is not valid JSON: ${(e as Error).message}`);
      }
      if (imports === undefined) continue;
      if (typeof imports !== 'object' || imports === null || Object.values(imports).some((v) => typeof v !== 'string'))
        throw fail('function_bundle_failed', `${dir}${name}: "imports" must map specifiers to strings.`);
      return { dir, imports: imports as Record<string, string> };
    }
  }
  return null;
}

/** What the map makes of `spec`: its own entry, else the longest entry ending in "/" that starts it; null when none. */
function mapped(map: ImportMap | null, spec: string): string | null {
  if (!map) return null;
  if (Object.hasOwn(map.imports, spec)) return map.imports[spec]!;
  const prefix = Object.keys(map.imports)
    .filter((k) => k.endsWith('/') && spec.startsWith(k))
    .sort((a, b) => b.length - a.length)[0];
  return prefix === undefined ? null : map.imports[prefix] + spec.slice(prefix.length);
}

function deployedFiles(files: Record<string, string>, map: ImportMap | null): Plugin {
  return {
    name: 'hearth-deployed-files',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point') return { path: args.path, namespace: 'deployed' };
        // Imports inside a provided package (only providedModule puts a file there) resolve as in node_modules.
        if (args.namespace === 'file') return undefined;
        const target = mapped(map, args.path);
        const spec = target ?? args.path;
        // A relative target of the import map is a path from the map's folder.
        const importer = target === null ? args.importer : `${map!.dir}deno.json`;
        // Type-only modules such as jsr:@supabase/functions-js/edge-runtime.d.ts have no runtime content.
        if (spec.endsWith('.d.ts')) return { path: spec, namespace: 'empty' };
        if (args.kind === 'import-statement' && UNAVAILABLE_NODE_MODULES.has(spec)) {
          return {
            errors: [
              {
                text: `Cannot import "${spec}"${target === null ? '' : ` (mapped from "${args.path}")`}: the functions runtime (workerd) does not provide this module, so the function could not start. Other node:* modules (node:buffer, node:crypto, node:stream, ...) are provided.`,
              },
            ],
          };
        }
        if (/^(node|cloudflare):/.test(spec)) return { path: spec, external: true };
        const provided = await providedModule(spec);
        if (provided) return provided;
        if (spec.startsWith('./') || spec.startsWith('../')) {
          const base = join(importer, spec);
          const found = base === null ? undefined : findFile(files, base);
          if (found) return { path: found, namespace: 'deployed' };
        }
        return {
          errors: [
            {
              text: `Cannot resolve import "${args.path}"${target === null ? '' : ` (mapped to "${target}")`}: a function may import its own deployed files (relative paths), node:* and cloudflare:* modules, Deno std's http/server.ts and @supabase/supabase-js 2. Other remote (npm:, jsr:, https:) and absolute imports are not fetched; bundle them into the deploy.`,
            },
          ],
        };
      });
      b.onLoad({ filter: /.*/, namespace: 'deployed' }, (args) => ({
        contents: files[args.path],
        loader: loaderOf(args.path),
      }));
      b.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: '', loader: 'js' }));
      b.onLoad({ filter: /.*/, namespace: 'std-http-server' }, () => ({
        contents: STD_HTTP_SERVER_MODULE,
        loader: 'js',
      }));
    },
  };
}

function describe(errors: Message[]): string {
  return errors
    .slice(0, 5)
    .map((e) =>
      e.location
        ? `${e.location.file.replace(/^deployed:/, '')}:${e.location.line}:${e.location.column}: ${e.text}`
        : e.text,
    )
    .join('\n');
}

/**
 * Whether the bundle can have a handler: it exports a default, or mentions
 * `serve` (Deno.serve, std's serve). One that does neither (an empty module,
 * comments only, exports of other names) can never answer a call; anything
 * else is left to the runtime, which reports a handler that never came.
 */
function hasHandler(code: string, metafile: Metafile): boolean {
  return Object.values(metafile.outputs).some((o) => o.exports.includes('default')) || /\bserve\b/.test(code);
}

export async function bundleFunction(files: Record<string, string>, entrypoint: string): Promise<string> {
  const map = importMapOf(files, entrypoint);
  try {
    bundlerStarted = true;
    const out = await (await esbuild()).build({
      entryPoints: [entrypoint],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      // For the provided packages: their ES module builds, as a browser or worker takes them.
      mainFields: ['module', 'main'],
      conditions: ['worker', 'browser'],
      target: 'es2022',
      tsconfigRaw: '{}',
      logLevel: 'silent',
      plugins: [deployedFiles(files, map)],
      metafile: true,
    });
    const code = out.outputFiles[0].text;
    if (!hasHandler(code, out.metafile)) {
      throw fail(
        'invalid_function_source',
        `${entrypoint} has no handler: it neither calls Deno.serve(handler) nor has export default { fetch(req, env) }, so every call would fail with function_no_handler.`,
      );
    }
    return code;
  } catch (e) {
    const errors = (e as { errors?: Message[] }).errors;
    if (!errors) throw e;
    throw fail('function_bundle_failed', `The function could not be bundled:\n${describe(errors)}`);
  }
}

/** esbuild keeps a helper process between builds; it restarts on the next build. */
export async function stopBundler(): Promise<void> {
  if (bundlerStarted) await (await esbuild()).stop();
}
