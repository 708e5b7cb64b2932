/**
 * The top-level statements of a SQL script, told apart as psql does: a
 * semicolon ends one, except inside quotes ('...', E'...', "...", $tag$...$tag$),
 * comments (-- and nested /* *\/), parentheses, or the BEGIN ... END body of a
 * CREATE FUNCTION or PROCEDURE written in SQL (BEGIN ATOMIC; psql's own
 * heuristic: within such a statement BEGIN, and CASE inside it, open a block
 * that END closes). Enough to find what a statement is, not to parse it.
 */

export interface Statement {
  /** Its first words (up to four), lower case. */
  words: string[];
  /** The 1-based line it starts on. */
  line: number;
}

const WORD = /[A-Za-z_\u0080-\uffff][\w$\u0080-\uffff]*/y;
const DOLLAR_QUOTE = /\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$/y;

/** Where a quoted text opened at `start` ends (past its closing quote); a doubled quote is one character. */
function quoteEnd(text: string, start: number, quote: string, backslashEscapes: boolean): number {
  for (let j = start + 1; j < text.length; j++) {
    if (backslashEscapes && text[j] === '\\') j++;
    else if (text[j] === quote) {
      if (text[j + 1] !== quote) return j + 1;
      j++;
    }
  }
  return text.length;
}

/** Where a block comment opened at `start` ends; block comments nest in PostgreSQL. */
function commentEnd(text: string, start: number): number {
  let depth = 0;
  let j = start;
  while (j < text.length) {
    if (text.startsWith('/*', j)) {
      depth++;
      j += 2;
    } else if (text.startsWith('*/', j)) {
      j += 2;
      if (--depth === 0) return j;
    } else j++;
  }
  return j;
}

/** CREATE [OR REPLACE] FUNCTION|PROCEDURE: the statements whose body may be BEGIN ATOMIC ... END. */
function createsRoutine([a, b, c, d]: string[]): boolean {
  const routine = (w: string | undefined) => w === 'function' || w === 'procedure';
  return a === 'create' && (routine(b) || (b === 'or' && c === 'replace' && routine(d)));
}

export function topLevelStatements(text: string): Statement[] {
  const out: Statement[] = [];
  let current: (Statement & { blocks: number; parens: number }) | null = null;
  let line = 1;
  let i = 0;
  const skipTo = (end: number) => {
    for (; i < end; i++) if (text[i] === '\n') line++;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      line++;
      i++;
      continue;
    }
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (text.startsWith('--', i)) {
      const end = text.indexOf('\n', i);
      skipTo(end === -1 ? text.length : end);
      continue;
    }
    if (text.startsWith('/*', i)) {
      skipTo(commentEnd(text, i));
      continue;
    }
    if (!current) {
      current = { words: [], line, blocks: 0, parens: 0 };
      out.push(current);
    }
    WORD.lastIndex = i;
    DOLLAR_QUOTE.lastIndex = i;
    const word = WORD.exec(text)?.[0];
    const dollar = word ? undefined : DOLLAR_QUOTE.exec(text)?.[0];
    if (word) {
      i += word.length;
      const lower = word.toLowerCase();
      // E'...' is a string with backslash escapes, not a word.
      if (lower === 'e' && text[i] === "'") {
        skipTo(quoteEnd(text, i, "'", true));
        continue;
      }
      if (current.words.length < 4) current.words.push(lower);
      if (current.parens === 0 && createsRoutine(current.words)) {
        if (lower === 'begin' || (lower === 'case' && current.blocks > 0)) current.blocks++;
        else if (lower === 'end' && current.blocks > 0) current.blocks--;
      }
    } else if (dollar) {
      const end = text.indexOf(dollar, i + dollar.length);
      skipTo(end === -1 ? text.length : end + dollar.length);
    } else if (c === "'" || c === '"') {
      skipTo(quoteEnd(text, i, c, false));
    } else {
      if (c === '(') current.parens++;
      else if (c === ')') current.parens = Math.max(0, current.parens - 1);
      else if (c === ';' && current.parens === 0 && current.blocks === 0) current = null;
      i++;
    }
  }
  return out.map(({ words, line }) => ({ words, line }));
}
