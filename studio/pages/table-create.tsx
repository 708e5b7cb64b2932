/**
 * Create a table: name, schema and columns (type, default, primary key, not
 * null, unique, reference with its ON DELETE action); several primary key
 * columns make a composite key. The SQL is shown before it runs.
 */
import { useState } from 'preact/hooks';
import { runSql, type Project } from '../api.ts';
import { go } from '../router.ts';
import { createTableSql, ON_DELETE, type ColumnSpec } from '../table-sql.ts';
import { ErrorNote, useAction } from '../ui.tsx';

export const TYPES = [
  'bigint',
  'integer',
  'text',
  'boolean',
  'numeric',
  'double precision',
  'uuid',
  'timestamptz',
  'date',
  'jsonb',
  'bytea',
];

export const newColumn = (over: Partial<ColumnSpec> = {}): ColumnSpec => ({
  name: '',
  type: 'text',
  default: '',
  notNull: false,
  unique: false,
  primaryKey: false,
  references: '',
  onDelete: 'no action',
  ...over,
});

/** The inputs of one column definition, shared by "create table", "add column" and "edit column". */
export function ColumnFields({ c, n, onChange }: { c: ColumnSpec; n: number; onChange: (c: ColumnSpec) => void }) {
  const set = (k: keyof ColumnSpec) => (e: Event) => {
    const el = e.currentTarget as HTMLInputElement | HTMLSelectElement;
    onChange({ ...c, [k]: el instanceof HTMLInputElement && el.type === 'checkbox' ? el.checked : el.value });
  };
  return (
    <fieldset class="column-fields">
      <legend>Column {n}</legend>
      <label>
        Name
        <input value={c.name} onInput={set('name')} required />
      </label>
      <label>
        Type
        <input value={c.type} onInput={set('type')} list="column-types" required />
      </label>
      <label>
        Default (SQL)
        <input value={c.default} onInput={set('default')} placeholder="e.g. now()" />
      </label>
      <label>
        References
        <input value={c.references} onInput={set('references')} placeholder="table(column)" />
      </label>
      <label>
        On delete
        <select value={c.onDelete} onChange={set('onDelete')} disabled={!c.references.trim()}>
          {ON_DELETE.map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
      </label>
      <label class="check">
        <input type="checkbox" checked={c.primaryKey} onChange={set('primaryKey')} /> Primary key
      </label>
      <label class="check">
        <input type="checkbox" checked={c.notNull || c.primaryKey} disabled={c.primaryKey} onChange={set('notNull')} />{' '}
        Not null
      </label>
      <label class="check">
        <input type="checkbox" checked={c.unique} onChange={set('unique')} /> Unique
      </label>
    </fieldset>
  );
}

export function TypeList() {
  return (
    <datalist id="column-types">
      {TYPES.map((t) => (
        <option key={t} value={t} />
      ))}
    </datalist>
  );
}

export function CreateTable({
  project,
  schemas,
  onCreated,
}: {
  project: Project;
  schemas: string[];
  onCreated: () => void;
}) {
  const [name, setName] = useState('');
  const [schema, setSchema] = useState(schemas[0] ?? 'public');
  const [columns, setColumns] = useState<ColumnSpec[]>([
    newColumn({ name: 'id', type: 'uuid', default: 'gen_random_uuid()', primaryKey: true }),
    newColumn({ name: 'created_at', type: 'timestamptz', default: 'now()', notNull: true }),
  ]);
  const [run, busy, error] = useAction();
  let preview = '';
  let invalid: unknown = null;
  try {
    preview = createTableSql({ schema, name }, columns);
  } catch (e) {
    invalid = e;
  }
  return (
    <form
      class="create-table"
      onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          await runSql(project.ref, createTableSql({ schema, name }, columns));
          onCreated();
          go('p', project.ref, 'tables', schema, name.trim());
        });
      }}
    >
      <h2>New table</h2>
      <TypeList />
      <div class="inline">
        <label>
          Table name
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        </label>
        <label>
          Schema
          <select value={schema} onChange={(e) => setSchema(e.currentTarget.value)}>
            {schemas.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      {columns.map((c, i) => (
        <div class="column-row" key={i}>
          <ColumnFields c={c} n={i + 1} onChange={(nc) => setColumns(columns.map((x, j) => (j === i ? nc : x)))} />
          <button
            type="button"
            class="small"
            onClick={() => setColumns(columns.filter((_, j) => j !== i))}
            aria-label={`Remove column ${i + 1}`}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => setColumns([...columns, newColumn()])}>
        Add column
      </button>
      <h3>SQL</h3>
      <pre class="sql-preview">{preview || (invalid instanceof Error ? invalid.message : '')}</pre>
      <ErrorNote error={error} />
      <button type="submit" class="primary" disabled={busy || !!invalid}>
        {busy ? 'Creating…' : 'Create table'}
      </button>
    </form>
  );
}
