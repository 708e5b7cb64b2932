/**
 * The Studio's only way to the server: the management API (/v1) with the
 * signed-in account's session, and a project's data APIs (/rest/v1,
 * /auth/v1, /storage/v1) with its secret key. Both go in headers, never in
 * a URL. The session lives in sessionStorage (gone with the tab, never in
 * localStorage); signing out forgets it and every key read with it.
 */
const SESSION = 'hearth.studio.session';

export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
    public body: any,
  ) {
    super(message);
  }
}

let token: string | null = sessionStorage.getItem(SESSION);
const keys = new Map<string, Promise<string>>();
const listeners = new Set<() => void>();

export const signedIn = () => token !== null;
export function onSessionChange(f: () => void): () => void {
  listeners.add(f);
  return () => listeners.delete(f);
}
function setToken(t: string | null) {
  token = t;
  keys.clear();
  if (t) sessionStorage.setItem(SESSION, t);
  // Signing out forgets everything the Studio kept in the tab (the SQL history may hold secrets too).
  else for (const k of Object.keys(sessionStorage)) if (k.startsWith('hearth.studio.')) sessionStorage.removeItem(k);
  for (const f of listeners) f();
}
export const signOut = () => setToken(null);

/** An error body's message, with storage's hint (what Hearth adds to Supabase's words) after it. */
function errorMessage(e: any, fallback: string): string {
  const message = e.error?.message ?? e.message ?? e.msg ?? e.error_description ?? fallback;
  return e.error?.hint ? `${message}. ${e.error.hint}` : message;
}

async function parse(res: Response): Promise<any> {
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const e = body && typeof body === 'object' ? body : {};
    const message = errorMessage(e, typeof body === 'string' && body ? body : `${res.status} ${res.statusText}`);
    const code = e.error?.code ?? e.code ?? e.error_code ?? e.error ?? String(res.status);
    if (
      res.status === 401 &&
      token &&
      res.url.includes('/v1/') &&
      !res.url.includes('/rest/v1') &&
      !/\/(auth|storage)\/v1/.test(res.url)
    )
      setToken(null);
    throw new ApiError(res.status, String(code), String(message), body);
  }
  return body;
}

export async function signIn(email: string, password: string): Promise<void> {
  const res = await fetch('/v1/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  setToken((await parse(res)).access_token);
}

/** A management API call (`/v1/...`) as the signed-in account. */
export async function mgmt<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return parse(await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
}

export interface Project {
  id: string;
  ref: string;
  name: string;
  organization_id: string;
  is_default: boolean;
  base_url: string;
  api_url: string;
  created_at: string;
}
export interface ApiKey {
  name: string;
  type: 'publishable' | 'secret';
  api_key: string;
}

export const apiKeys = (ref: string) => mgmt<ApiKey[]>('GET', `/v1/projects/${encodeURIComponent(ref)}/api-keys`);

/** The project's secret key, read once per session and kept in memory only. */
function secretKey(ref: string): Promise<string> {
  let k = keys.get(ref);
  if (!k) {
    k = apiKeys(ref).then((list) => list.find((x) => x.type === 'secret')!.api_key);
    k.catch(() => keys.delete(ref));
    keys.set(ref, k);
  }
  return k;
}

/** The project's data plane on this origin (every project is served under /project/{ref}). */
export const dataBase = (ref: string) => `${location.origin}/project/${encodeURIComponent(ref)}`;

export interface DataOptions {
  body?: unknown;
  headers?: Record<string, string>;
  raw?: BodyInit;
}
/** A data API call with the project's secret key; answers the parsed body and the response. */
export async function data<T = any>(
  ref: string,
  method: string,
  path: string,
  o: DataOptions = {},
): Promise<{ body: T; res: Response }> {
  const key = await secretKey(ref);
  const headers: Record<string, string> = { apikey: key, authorization: `Bearer ${key}`, ...o.headers };
  let body = o.raw;
  if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(dataBase(ref) + path, { method, headers, body });
  if (!res.ok) return { body: await parse(res), res };
  return { body: method === 'HEAD' ? (null as T) : await parse(res), res };
}

/** The bytes of a data API answer (downloads and previews), fetched with the key in headers. */
export async function dataBlob(ref: string, path: string): Promise<Blob> {
  const key = await secretKey(ref);
  const res = await fetch(dataBase(ref) + path, { headers: { apikey: key, authorization: `Bearer ${key}` } });
  if (!res.ok) await parse(res);
  return res.blob();
}

/** Uploads with progress (fetch cannot report upload progress; XMLHttpRequest can). */
export async function upload(
  ref: string,
  path: string,
  file: File,
  onProgress: (fraction: number) => void,
): Promise<void> {
  const key = await secretKey(ref);
  await new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', dataBase(ref) + path);
    xhr.setRequestHeader('apikey', key);
    xhr.setRequestHeader('authorization', `Bearer ${key}`);
    xhr.setRequestHeader('content-type', file.type || 'application/octet-stream');
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      if (xhr.status < 300) {
        onProgress(1);
        return resolve();
      }
      let message = `${xhr.status}`;
      try {
        message = errorMessage(JSON.parse(xhr.responseText), message);
      } catch {
        /* keep the status */
      }
      reject(new ApiError(xhr.status, String(xhr.status), message, xhr.responseText));
    };
    xhr.onerror = () => reject(new ApiError(0, 'network', 'The upload failed: the server could not be reached.', null));
    xhr.send(file);
  });
}

export interface SqlResult {
  command: string;
  row_count: number | null;
  columns: { name: string; type_oid: number }[];
  /** Each row's values in the order of `columns` (format "arrays"). */
  rows: unknown[][];
}
export interface SqlAnswer {
  results: SqlResult[];
  duration_ms: number;
}
/** SQL as the project's owner role through POST /v1/projects/{ref}/database/query. */
export const runSql = (ref: string, query: string, timeoutMs?: number) =>
  mgmt<SqlAnswer>('POST', `/v1/projects/${encodeURIComponent(ref)}/database/query`, {
    query,
    format: 'arrays',
    ...(timeoutMs ? { timeout_ms: timeoutMs } : {}),
  });
/** The rows of the last statement. */
export const sqlRows = async <T = Record<string, unknown>>(ref: string, query: string) =>
  await mgmt<T[]>('POST', `/v1/projects/${encodeURIComponent(ref)}/database/query`, { query });
