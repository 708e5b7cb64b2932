/**
 * The SQL editor: statements run as the project's owner role through
 * POST /v1/projects/{ref}/database/query (format "arrays"): every result
 * set in a grid with its row count, the time taken, PostgreSQL's error with
 * its position underlined in the editor, a statement timeout, and the recent
 * queries of this browser tab (sessionStorage: a query may hold secrets).
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError, runSql, sqlRows, type Project, type SqlAnswer } from '../api.ts';
import { CodeEditor, type EditorHandle } from '../code-editor.tsx';
import { Grid } from '../grid.tsx';
import { ErrorNote, useLoad } from '../ui.tsx';

const HISTORY = 'hearth.studio.sql-history';
const HISTORY_MAX = 30;

function readHistory(): string[] {
  try {
    return JSON.parse(sessionStorage.getItem(HISTORY) ?? '[]');
  } catch {
    return [];
  }
}

export function SqlPage({ project }: { project: Project }) {
  const [query, setQuery] = useState(() => readHistory()[0] ?? 'select now();');
  const [timeout, setTimeoutSeconds] = useState('60');
  const [answer, setAnswer] = useState<SqlAnswer | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [history, setHistory] = useState(readHistory);
  const editor = useRef<EditorHandle | null>(null);
  const tables = useLoad(
    () =>
      sqlRows<{ t: string; cols: string[] }>(
        project.ref,
        `select c.relname as t, array_agg(a.attname::text order by a.attnum) as cols from pg_class c join pg_namespace n on n.oid = c.relnamespace
         join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
         where n.nspname = 'public' and c.relkind in ('r','v','m','p','f') group by c.relname`,
      ).then((rows) => Object.fromEntries(rows.filter((r) => Array.isArray(r.cols)).map((r) => [r.t, r.cols]))),
    [project.ref],
  );

  async function run() {
    const text = editor.current?.view.state.doc.toString() ?? query;
    if (!text.trim() || busy) return;
    setBusy(true);
    setError(null);
    editor.current?.clearErrors();
    const next = [text, ...history.filter((h) => h !== text)].slice(0, HISTORY_MAX);
    setHistory(next);
    sessionStorage.setItem(HISTORY, JSON.stringify(next));
    try {
      setAnswer(await runSql(project.ref, text, Math.round(Number(timeout) * 1000) || undefined));
    } catch (e) {
      setAnswer(null);
      setError(e);
      const position = e instanceof ApiError ? e.body?.position : null;
      if (typeof position === 'number') editor.current?.markError(position - 1, (e as ApiError).message);
    } finally {
      setBusy(false);
    }
  }

  const sqlError = error instanceof ApiError && error.code === 'sql_error' ? error.body : null;
  return (
    <section class="sql">
      <h1>SQL editor</h1>
      {tables.data !== undefined || tables.error ? (
        <CodeEditor
          language="sql"
          label="SQL query"
          value={query}
          onChange={setQuery}
          onRun={run}
          tables={tables.data}
          handle={(h) => (editor.current = h)}
        />
      ) : (
        <p class="muted">Loading the editor…</p>
      )}
      <div class="toolbar">
        <button type="button" class="primary" onClick={run} disabled={busy}>
          {busy ? 'Running…' : 'Run'} <kbd>Ctrl</kbd>+<kbd>Enter</kbd>
        </button>
        <label class="inline">
          Statement timeout (seconds)
          <input
            type="number"
            min="1"
            max="600"
            value={timeout}
            onInput={(e) => setTimeoutSeconds(e.currentTarget.value)}
            class="narrow"
          />
        </label>
        {answer && (
          <span role="status" class="muted">
            {answer.results.length} statement{answer.results.length === 1 ? '' : 's'} in {answer.duration_ms} ms
          </span>
        )}
      </div>
      {sqlError ? (
        <div class="error" role="alert" data-testid="sql-error">
          <strong>{sqlError.message}</strong> <span class="muted">SQLSTATE {sqlError.sqlstate}</span>
          {sqlError.position != null && <span> at character {sqlError.position}</span>}
          {sqlError.detail && <p>{sqlError.detail}</p>}
          {sqlError.hint && <p>Hint: {sqlError.hint}</p>}
        </div>
      ) : (
        <ErrorNote error={error} />
      )}
      {answer?.results.map((r, i) => (
        <div class="result" key={i}>
          <h2 class="result-head">
            Result {i + 1}: {r.command}
            {r.row_count !== null && ` · ${r.row_count} row${r.row_count === 1 ? '' : 's'}`}
          </h2>
          {r.columns.length > 0 && (
            // Columns by position: a result may name two columns alike (select 1 a, 2 a).
            <Grid
              label={`Result ${i + 1}`}
              columns={r.columns.map((_, n) => String(n))}
              headers={r.columns.map((c) => c.name)}
              rows={r.rows.map((v) => ({ ...v }))}
            />
          )}
        </div>
      ))}
      <h2>Recent queries</h2>
      {history.length === 0 ? (
        <p class="empty">Queries you run in this tab appear here.</p>
      ) : (
        <ul class="history">
          {history.map((h) => (
            <li key={h}>
              <button
                type="button"
                class="link"
                onClick={() => (setQuery(h), editor.current?.setText(h))}
                title="Load into the editor"
              >
                {h.length > 200 ? `${h.slice(0, 200)}…` : h}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
