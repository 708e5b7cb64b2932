/**
 * The table editor: the tables and views of the schemas the REST API
 * exposes (config/api db_schema), and for one of them its rows, its
 * structure and its row level security. Rows go through /rest/v1 with the
 * secret key; structure and policies through SQL as the owner role.
 */
import { useEffect } from 'preact/hooks';
import { mgmt, sqlRows, type Project } from '../api.ts';
import { href } from '../router.ts';
import { listTablesSql, type TableRef } from '../table-sql.ts';
import { Empty, ErrorNote, Loading, useLoad } from '../ui.tsx';
import { CreateTable } from './table-create.tsx';
import { TablePolicies } from './table-policies.tsx';
import { TableRows } from './table-rows.tsx';
import { TableStructure } from './table-structure.tsx';

export interface TableEntry extends TableRef {
  kind: string;
  rls: boolean;
}

export function TablesPage({ project, rest }: { project: Project; rest: string[] }) {
  const schemas = useLoad(
    async () =>
      (
        (await mgmt<{ db_schema: string }>('GET', `/v1/projects/${encodeURIComponent(project.ref)}/config/api`))
          .db_schema ?? 'public'
      )
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    [project.ref],
  );
  const tables = useLoad(
    async () => (schemas.data ? sqlRows<TableEntry>(project.ref, listTablesSql(schemas.data)) : undefined),
    [project.ref, schemas.data?.join()],
  );
  const [schema, name, tab = 'rows'] = rest;
  const selected = tables.data?.find((t) => t.schema === schema && t.name === name);
  const creating = schema === '+new';
  const selectedKey = selected && `${selected.schema}.${selected.name}`;
  // A table named by the address but not in the list was made since it loaded (by SQL, another
  // tab, a migration): read the list again, once per address.
  const unknown = Boolean(tables.data && name && !selected && !creating);
  useEffect(() => {
    if (unknown) tables.reload();
  }, [schema, name, unknown && 'unknown']);

  return (
    <section class="tables">
      <h1>Table editor</h1>
      <div class="split">
        <nav aria-label="Tables" class="table-list">
          <a
            class="button"
            href={href('p', project.ref, 'tables', '+new')}
            aria-current={creating ? 'page' : undefined}
          >
            New table
          </a>
          <ErrorNote error={schemas.error ?? tables.error} />
          {!tables.data && !tables.error && <Loading what="tables" />}
          {tables.data && tables.data.length === 0 && <Empty>No tables yet in {schemas.data?.join(', ')}.</Empty>}
          <ul>
            {tables.data?.map((t) => (
              <li key={`${t.schema}.${t.name}`}>
                <a
                  href={href('p', project.ref, 'tables', t.schema, t.name)}
                  aria-current={t === selected ? 'page' : undefined}
                >
                  {t.schema === 'public' ? '' : `${t.schema}.`}
                  {t.name}
                  {t.kind !== 'table' && <span class="badge">{t.kind}</span>}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="table-main">
          {creating && <CreateTable project={project} schemas={schemas.data ?? ['public']} onCreated={tables.reload} />}
          {!creating && !selected && tables.data && <Empty>Choose a table on the left, or create one.</Empty>}
          {selected && (
            <>
              <h2 class="table-title">
                {selected.schema}.{selected.name}
              </h2>
              <nav class="tabs" aria-label="Table views">
                {[
                  ['rows', 'Rows'],
                  ['structure', 'Structure'],
                  ['policies', `Policies (RLS ${selected.rls ? 'on' : 'off'})`],
                ].map(([id, label]) => (
                  <a
                    key={id}
                    href={href('p', project.ref, 'tables', selected.schema, selected.name, id!)}
                    aria-current={tab === id ? 'page' : undefined}
                  >
                    {label}
                  </a>
                ))}
              </nav>
              {/* Keyed by the table: a draft or an error of one table never shows under another. */}
              {tab === 'rows' && <TableRows key={selectedKey} project={project} table={selected} />}
              {tab === 'structure' && (
                <TableStructure key={selectedKey} project={project} table={selected} onChanged={tables.reload} />
              )}
              {tab === 'policies' && (
                <TablePolicies key={selectedKey} project={project} table={selected} onChanged={tables.reload} />
              )}
            </>
          )}
        </div>
      </div>
    </section>
  );
}
