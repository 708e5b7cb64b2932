/**
 * The Studio build (what `npm install` and a first start without it run):
 * hashed ES modules with brotli and gzip copies, an index.html that loads
 * only them and carries the style-nonce placeholder the server fills, and a
 * build.json that says which source it was made from.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { buildStudio, isCurrentBuild, sourceHash } from '../../src/studio/build.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'hearth-studio-build-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('builds hashed, precompressed modules and an index.html of the current source', async () => {
  const out = path.join(dir, 'studio');
  const hash = sourceHash();
  assert.equal(isCurrentBuild(out, hash), false);
  await buildStudio(out, hash);
  assert.equal(isCurrentBuild(out, hash), true);
  assert.equal(isCurrentBuild(out, 'another-source'), false);

  const html = readFileSync(path.join(out, 'index.html'), 'utf8');
  assert.match(html, /<meta name="style-nonce" content="\{\{STYLE_NONCE\}\}">/);
  assert.equal([...html.matchAll(/<script/g)].length, 1);
  const entry = /src="\/dashboard\/assets\/(main-[\w]+\.js)"/.exec(html)![1]!;
  const assets = readdirSync(path.join(out, 'assets'));
  for (const file of assets.filter((f) => /\.(js|css)$/.test(f))) {
    const body = readFileSync(path.join(out, 'assets', file));
    assert.deepEqual(brotliDecompressSync(readFileSync(path.join(out, 'assets', `${file}.br`))), body, file);
    assert.deepEqual(gunzipSync(readFileSync(path.join(out, 'assets', `${file}.gz`))), body, file);
  }
  // The SQL editor's CodeMirror is not in the first load (the entry and what it imports statically).
  const firstLoad = new Set([entry]);
  for (const file of firstLoad) {
    const text = readFileSync(path.join(out, 'assets', file), 'utf8');
    assert.doesNotMatch(text, /cm-editor/, file);
    for (const m of text.matchAll(/from"\.\/([\w-]+\.js)"/g)) firstLoad.add(m[1]!);
  }
  assert.ok(firstLoad.size > 1);
  assert.ok(assets.some((f) => f.startsWith('sql-') && f.endsWith('.js')));
});
