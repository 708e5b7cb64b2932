/**
 * CodeMirror 6 as a Preact component: SQL (PostgreSQL dialect, completion of
 * the project's table names) or JSON (with a parse linter: the JSON editor
 * for json/jsonb values). Errors are shown as lint diagnostics, so the SQL
 * editor underlines exactly where PostgreSQL says the error is.
 */
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { PostgreSQL, sql } from '@codemirror/lang-sql';
import { syntaxHighlighting } from '@codemirror/language';
import { linter, lintGutter, setDiagnostics } from '@codemirror/lint';
import { Compartment, EditorState } from '@codemirror/state';
import { EditorView, keymap } from '@codemirror/view';
import { classHighlighter } from '@lezer/highlight';
import { basicSetup } from 'codemirror';
import { useEffect, useRef } from 'preact/hooks';

const darkScheme = matchMedia('(prefers-color-scheme: dark)');

export interface EditorHandle {
  view: EditorView;
  /** Underlines from the 0-based offset to the end of its word (or a character) with the message. */
  markError(offset: number, message: string): void;
  clearErrors(): void;
  /** Replaces the text (a query loaded from the history) and focuses the editor. */
  setText(text: string): void;
}

export interface CodeEditorProps {
  /** The initial text; later changes go through the handle's setText. */
  value: string;
  language: 'sql' | 'json';
  label: string;
  onChange(value: string): void;
  onRun?: () => void;
  tables?: Record<string, string[]>;
  handle?: (h: EditorHandle) => void;
}

export function CodeEditor(props: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const latest = useRef(props);
  latest.current = props;
  const view = useRef<EditorView | null>(null);

  useEffect(() => {
    // The editor follows the system scheme as the page does: CodeMirror's own dark variants (cursor,
    // selection, tooltips) by its darkTheme facet, token colours by classes style.css colours per scheme.
    const scheme = new Compartment();
    const language =
      props.language === 'sql'
        ? [sql({ dialect: PostgreSQL, schema: props.tables, upperCaseKeywords: false })]
        : [json(), linter(jsonParseLinter())];
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          keymap.of([{ key: 'Mod-Enter', run: () => (latest.current.onRun?.(), true) }]),
          // The page's CSP admits CodeMirror's <style> elements by the nonce index.html carries.
          EditorView.cspNonce.of(document.querySelector<HTMLMetaElement>('meta[name="style-nonce"]')?.content ?? ''),
          basicSetup,
          syntaxHighlighting(classHighlighter),
          scheme.of(EditorView.darkTheme.of(darkScheme.matches)),
          lintGutter(),
          ...language,
          EditorView.contentAttributes.of({ 'aria-label': props.label }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) latest.current.onChange(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    const onScheme = () => v.dispatch({ effects: scheme.reconfigure(EditorView.darkTheme.of(darkScheme.matches)) });
    darkScheme.addEventListener('change', onScheme);
    props.handle?.({
      view: v,
      markError(offset, message) {
        const doc = v.state.doc;
        const from = Math.max(0, Math.min(offset, doc.length));
        const word = /^\w+/.exec(doc.sliceString(from, from + 64))?.[0].length ?? 1;
        const to = Math.min(doc.length, from + Math.max(1, word));
        v.dispatch(setDiagnostics(v.state, [{ from, to, severity: 'error', message }]), {
          selection: { anchor: from },
          scrollIntoView: true,
        });
      },
      clearErrors() {
        v.dispatch(setDiagnostics(v.state, []));
      },
      setText(text) {
        v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text }, selection: { anchor: text.length } });
        v.focus();
      },
    });
    return () => {
      darkScheme.removeEventListener('change', onScheme);
      v.destroy();
    };
  }, []);

  return <div class={`code-editor ${props.language}`} ref={host} />;
}
