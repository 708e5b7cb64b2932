/**
 * Rows of one table through /rest/v1 with the secret key: pages of 500 rows
 * (the server sorts, filters and counts; the grid renders only what is in
 * view), insert, edit and delete, with the database's error shown as it
 * comes. Editing needs a primary key, which names the row to PATCH/DELETE.
 */
import type { SortingState } from '@tanstack/react-table';
import { lazy, Suspense } from 'preact/compat';
import { useState } from 'preact/hooks';
import { data, sqlRows, type Project } from '../api.ts';
import { Grid, type Row } from '../grid.tsx';
import { columnsSql, type ColumnInfo } from '../table-sql.ts';
import { ConfirmDialog, Dialog, Empty, ErrorNote, Loading, cellText, useAction, useLoad } from '../ui.tsx';
import type { TableEntry } from './tables.tsx';

const JsonEditor = lazy(() => import('../code-editor.tsx').then((m) => m.CodeEditor));

const PAGE = 500;
const OPERATORS: [string, string][] = [
  ['eq', '='],
  ['neq', '≠'],
  ['gt', '>'],
  ['gte', '≥'],
  ['lt', '<'],
  ['lte', '≤'],
  ['like', 'like'],
  ['ilike', 'ilike'],
  ['is', 'is (null, true, false)'],
];
interface Filter {
  column: string;
  op: string;
  value: string;
}

const isJson = (type: string) => type === 'json' || type === 'jsonb';
const count = (n: number) => n.toLocaleString('en');
/**
 * Types whose values sort (by a btree operator class): a table without a
 * primary key is paged in the order of all its columns of these types, so its
 * pages neither skip nor repeat rows (json, xml, point… have no ordering).
 */
const ORDERABLE =
  /^(smallint|integer|bigint|numeric|real|double precision|text|character varying|character|uuid|boolean|date|time|timestamp|interval|jsonb|bytea|inet|citext)\b/;
/** A column name in a PostgREST select or order list, quoted (backslash escapes) so any name parses. */
const restName = (n: string) => `"${n.replace(/[\\"]/g, '\\$&')}"`;
/**
 * bigint and numeric values past 2^53 or 15 digits lose digits as JSON numbers
 * (JavaScript doubles): such columns are read as text (`"id"::text`, which
 * PostgREST still names `id`), so the grid shows and a row filter names the exact value.
 */
const exactText = (type: string) => /^(bigint|numeric)(\(\d+(,\d+)?\))?$/.test(type);

