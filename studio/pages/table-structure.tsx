/** A table's columns: add, alter (name, type, default, not null, unique, reference), drop; drop the table. The SQL is shown before it runs. */
import { useState } from 'preact/hooks';
import { runSql, sqlRows, type Project } from '../api.ts';
import { go } from '../router.ts';
import { addColumnSql, alterColumnSql, columnsSql, dropColumnSql, dropTableSql, type ColumnInfo, type ColumnSpec } from '../table-sql.ts';
import { ConfirmDialog, Dialog, ErrorNote, Loading, useAction, useLoad } from '../ui.tsx';
import { ColumnFields, newColumn, TypeList } from './table-create.tsx';
import type { TableEntry } from './tables.tsx';

type Editing = { kind: 'add' } | { kind: 'alter'; column: ColumnInfo } | { kind: 'drop'; column: ColumnInfo } | { kind: 'drop-table' };

export function TableStructure({ project, table, onChanged }: { project: Project; table: TableEntry; onChanged: () => void }) {
  const columns = useLoad(() => sqlRows<ColumnInfo>(project.ref, columnsSql(table)), [project.ref, table.schema, table.name]);
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
                <td>{[c.pk && 'primary key', !c.nullable && 'not null', c.unique && 'unique', c.references && `→ ${c.references}`].filter(Boolean).join(', ')}</td>
                <td>
                  {isTable && (
                    <>
                      <button type="button" class="small" onClick={() => setEditing({ kind: 'alter', column: c })} aria-label={`Edit column ${c.name}`}>
                        Edit
                      </button>{' '}
                      <button type="button" class="small danger" onClick={() => setEditing({ kind: 'drop', column: c })} aria-label={`Drop column ${c.name}`}>
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
      <div class="toolbar">
        {isTable && (
          <button type="button" onClick={() => setEditing({ kind: 'add' })}>
            Add column
          </button>
        )}
        <button type="button" class="danger" onClick={() => setEditing({ kind: 'drop-table' })}>
          Drop {table.kind}
        </button>
      </div>
      {(editing?.kind === 'add' || editing?.kind === 'alter') && (
        <ColumnDialog project={project} table={table} column={editing.kind === 'alter' ? editing.column : null} onDone={done} onClose={() => setEditing(null)} />
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

function ColumnDialog({ project, table, column, onDone, onClose }: { project: Project; table: TableEntry; column: ColumnInfo | null; onDone: () => void; onClose: () => void }) {
  const [spec, setSpec] = useState<ColumnSpec>(() =>
    column ? newColumn({ name: column.name, type: column.type, default: column.default ?? '', notNull: !column.nullable, unique: column.unique, primaryKey: column.pk, references: column.references ?? '' }) : newColumn(),
  );
  const [run, busy, error] = useAction();
  let sql = '';
  let invalid: unknown = null;
  try {
    sql = column ? alterColumnSql(table, column, spec) : addColumnSql(table, spec);
  } catch (e) {
    invalid = e;
  }
  return (
    <Dialog title={column ? `Edit column ${column.name}` : `Add a column to ${table.name}`} onClose={onClose} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            if (sql) await runSql(project.ref, sql);
            onDone();
          });
        }}
      >
        <TypeList />
        <ColumnFields c={spec} n={1} onChange={setSpec} />
        <h3>SQL</h3>
        <pre class="sql-preview">{sql || (invalid instanceof Error ? invalid.message : 'No change.')}</pre>
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
