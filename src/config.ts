/**
 * Hearth's configuration: every HEARTH_* variable (and DATABASE_URL), validated
 * once at start into one typed object that is passed down, never read at import
 * time. docs/configuration.md lists each variable.
 */
import path from 'node:path';
import { fail } from './errors.ts';

export type Role = 'all' | 'api' | 'worker';

export interface Config {
  dataDir: string;
  host: string;
  port: number;
  dbPort: number;
  databaseUrl: string | null;
  controlDb: string;
  masterKey: string | null;
  projectDomain: string | null;
  publicUrl: string | null;
  trustedProxies: string[];
  outboundAllow: string[];
  role: Role;
  logLevel: string;
  /** pretty: readable lines (the default on a terminal); json: one object a line (the default otherwise). */
  logFormat: 'pretty' | 'json';
  /** HEARTH_ACCESS_LOG=1: one log line per request. */
  accessLog: boolean;
  storageBackend: 'fs' | 's3';
  s3: {
    endpoint: string | null;
    bucket: string | null;
    region: string;
    accessKeyId: string | null;
    secretAccessKey: string | null;
    forcePathStyle: boolean;
  };
  workflowTickMs: number;
  functionTimeoutMs: number;
  functionMemoryMb: number;
  ownerEmail: string | null;
  ownerPassword: string | null;
  bodyLimitBytes: number;
  /** The whole request (headers and body) must arrive within this; else 408 and the connection closes. */
  requestTimeoutMs: number;
  /** Database connections this process may hold in all; null: half of what the server allows (db/pools.ts). */
  dbMaxConnections: number | null;
  /** How long a request waits for a free database connection before 503 database_unavailable. */
  dbQueueTimeoutMs: number;
  /** Client sockets one process keeps open at most; more are closed as they arrive. */
  maxSockets: number;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = 65535): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw fail('invalid_config', `${name} must be an integer between ${min} and ${max}, got "${raw}".`);
  }
  return n;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function logFormat(raw: string | undefined): 'pretty' | 'json' {
  if (raw === undefined || raw === '') return process.stdout.isTTY ? 'pretty' : 'json';
  if (raw !== 'pretty' && raw !== 'json')
    throw fail('invalid_config', `HEARTH_LOG_FORMAT must be pretty or json, got "${raw}".`);
  return raw;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw fail('invalid_config', `${name} must be 1 or 0, got "${raw}".`);
}

/** HEARTH_PROJECT_DOMAIN: a DNS name (projects answer at {ref}.<it>), lower-cased; not a URL. */
function domain(raw: string | undefined): string | null {
  if (!raw) return null;
  const label = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
  if (raw.length > 253 || !new RegExp(`^(?:${label}\\.)*${label}$`, 'i').test(raw)) {
    throw fail(
      'invalid_config',
      `HEARTH_PROJECT_DOMAIN must be a domain name such as hearth.example.com, got "${raw}".`,
    );
  }
  return raw.toLowerCase();
}

/** pino's levels (and `silent`), checked here so a typo names the variable rather than failing inside pino. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(raw: string | undefined): string {
  if (raw === undefined || raw === '') return 'info';
  if (!LOG_LEVELS.includes(raw))
    throw fail('invalid_config', `HEARTH_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}".`);
  return raw;
}

/**
 * The smallest HEARTH_DB_MAX_CONNECTIONS: the platform's least (5 connections: two control,
 * one admin, the LISTEN connection and the storage writer lock; db/pools.ts) plus a project
 * pool's two and a background pass.
 */
const MIN_BUDGET = 8;

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const role = (env.HEARTH_ROLE ?? 'all') as Role;
  if (!['all', 'api', 'worker'].includes(role)) {
    throw fail('invalid_config', `HEARTH_ROLE must be all, api or worker, got "${role}".`);
  }
  const backend = env.HEARTH_STORAGE_BACKEND ?? 'fs';
  if (backend !== 'fs' && backend !== 's3') {
    throw fail('invalid_config', `HEARTH_STORAGE_BACKEND must be fs or s3, got "${backend}".`);
  }
  const config: Config = {
    dataDir: path.resolve(env.HEARTH_DATA_DIR ?? '.hearth'),
    host: env.HEARTH_HOST ?? '127.0.0.1',
    port: int(env, 'HEARTH_PORT', 54321),
    dbPort: int(env, 'HEARTH_DB_PORT', 54322, 1),
    databaseUrl: env.DATABASE_URL || null,
    controlDb: env.HEARTH_CONTROL_DB ?? 'hearth',
    masterKey: env.HEARTH_MASTER_KEY || null,
    projectDomain: domain(env.HEARTH_PROJECT_DOMAIN),
    publicUrl: env.HEARTH_PUBLIC_URL?.replace(/\/+$/, '') || null,
    trustedProxies: list(env.HEARTH_TRUSTED_PROXIES),
    outboundAllow: list(env.HEARTH_OUTBOUND_ALLOW),
    role,
    logLevel: logLevel(env.HEARTH_LOG_LEVEL),
    logFormat: logFormat(env.HEARTH_LOG_FORMAT),
    accessLog: flag(env, 'HEARTH_ACCESS_LOG'),
    storageBackend: backend,
    s3: {
      endpoint: env.HEARTH_S3_ENDPOINT || null,
      bucket: env.HEARTH_S3_BUCKET || null,
      region: env.HEARTH_S3_REGION ?? 'us-east-1',
      accessKeyId: env.HEARTH_S3_ACCESS_KEY_ID || null,
      secretAccessKey: env.HEARTH_S3_SECRET_ACCESS_KEY || null,
      forcePathStyle: env.HEARTH_S3_FORCE_PATH_STYLE ? flag(env, 'HEARTH_S3_FORCE_PATH_STYLE') : true,
    },
    workflowTickMs: int(env, 'HEARTH_WORKFLOW_TICK_MS', 15000, 0, 3_600_000),
    functionTimeoutMs: int(env, 'HEARTH_FUNCTION_TIMEOUT_MS', 30_000, 100, 3_600_000),
    functionMemoryMb: int(env, 'HEARTH_FUNCTION_MEMORY_MB', 128, 16, 4096),
    ownerEmail: env.HEARTH_OWNER_EMAIL || null,
    ownerPassword: env.HEARTH_OWNER_PASSWORD || null,
    bodyLimitBytes: int(env, 'HEARTH_BODY_LIMIT', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    requestTimeoutMs: int(env, 'HEARTH_REQUEST_TIMEOUT_MS', 300_000, 100, 3_600_000),
    dbMaxConnections: env.HEARTH_DB_MAX_CONNECTIONS
      ? int(env, 'HEARTH_DB_MAX_CONNECTIONS', 0, MIN_BUDGET, 100_000)
      : null,
    dbQueueTimeoutMs: int(env, 'HEARTH_DB_QUEUE_TIMEOUT_MS', 5000, 10, 600_000),
    maxSockets: int(env, 'HEARTH_MAX_SOCKETS', 8192, 1, 1_000_000),
    ...overrides,
  };
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(config.controlDb)) {
    throw fail(
      'invalid_config',
      `HEARTH_CONTROL_DB must be a plain lower-case database name, got "${config.controlDb}".`,
    );
  }
  return config;
}
