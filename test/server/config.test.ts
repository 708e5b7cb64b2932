// HEARTH_* values a process cannot take are refused at start with invalid_config naming the
// variable (docs/configuration.md), never read as something else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';

const refused = (env: NodeJS.ProcessEnv, name: string) =>
  assert.throws(
    () => loadConfig(env),
    (err: Error & { code?: string }) => err.code === 'invalid_config' && err.message.includes(name),
    name,
  );

test('bad values are refused, naming the variable', () => {
  refused({ HEARTH_ROLE: 'both' }, 'HEARTH_ROLE');
  refused({ HEARTH_STORAGE_BACKEND: 's4' }, 'HEARTH_STORAGE_BACKEND');
  refused({ HEARTH_ACCESS_LOG: 'yes' }, 'HEARTH_ACCESS_LOG');
  refused({ HEARTH_S3_FORCE_PATH_STYLE: 'maybe' }, 'HEARTH_S3_FORCE_PATH_STYLE');
  refused({ HEARTH_PROJECT_DOMAIN: 'http://bad domain/' }, 'HEARTH_PROJECT_DOMAIN');
  refused({ HEARTH_PROJECT_DOMAIN: 'hearth.test:8080' }, 'HEARTH_PROJECT_DOMAIN');
  refused({ HEARTH_PORT: '70000' }, 'HEARTH_PORT');
  refused({ HEARTH_CONTROL_DB: 'Bad-Name' }, 'HEARTH_CONTROL_DB');
  refused({ HEARTH_LOG_LEVEL: 'loud' }, 'HEARTH_LOG_LEVEL');
  refused({ HEARTH_LOG_FORMAT: 'xml' }, 'HEARTH_LOG_FORMAT');
});

test('good values are read as documented', () => {
  assert.equal(loadConfig({}).s3.forcePathStyle, true);
  assert.equal(loadConfig({ HEARTH_S3_FORCE_PATH_STYLE: 'false' }).s3.forcePathStyle, false);
  assert.equal(loadConfig({ HEARTH_S3_FORCE_PATH_STYLE: '1' }).s3.forcePathStyle, true);
  assert.equal(loadConfig({ HEARTH_PROJECT_DOMAIN: 'Hearth.Example.COM' }).projectDomain, 'hearth.example.com');
  assert.equal(loadConfig({ HEARTH_PROJECT_DOMAIN: 'localhost' }).projectDomain, 'localhost');
  assert.equal(loadConfig({}).projectDomain, null);
  assert.equal(loadConfig({}).logLevel, 'info');
  assert.equal(loadConfig({ HEARTH_LOG_LEVEL: 'debug' }).logLevel, 'debug');
});
