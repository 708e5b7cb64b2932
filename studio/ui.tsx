/** Small shared pieces: loading data, showing errors, confirming, copying. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

export interface Loaded<T> {
  data?: T;
  error?: unknown;
  loading: boolean;
  reload: () => void;
}
/** Runs `load` when `deps` change (and on reload()); the last answer wins. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ data: s.data, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/** What went wrong and, where we know, what to do about it. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    // Only the management API's role refusal is about the organization; a 403 of the data
    // plane (PostgreSQL's 42501, a storage policy) is about grants and policies.
    const hint =
      error.status === 403 && error.code === 'forbidden'
        ? ' Your role in this organization does not allow this; ask an owner or admin.'
        : '';
    const details =
      error.body && typeof error.body === 'object'
        ? [error.body.details, error.body.detail, error.body.hint].filter(Boolean).join(' ')
        : '';
    // database/query's errors carry code sql_error and PostgreSQL's own code as sqlstate: show the one that says what failed.
    const code = typeof error.body?.sqlstate === 'string' ? error.body.sqlstate : error.code;
    return `${error.message}${details ? ` ${details}` : ''} (${code})${hint}`;
  }
  if (error instanceof TypeError) return 'The server could not be reached. Is Hearth still running?';
  return error instanceof Error ? error.message : String(error);
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {errorText(error)}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** Runs an action, keeping its error to show and its busy state for the button. */
export function useAction(): [(f: () => Promise<unknown>) => Promise<boolean>, boolean, unknown, (e: unknown) => void] {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (f: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await f();
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return [run, busy, error, setError];
}

/**
 * A modal dialog (the native <dialog>: focus kept inside, Escape closes);
 * when it goes, focus goes back to what opened it.
 */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current!;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!d.open) d.showModal();
    const close = () => props.onClose();
    d.addEventListener('close', close);
    return () => {
      d.removeEventListener('close', close);
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog ref={ref} class={props.wide ? 'wide' : ''} aria-labelledby={titleId}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/** The confirm step for something that cannot be undone: type the name to enable the button. */
export function ConfirmDialog(props: {
  title: string;
  text: string;
  confirmWord?: string;
  action: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}) {
  const [typed, setTyped] = useState('');
  const [run, busy, error] = useAction();
  const ok = !props.confirmWord || typed === props.confirmWord;
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <form
        method="dialog"
        onSubmit={async (e) => {
          e.preventDefault();
          if (ok && (await run(props.onConfirm))) props.onClose();
        }}
      >
        <p>{props.text}</p>
        {props.confirmWord && (
          <label>
            Type <code>{props.confirmWord}</code> to confirm
            <input value={typed} onInput={(e) => setTyped(e.currentTarget.value)} autoFocus autocomplete="off" />
          </label>
        )}
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="danger" disabled={!ok || busy}>
            {busy ? 'Working…' : props.action}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export async function copyText(text: string): Promise<void> {
  await navigator.clipboard.writeText(text);
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      aria-label={label}
      onClick={async () => {
        await copyText(text).catch(() => {});
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? 'Copied' : 'Copy'}
    </button>
  );
}

/** A value from the database as text: never HTML (Preact sets text nodes), JSON for objects. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
