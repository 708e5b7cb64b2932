/** Row level security of one table: on/off, its policies, add and drop a policy. */
import { useState } from 'preact/hooks';
import { runSql, sqlRows, type Project } from '../api.ts';
import { createPolicySql, dropPolicySql, policiesSql, rlsSql, type PolicySpec } from '../table-sql.ts';
import { ConfirmDialog, Empty, ErrorNote, Loading, useAction, useLoad } from '../ui.tsx';
import type { TableEntry } from './tables.tsx';

interface Policy {
  name: string;
  command: string;
  permissive: string;
  roles: string[];
  using: string | null;
  with_check: string | null;
}

export function TablePolicies({
  project,
  table,
  onChanged,
}: {
  project: Project;
  table: TableEntry;
  onChanged: () => void;
}) {
  const policies = useLoad(
    () => sqlRows<Policy>(project.ref, policiesSql(table)),
    [project.ref, table.schema, table.name],
  );
  const [spec, setSpec] = useState<PolicySpec>({
    name: '',
    command: 'select',
    roles: 'authenticated',
    using: 'true',
    check: '',
  });
  const [dropping, setDropping] = useState<string | null>(null);
  const [run, busy, error] = useAction();
  const set = (k: keyof PolicySpec) => (e: Event) =>
    setSpec({ ...spec, [k]: (e.currentTarget as HTMLInputElement).value });
  let sql = '';
  try {
    sql = createPolicySql(table, spec);
  } catch {
    /* shown once a name is typed */
  }

  // PostgreSQL has no row level security on views (ALTER ... ENABLE ROW LEVEL SECURITY fails 42809).
  if (table.kind !== 'table')
    return (
      <div class="policies">
        <p>
          A {table.kind} has no row level security of its own: it reads its tables as its owner (or, with{' '}
          <code>security_invoker</code>, as the caller), so write the policies on those tables.
        </p>
      </div>
    );

  return (
    <div class="policies">
      <p>
        Row level security is <strong>{table.rls ? 'on' : 'off'}</strong>:{' '}
        {table.rls
          ? 'requests with the publishable key or a user token see only rows a policy allows.'
          : 'every role with table privileges sees every row.'}{' '}
        <button
          type="button"
          disabled={busy}
          onClick={() => run(async () => (await runSql(project.ref, rlsSql(table, !table.rls)), onChanged()))}
        >
          {table.rls ? 'Disable RLS' : 'Enable RLS'}
        </button>
      </p>
      <ErrorNote error={policies.error} />
      {!policies.data && !policies.error && <Loading what="policies" />}
      {policies.data && policies.data.length === 0 && <Empty>No policies on {table.name}.</Empty>}
      {policies.data && policies.data.length > 0 && (
        <table class="list">
          <caption class="sr-only">Policies of {table.name}</caption>
          <thead>
            <tr>
              <th scope="col">Policy</th>
              <th scope="col">Command</th>
              <th scope="col">Roles</th>
              <th scope="col">Using</th>
              <th scope="col">With check</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {policies.data.map((p) => (
              <tr key={p.name}>
                <td>{p.name}</td>
                <td>{p.command}</td>
                <td>{p.roles.join(', ')}</td>
                <td>
                  <code>{p.using ?? ''}</code>
                </td>
                <td>
                  <code>{p.with_check ?? ''}</code>
                </td>
                <td>
                  <button
                    type="button"
                    class="small danger"
                    onClick={() => setDropping(p.name)}
                    aria-label={`Drop policy ${p.name}`}
                  >
                    Drop
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>New policy</h3>
      <form
        class="policy-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            await runSql(project.ref, createPolicySql(table, spec));
            setSpec({ ...spec, name: '' });
            policies.reload();
          });
        }}
      >
        <div class="inline">
          <label>
            Name
            <input value={spec.name} onInput={set('name')} required />
          </label>
          <label>
            Command
            <select value={spec.command} onChange={set('command')}>
              {['all', 'select', 'insert', 'update', 'delete'].map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </label>
          <label>
            Roles (comma-separated)
            <input value={spec.roles} onInput={set('roles')} />
          </label>
        </div>
        <label>
          Using (SQL expression: which rows are visible)
          <input value={spec.using} onInput={set('using')} placeholder="auth.uid() = user_id" />
        </label>
        <label>
          With check (SQL expression: which new rows are allowed)
          <input value={spec.check} onInput={set('check')} />
        </label>
        <pre class="sql-preview">{sql}</pre>
        <ErrorNote error={error} />
        <button type="submit" class="primary" disabled={busy || !sql}>
          Create policy
        </button>
      </form>
      {dropping && (
        <ConfirmDialog
          title={`Drop policy ${dropping}?`}
          text={dropPolicySql(table, dropping)}
          action="Drop policy"
          onConfirm={async () => (await runSql(project.ref, dropPolicySql(table, dropping)), policies.reload())}
          onClose={() => setDropping(null)}
        />
      )}
    </div>
  );
}
