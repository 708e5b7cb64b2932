/**
 * Builds Hearth Studio (the browser app in studio/) with esbuild: ES modules
 * split per page (the SQL editor's CodeMirror loads only when opened), hashed
 * file names, an index.html that loads them, and a gzip and a brotli copy of
 * every asset so the server sends compressed files without compressing per
 * request. Run by `npm install` (postinstall, into dist/studio) or by the
 * server on the first /dashboard request when no build of the current source
 * exists (into the data folder). Nothing built is committed.
 *
 * A build is "current" when its build.json carries the hash of the studio
 * sources and of the installed dependency versions (package-lock.json).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SOURCE_DIR = path.join(ROOT, 'studio');
export const INSTALL_BUILD_DIR = path.join(ROOT, 'dist', 'studio');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(full) : [full];
  });
}

/** Hash of what the build depends on: every source file and the lock file. */
export function sourceHash(): string {
  const h = createHash('sha256');
  for (const file of filesUnder(SOURCE_DIR).sort())
    h.update(path.relative(SOURCE_DIR, file)).update('\0').update(readFileSync(file)).update('\0');
  const lock = path.join(ROOT, 'package-lock.json');
  if (existsSync(lock)) h.update(readFileSync(lock));
  // This file too (by its place in the tree: the server may run it from a bundle): the page's
  // HTML and the build options are written here.
  h.update(readFileSync(path.join(ROOT, 'src', 'studio', 'build.ts')));
  return h.digest('hex').slice(0, 16);
}

export function isCurrentBuild(dir: string, hash: string): boolean {
  try {
    return (JSON.parse(readFileSync(path.join(dir, 'build.json'), 'utf8')) as { hash: string }).hash === hash;
  } catch {
    return false;
  }
}

/** A flame, inline (the CSP admits data: images), so a browser never asks for /favicon.ico and logs a 404. */
const FAVICON = `data:image/svg+xml,${encodeURIComponent(
  "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><path fill='#e8590c' d='M8 1c1 3 4 4.5 4 8.5a4 4 0 0 1-8 0c0-2 1-3.2 2-4 0 1.8.8 3 2 3.2C7.2 6.5 7.5 3.5 8 1z'/></svg>",
)}`;

const html = (script: string, css: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="style-nonce" content="{{STYLE_NONCE}}">
<title>Hearth Studio</title>
<link rel="icon" href="${FAVICON}">
<link rel="stylesheet" href="/dashboard/assets/${css}">
<script type="module" src="/dashboard/assets/${script}"></script>
</head>
<body><div id="app"><p class="boot">Loading Hearth Studio…</p></div></body>
</html>
`;

/** Builds into `outDir` (written to a temporary folder, then renamed, so a reader never sees half a build). */
export async function buildStudio(outDir: string, hash = sourceHash()): Promise<void> {
  const esbuild = await import('esbuild');
  const tmp = `${outDir}.tmp-${process.pid}-${Date.now()}`;
  const assets = path.join(tmp, 'assets');
  const result = await esbuild.build({
    entryPoints: { main: path.join(SOURCE_DIR, 'main.tsx') },
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    target: ['es2022'],
    outdir: assets,
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    // TanStack's React adapters run on Preact's compatibility layer (3 KB instead of React's 45).
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat', 'react/jsx-runtime': 'preact/jsx-runtime' },
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
    logLevel: 'silent',
  });
  const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
  const script = outputs.find((f) => f.startsWith('main-') && f.endsWith('.js'));
  const css = outputs.find((f) => f.startsWith('main-') && f.endsWith('.css'));
  if (!script || !css) throw new Error('Studio build produced no main script or stylesheet.');
  writeFileSync(path.join(tmp, 'index.html'), html(script, css));
  // index.html is sent per request (it carries that response's style nonce), the assets precompressed.
  for (const file of readdirSync(assets).map((f) => path.join(assets, f))) {
    const body = readFileSync(file);
    writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
    writeFileSync(
      `${file}.br`,
      brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: statSync(file).size },
      }),
    );
  }
  writeFileSync(
    path.join(tmp, 'build.json'),
    JSON.stringify({ hash, script, css, built_at: new Date().toISOString() }),
  );
  mkdirSync(path.dirname(outDir), { recursive: true });
  rmSync(outDir, { recursive: true, force: true });
  renameSync(tmp, outDir);
}

// `node --import tsx src/studio/build.ts` (npm's postinstall): build into dist/studio.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  await buildStudio(INSTALL_BUILD_DIR);
  console.log(`Hearth Studio built into dist/studio in ${Date.now() - started} ms.`);
}