export function TableRows({ project, table }: { project: Project; table: TableEntry }) {
  const columns = useLoad(
    () => sqlRows<ColumnInfo>(project.ref, columnsSql(table)),
    [project.ref, table.schema, table.name],
  );
  const [page, setPage] = useState(0);
  const [sorting, setSorting] = useState<SortingState>([]);
  const [filters, setFilters] = useState<Filter[]>([]);
  const [draft, setDraft] = useState<Filter>({ column: '', op: 'eq', value: '' });
  const [editing, setEditing] = useState<Row | 'new' | null>(null);
  const profile: Record<string, string> = table.schema === 'public' ? {} : { 'accept-profile': table.schema };

  const query = () => {
    const cols = columns.data!;
    const select = cols.map((c) => (exactText(c.type) ? `${restName(c.name)}::text` : restName(c.name))).join(',');
    const q = new URLSearchParams({ select: select || '*', limit: String(PAGE), offset: String(page * PAGE) });
    // The primary key (or, without one, every orderable column) orders the rows after the clicked
    // header, as Supabase's editor does: equal values of a sorted column would otherwise come back
    // in any order, and pages would skip and repeat rows. An edited row keeps its place.
    const pk = cols.filter((c) => c.pk);
    const tieBreak = (pk.length ? pk : cols.filter((c) => ORDERABLE.test(c.type))).filter(
      (c) => !sorting.some((s) => s.id === c.name),
    );
    const order = [
      ...sorting.map((s) => `${restName(s.id)}.${s.desc ? 'desc' : 'asc'}`),
      ...tieBreak.map((c) => `${restName(c.name)}.asc`),
    ];
    if (order.length) q.set('order', order.join(','));
    // A plain filter's value is taken as written after `op.` (quotes there would be part of the value).
    for (const f of filters) q.append(f.column, `${f.op}.${f.value}`);
    return q.toString();
  };
  const rows = useLoad(async () => {
    // The select list comes from the columns (bigint and numeric as text): wait for them.
    if (!columns.data) return null;
    const { body, res } = await data<Row[]>(
      project.ref,
      'GET',
      `/rest/v1/${encodeURIComponent(table.name)}?${query()}`,
      { headers: { prefer: 'count=exact', ...profile } },
    );
    const total = Number(res.headers.get('content-range')?.split('/')[1]);
    return { rows: body, total: Number.isFinite(total) ? total : null };
  }, [project.ref, table.name, columns.data, page, JSON.stringify(sorting), JSON.stringify(filters)]);

  const cols = columns.data ?? [];
  const pk = cols.filter((c) => c.pk);
  const total = rows.data?.total ?? null;
  const first = page * PAGE;
  const pages = total === null ? null : Math.max(1, Math.ceil(total / PAGE));
  const names = cols.map((c) => c.name);

  return (
    <div class="rows">
      <form
        class="inline filters"
        aria-label="Filter rows"
        onSubmit={(e) => {
          e.preventDefault();
          if (!draft.column && !names[0]) return;
          setFilters([...filters, { ...draft, column: draft.column || names[0]! }]);
          setDraft({ ...draft, value: '' });
          setPage(0);
        }}
      >
        <label>
          Column
          <select
            value={draft.column || names[0]}
            onChange={(e) => setDraft({ ...draft, column: e.currentTarget.value })}
          >
            {names.map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </label>
        <label>
          Operator
          <select value={draft.op} onChange={(e) => setDraft({ ...draft, op: e.currentTarget.value })}>
            {OPERATORS.map(([op, label]) => (
              <option key={op} value={op}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Value
          <input value={draft.value} onInput={(e) => setDraft({ ...draft, value: e.currentTarget.value })} />
        </label>
        <button type="submit">Add filter</button>
        {table.kind === 'table' && (
          <button type="button" class="primary" onClick={() => setEditing('new')}>
            Insert row
          </button>
        )}
      </form>
      {filters.length > 0 && (
        <ul class="chips" aria-label="Active filters">
          {filters.map((f, i) => (
            <li key={i}>
              {f.column} {f.op} {f.value}{' '}
              <button
                type="button"
                class="small"
                aria-label={`Remove filter on ${f.column}`}
                onClick={() => (setFilters(filters.filter((_, j) => j !== i)), setPage(0))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={columns.error ?? rows.error} />
      {(columns.loading || rows.loading) && <Loading what="rows" />}
      {rows.data && rows.data.rows.length === 0 && (
        <Empty>No rows{filters.length ? ' match these filters' : ' yet'}.</Empty>
      )}
      {rows.data && rows.data.rows.length > 0 && (
        <Grid
          // A new page, order or filter starts at the top; a reload after an edit keeps the place.
          key={`${page} ${JSON.stringify(sorting)} ${JSON.stringify(filters)}`}
          label={`Rows of ${table.name}`}
          columns={names.length ? names : Object.keys(rows.data.rows[0]!)}
          rows={rows.data.rows}
          sorting={sorting}
          onSort={(s) => (setSorting(s), setPage(0))}
          onRowAction={table.kind === 'table' ? setEditing : undefined}
          rowActionLabel="Edit"
        />
      )}
      <div class="pager" role="group" aria-label="Pages">
        <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span role="status">
          {rows.data
            ? `Rows ${count(rows.data.rows.length ? first + 1 : 0)}–${count(first + rows.data.rows.length)}${total !== null ? ` of ${count(total)}` : ''}`
            : ''}
        </span>
        <button
          type="button"
          disabled={!rows.data || (total !== null ? first + PAGE >= total : rows.data.rows.length < PAGE)}
          onClick={() => setPage(page + 1)}
        >
          Next
        </button>
        {pages !== null && pages > 1 && (
          <form
            class="inline"
            onSubmit={(e) => {
              e.preventDefault();
              const n = Number(new FormData(e.currentTarget).get('page'));
              if (Number.isInteger(n) && n >= 1 && n <= pages) setPage(n - 1);
            }}
          >
            <label class="inline">
              Go to page
              <input
                key={page}
                name="page"
                type="number"
                class="narrow"
                min={1}
                max={pages}
                defaultValue={String(page + 1)}
              />
              of {count(pages)}
            </label>
          </form>
        )}
      </div>
      {editing && (
        <RowDialog
          project={project}
          table={table}
          columns={cols}
          pk={pk}
          row={editing === 'new' ? null : editing}
          onDone={() => (setEditing(null), rows.reload())}
          onClose={() => setEditing(null)}
        />
      )}
    </div>
  );
}

interface RowDialogProps {
  project: Project;
  table: TableEntry;
  columns: ColumnInfo[];
  pk: ColumnInfo[];
  row: Row | null;
  onDone: () => void;
  onClose: () => void;
}

/** Insert (row null) or edit one row: only fields the user changed are sent; JSON columns get the JSON editor. */
function RowDialog({ project, table, columns, pk, row, onDone, onClose }: RowDialogProps) {
  const initial = (c: ColumnInfo) =>
    row
      ? row[c.name] === null
        ? ''
        : isJson(c.type)
          ? JSON.stringify(row[c.name], null, 2)
          : cellText(row[c.name])
      : '';
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(columns.map((c) => [c.name, initial(c)])),
  );
  const [nulls, setNulls] = useState<Record<string, boolean>>(() =>
    Object.fromEntries(columns.map((c) => [c.name, !!row && row[c.name] === null])),
  );
  const [changed, setChanged] = useState<Set<string>>(new Set());
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [run, busy, error, setError] = useAction();
  const target = `/rest/v1/${encodeURIComponent(table.name)}?${pk.map((c) => `${encodeURIComponent(c.name)}=eq.${encodeURIComponent(cellText(row?.[c.name]))}`).join('&')}`;
  // A PATCH or DELETE that matched no row answers 200 [] / 204: say so rather than close as if done.
  const changedOne = (rows: unknown) => {
    if (Array.isArray(rows) && rows.length === 0)
      throw new Error(
        'No row was changed: it is no longer there (changed or deleted meanwhile), or a policy hides it. Reload the rows.',
      );
  };
  const canEdit = !row || pk.length > 0;

  const set = (name: string, v: string) => {
    setValues({ ...values, [name]: v });
    setChanged(new Set(changed).add(name));
  };
  const body = () => {
    const out: Record<string, unknown> = {};
    for (const c of columns) {
      if (!changed.has(c.name)) continue;
      if (nulls[c.name]) out[c.name] = null;
      else if (isJson(c.type)) {
        try {
          out[c.name] = JSON.parse(values[c.name]!);
        } catch {
          throw new Error(`${c.name} is not valid JSON: fix the marked place in its editor.`);
        }
      } else if (c.type.endsWith('[]') && values[c.name]!.trim().startsWith('[')) {
        // An array as the dialog shows it (JSON): sent as a JSON array, which PostgREST stores as
        // the column's array; PostgreSQL's own {a,b} form is sent as text and read by PostgreSQL.
        try {
          out[c.name] = JSON.parse(values[c.name]!);
        } catch {
          throw new Error(`${c.name} is not a JSON array: write it as ["a", null] or as PostgreSQL's {a,NULL}.`);
        }
      } else out[c.name] = values[c.name];
    }
    return out;
  };

  return (
    <Dialog title={row ? `Edit row of ${table.name}` : `Insert a row into ${table.name}`} onClose={onClose} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            const payload = body();
            const headers = {
              prefer: 'return=representation',
              ...(table.schema === 'public' ? {} : { 'content-profile': table.schema }),
            };
            if (row) changedOne((await data(project.ref, 'PATCH', target, { body: payload, headers })).body);
            else
              await data(project.ref, 'POST', `/rest/v1/${encodeURIComponent(table.name)}`, { body: payload, headers });
            onDone();
          });
        }}
      >
        {!canEdit && (
          <p class="error">
            This table has no primary key, so a row cannot be named for an edit. Add one under Structure.
          </p>
        )}
        {columns.map((c) => (
          <div class="field" key={c.name}>
            <label for={`col-${c.name}`}>
              {c.name}{' '}
              <span class="muted">
                {c.type}
                {c.pk ? ', primary key' : ''}
                {!c.nullable ? ', not null' : ''}
                {c.default ? `, default ${c.default}` : ''}
              </span>
            </label>
            {isJson(c.type) ? (
              <Suspense fallback={<p class="muted">Loading the JSON editor…</p>}>
                <JsonEditor
                  language="json"
                  label={`${c.name} (JSON)`}
                  value={values[c.name]!}
                  onChange={(v) => set(c.name, v)}
                />
              </Suspense>
            ) : (
              <input
                id={`col-${c.name}`}
                value={values[c.name]}
                disabled={nulls[c.name]}
                placeholder={!row && c.default ? 'default' : ''}
                onInput={(e) => set(c.name, e.currentTarget.value)}
              />
            )}
            {c.nullable && (
              <label class="check">
                <input
                  type="checkbox"
                  checked={nulls[c.name]}
                  onChange={(e) => (
                    setNulls({ ...nulls, [c.name]: e.currentTarget.checked }), setChanged(new Set(changed).add(c.name))
                  )}
                />{' '}
                NULL
              </label>
            )}
          </div>
        ))}
        <ErrorNote error={error} />
        <div class="actions">
          {row && pk.length > 0 && (
            <button type="button" class="danger" onClick={() => (setError(null), setConfirmDelete(true))}>
              Delete row
            </button>
          )}
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy || !canEdit}>
            {busy ? 'Saving…' : row ? 'Save' : 'Insert'}
          </button>
        </div>
      </form>
      {confirmDelete && (
        <ConfirmDialog
          title="Delete this row?"
          text={`The row ${pk.map((c) => `${c.name} = ${cellText(row?.[c.name])}`).join(', ')} is deleted from ${table.name}.`}
          action="Delete row"
          onConfirm={async () => {
            const deleted = await data(project.ref, 'DELETE', target, {
              headers: {
                prefer: 'return=representation',
                ...(table.schema === 'public' ? {} : { 'content-profile': table.schema }),
              },
            });
            changedOne(deleted.body);
            onDone();
          }}
          onClose={() => setConfirmDelete(false)}
        />
      )}
    </Dialog>
  );
}
