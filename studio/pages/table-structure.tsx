/**
 * A table's columns: add, alter (name, type, default, primary key, not null,
 * unique, reference), drop; change the primary key (one or several columns,
 * or none); drop the table. The SQL is shown before it runs.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { runSql, sqlRows, type Project } from '../api.ts';
import { go } from '../router.ts';
import {
  addColumnSql,
  alterColumnSql,
  columnsSql,
  dropColumnSql,
  dropTableSql,
  primaryKeyOf,
  primaryKeySql,
  type ColumnInfo,
  type ColumnSpec,
} from '../table-sql.ts';
import { ConfirmDialog, Dialog, ErrorNote, Loading, useAction, useLoad } from '../ui.tsx';
import { ColumnFields, newColumn, TypeList } from './table-create.tsx';
import type { TableEntry } from './tables.tsx';

type Editing =
  | { kind: 'add' }
  | { kind: 'alter'; column: ColumnInfo }
  | { kind: 'drop'; column: ColumnInfo }
  | { kind: 'primary-key' }
  | { kind: 'drop-table' };

export function TableStructure({
  project,
  table,
  onChanged,
}: {
  project: Project;
  table: TableEntry;
  onChanged: () => void;
}) {
  const columns = useLoad(
    () => sqlRows<ColumnInfo>(project.ref, columnsSql(table)),
    [project.ref, table.schema, table.name],
  );
  const [editing, setEditing] = useState<Editing | null>(null);
  const done = () => (setEditing(null), columns.reload(), onChanged());
  const isTable = table.kind === 'table';

  return (
    <div class="structure">
      <ErrorNote error={columns.error} />
      {!columns.data && !columns.error && <Loading what="columns" />}
      {columns.data && (
        <table class="list">
          <caption class="sr-only">Columns of {table.name}</caption>
          <thead>
            <tr>
              <th scope="col">Column</th>
              <th scope="col">Type</th>
              <th scope="col">Default</th>
              <th scope="col">Constraints</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {columns.data.map((c) => (
              <tr key={c.name}>
                <td>{c.name}</td>
                <td>
                  <code>{c.type}</code>
                </td>
                <td>{c.default ?? ''}</td>
                <td>
                  {[
                    c.pk && 'primary key',
                    !c.nullable && 'not null',
                    c.unique && 'unique',
                    c.references &&
                      `→ ${c.references}${c.on_delete && c.on_delete !== 'no action' ? ` on delete ${c.on_delete}` : ''}`,
                  ]
                    .filter(Boolean)
                    .join(', ')}
                </td>
                <td>
                  {isTable && (
                    <>
                      <button
                        type="button"
                        class="small"
                        onClick={() => setEditing({ kind: 'alter', column: c })}
                        aria-label={`Edit column ${c.name}`}
                      >
                        Edit
                      </button>{' '}
                      <button
                        type="button"
                        class="small danger"
                        onClick={() => setEditing({ kind: 'drop', column: c })}
                        aria-label={`Drop column ${c.name}`}
                      >
                        Drop
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {columns.data && isTable && (
        <p>
          Primary key:{' '}
          {primaryKeyOf(columns.data).columns.join(', ') || (
            <span class="muted">none (rows cannot be edited in the grid)</span>
          )}
        </p>
      )}
      <div class="toolbar">
        {isTable && (
          <button type="button" onClick={() => setEditing({ kind: 'add' })}>
            Add column
          </button>
        )}
        {isTable && columns.data && (
          <button type="button" onClick={() => setEditing({ kind: 'primary-key' })}>
            Change primary key
          </button>
        )}
        <button type="button" class="danger" onClick={() => setEditing({ kind: 'drop-table' })}>
          Drop {table.kind}
        </button>
      </div>
      {(editing?.kind === 'add' || editing?.kind === 'alter') && (
        <ColumnDialog
          project={project}
          table={table}
          current={columns.data ?? []}
          column={editing.kind === 'alter' ? editing.column : null}
          onDone={done}
          onClose={() => setEditing(null)}
        />
      )}
      {editing?.kind === 'primary-key' && columns.data && (
        <PrimaryKeyDialog
          project={project}
          table={table}
          current={columns.data}
          onDone={done}
          onClose={() => setEditing(null)}
        />
      )}
      {editing?.kind === 'drop' && (
        <ConfirmDialog
          title={`Drop column ${editing.column.name}?`}
          text={`${dropColumnSql(table, editing.column.name)} Its values are lost.`}
          action="Drop column"
          onConfirm={() => runSql(project.ref, dropColumnSql(table, editing.column.name))}
          onClose={done}
        />
      )}
      {editing?.kind === 'drop-table' && (
        <ConfirmDialog
          title={`Drop ${table.name}?`}
          text={`${dropTableSql(table, table.kind)} Every row is lost.`}
          confirmWord={table.name}
          action={`Drop ${table.kind}`}
          onConfirm={async () => {
            await runSql(project.ref, dropTableSql(table, table.kind));
            onChanged();
            go('p', project.ref, 'tables');
          }}
          onClose={() => setEditing(null)}
        />
      )}
    </div>
  );
}

interface ChangeProps {
  project: Project;
  table: TableEntry;
  current: ColumnInfo[];
  onDone: () => void;
  onClose: () => void;
}

/** A dialog that shows the SQL of a change (or why it cannot be made) and runs it. */
function SqlChangeDialog({
  project,
  title,
  make,
  onDone,
  onClose,
  children,
}: {
  project: Project;
  title: string;
  make: () => string;
  onDone: () => void;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const [run, busy, error] = useAction();
  let sql = '';
  let invalid: unknown = null;
  try {
    sql = make();
  } catch (e) {
    invalid = e;
  }
  return (
    <Dialog title={title} onClose={onClose} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            if (sql) await runSql(project.ref, sql);
            onDone();
          });
        }}
      >
        {children}
        <h3>SQL</h3>
        <pre class="sql-preview" data-testid="sql-preview">
          {sql || (invalid instanceof Error ? invalid.message : 'No change.')}
        </pre>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy || !!invalid || !sql}>
            {busy ? 'Saving…' : 'Run'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function ColumnDialog({ column, current, ...props }: ChangeProps & { column: ColumnInfo | null }) {
  const [spec, setSpec] = useState<ColumnSpec>(() =>
    column
      ? newColumn({
          name: column.name,
          type: column.type,
          default: column.default ?? '',
          notNull: !column.nullable,
          unique: column.unique,
          primaryKey: column.pk,
          references: column.references ?? '',
          onDelete: column.on_delete ?? 'no action',
        })
      : newColumn(),
  );
  return (
    <SqlChangeDialog
      {...props}
      title={column ? `Edit column ${column.name}` : `Add a column to ${props.table.name}`}
      make={() =>
        column ? alterColumnSql(props.table, column, spec, current) : addColumnSql(props.table, spec, current)
      }
    >
      <TypeList />
      <ColumnFields c={spec} n={1} onChange={setSpec} />
    </SqlChangeDialog>
  );
}

/** The primary key as a set of columns (in column order): the old constraint is dropped and the new one added, in one transaction. */
function PrimaryKeyDialog({ current, ...props }: ChangeProps) {
  const [key, setKey] = useState(() => new Set(primaryKeyOf(current).columns));
  const chosen = current.filter((c) => key.has(c.name)).map((c) => c.name);
  return (
    <SqlChangeDialog
      {...props}
      title={`Primary key of ${props.table.name}`}
      make={() => primaryKeySql(props.table, current, chosen)}
    >
      <fieldset>
        <legend>Key columns (none: no primary key)</legend>
        {current.map((c) => (
          <label class="check" key={c.name}>
            <input
              type="checkbox"
              checked={key.has(c.name)}
              onChange={(e) => {
                const next = new Set(key);
                if (e.currentTarget.checked) next.add(c.name);
                else next.delete(c.name);
                setKey(next);
              }}
            />{' '}
            {c.name} <span class="muted">{c.type}</span>
          </label>
        ))}
      </fieldset>
    </SqlChangeDialog>
  );
}
