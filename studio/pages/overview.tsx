/**
 * A project's addresses, keys (the secret key shown only on request),
 * connection string and the `hearth status -o env` block.
 */
import { useState } from 'preact/hooks';
import { apiKeys, sqlRows, type Project } from '../api.ts';
import { CopyButton, ErrorNote, Loading, useLoad } from '../ui.tsx';

const HIDDEN = '••••••••••••••••';

/**
 * Where a client reaches PostgreSQL: the address Hearth itself connects to,
 * unless that is this machine's loopback (or a Unix socket), when the
 * database is on the host serving this page.
 */
function dbHost(serverAddr: string | null): string {
  if (!serverAddr || serverAddr === '::1' || serverAddr.startsWith('127.')) return location.hostname;
  return serverAddr.includes(':') ? `[${serverAddr}]` : serverAddr;
}

export function OverviewPage({ project }: { project: Project }) {
  const keys = useLoad(() => apiKeys(project.ref), [project.ref]);
  // The direct connection's role, database, server address and port, as the owner role sees them (owners and admins only).
  const db = useLoad(
    () =>
      sqlRows<{ user: string; db: string; port: number; addr: string | null }>(
        project.ref,
        'select current_user as "user", current_database() as db, current_setting(\'port\')::int as port, host(inet_server_addr()) as addr',
      ),
    [project.ref],
  );
  const [reveal, setReveal] = useState(false);
  const publishable = keys.data?.find((k) => k.type === 'publishable')?.api_key ?? '';
  const secret = keys.data?.find((k) => k.type === 'secret')?.api_key ?? '';
  const row = db.data?.[0];
  const dbUrl = row ? `postgresql://${row.user}:[YOUR-PASSWORD]@${dbHost(row.addr)}:${row.port}/${row.db}` : '';
  const env = [
    ['BASE_URL', project.base_url],
    ['API_URL', project.api_url],
    ['PROJECT_REF', project.ref],
    ['PUBLISHABLE_KEY', publishable],
    ['SECRET_KEY', reveal ? secret : HIDDEN],
    ['DB_URL', dbUrl || '(owners and admins only)'],
    ['JWKS_URL', `${project.base_url}/auth/v1/.well-known/jwks.json`],
  ]
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');

  return (
    <section>
      <h1>Overview</h1>
      <h2>Addresses</h2>
      <dl class="facts">
        <dt>Project URL (BASE_URL)</dt>
        <dd>
          <code>{project.base_url}</code> <CopyButton text={project.base_url} label="Copy project URL" />
        </dd>
        <dt>REST</dt>
        <dd>
          <code>{project.base_url}/rest/v1</code>
        </dd>
        <dt>Management API (API_URL)</dt>
        <dd>
          <code>{project.api_url}</code>
        </dd>
        <dt>Reference</dt>
        <dd>
          <code>{project.ref}</code>
        </dd>
      </dl>
      <h2>API keys</h2>
      <ErrorNote error={keys.error} />
      {keys.loading && !keys.data && <Loading what="keys" />}
      {keys.data && (
        <dl class="facts">
          <dt>Publishable key (safe in a browser)</dt>
          <dd>
            <code data-testid="publishable-key">{publishable}</code>{' '}
            <CopyButton text={publishable} label="Copy publishable key" />
          </dd>
          <dt>Secret key (server code only: it bypasses row level security)</dt>
          <dd>
            <code data-testid="secret-key">{reveal ? secret : HIDDEN}</code>{' '}
            <button type="button" onClick={() => setReveal(!reveal)} aria-pressed={reveal}>
              {reveal ? 'Hide' : 'Reveal'}
            </button>{' '}
            <CopyButton text={secret} label="Copy secret key" />
          </dd>
        </dl>
      )}
      <h2>Direct database connection</h2>
      {db.error ? (
        <p class="muted">Only owners and admins see the connection string (it logs in as the project's owner role).</p>
      ) : (
        <p>
          <code data-testid="db-url">{dbUrl || '…'}</code>{' '}
          {dbUrl && <CopyButton text={dbUrl} label="Copy connection string" />}
          <br />
          <span class="muted">
            [YOUR-PASSWORD] stands for the owner role's password, as in Supabase: the API never sends it. `hearth
            status` on the server prints the whole DB_URL.
          </span>
        </p>
      )}
      <h2>Environment</h2>
      <p class="muted">What `hearth status -o env` prints for this project (MANAGEMENT_TOKEN: run `hearth login`).</p>
      <pre class="env" data-testid="env-block" tabIndex={0} aria-label="Environment variables">
        {env}
      </pre>
      <CopyButton text={env.replace(HIDDEN, secret)} label="Copy environment block" />
    </section>
  );
}
