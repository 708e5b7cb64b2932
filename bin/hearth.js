#!/usr/bin/env node
// The `hearth` command. Hearth is written in TypeScript; it runs the build of
// it in dist/server (made by `npm install`, see scripts/build-server.js) when
// that build is current, rebuilds it when src/ changed since, and runs the
// sources through tsx only when no build can be made (a read-only install, or
// a source esbuild cannot compile, whose error tsx then reports).
import { pathToFileURL } from 'node:url';
import { buildServer, currentBuild } from '../scripts/build-server.js';

const entry = currentBuild() ?? (await buildServer().catch(() => null));
if (entry) {
  await import(pathToFileURL(entry).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
