/**
 * The data grid of the table editor and SQL results: TanStack Table for the
 * column model and sorting state, TanStack Virtual so only the rows in view
 * are in the DOM (a page of thousands of rows scrolls like ten). Sorting is
 * the caller's (server side) when `onSort` is given. Cells are text only.
 */
import { flexRender, getCoreRowModel, useReactTable, type ColumnDef, type SortingState } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef } from 'preact/hooks';
import { cellText } from './ui.tsx';

export type Row = Record<string, unknown>;

export interface GridProps {
  label: string;
  /** Column ids: the keys of a row. */
  columns: string[];
  /** The names shown in the header, when they are not the ids (default: the ids). */
  headers?: string[];
  rows: Row[];
  sorting?: SortingState;
  onSort?: (s: SortingState) => void;
  onRowAction?: (row: Row) => void;
  rowActionLabel?: string;
}

const ROW_HEIGHT = 30;

export function Grid(props: GridProps) {
  const columns = useMemo<ColumnDef<Row>[]>(
    () =>
      props.columns.map((name, i) => ({
        id: name,
        header: props.headers?.[i] ?? name,
        accessorFn: (r: Row) => r[name],
        cell: (c) => cellText(c.getValue()),
      })),
    [props.columns.join('\0'), props.headers?.join('\0')],
  );
  const table = useReactTable({
    data: props.rows,
    columns,
    getCoreRowModel: getCoreRowModel(),
    manualSorting: true,
    // A first click sorts ascending whatever the column's type (TanStack starts numbers descending).
    sortDescFirst: false,
    state: { sorting: props.sorting ?? [] },
    onSortingChange: (u) => props.onSort?.(typeof u === 'function' ? u(props.sorting ?? []) : u),
    enableSorting: !!props.onSort,
  });
  const scroller = useRef<HTMLDivElement>(null);
  const rows = table.getRowModel().rows;
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const items = virtual.getVirtualItems();
  const before = items.length ? items[0]!.start : 0;
  const after = items.length ? virtual.getTotalSize() - items[items.length - 1]!.end : 0;
  const span = props.columns.length + (props.onRowAction ? 1 : 0);

  return (
    <div class="grid" ref={scroller} tabIndex={0} role="region" aria-label={props.label}>
      <table>
        <thead>
          {table.getHeaderGroups().map((g) => (
            <tr key={g.id}>
              {props.onRowAction && (
                <th class="action-col">
                  <span class="sr-only">Actions</span>
                </th>
              )}
              {g.headers.map((h) => {
                const sorted = h.column.getIsSorted();
                return (
                  <th
                    key={h.id}
                    scope="col"
                    aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : undefined}
                  >
                    {props.onSort ? (
                      <button
                        type="button"
                        class="sort"
                        onClick={h.column.getToggleSortingHandler()}
                        title={`Sort by ${h.column.id}`}
                      >
                        {flexRender(h.column.columnDef.header, h.getContext())}
                        <span aria-hidden="true">{sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ''}</span>
                      </button>
                    ) : (
                      flexRender(h.column.columnDef.header, h.getContext())
                    )}
                  </th>
                );
              })}
            </tr>
          ))}
        </thead>
        <tbody>
          {before > 0 && (
            <tr aria-hidden="true">
              <td colSpan={span} style={{ height: `${before}px` }} />
            </tr>
          )}
          {items.map((item) => {
            const row = rows[item.index]!;
            return (
              <tr key={row.id} data-index={item.index}>
                {props.onRowAction && (
                  <td class="action-col">
                    <button
                      type="button"
                      class="small"
                      onClick={() => props.onRowAction!(row.original)}
                      aria-label={`${props.rowActionLabel ?? 'Open'} row ${item.index + 1}`}
                    >
                      {props.rowActionLabel ?? 'Open'}
                    </button>
                  </td>
                )}
                {row.getVisibleCells().map((c) => {
                  const v = c.getValue();
                  return (
                    <td key={c.id} class={v === null || v === undefined ? 'null' : ''}>
                      {cellText(v)}
                    </td>
                  );
                })}
              </tr>
            );
          })}
          {after > 0 && (
            <tr aria-hidden="true">
              <td colSpan={span} style={{ height: `${after}px` }} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
