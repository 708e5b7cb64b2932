/**
 * CSV request bodies (Content-Type: text/csv, PostgREST's bulk insert): the
 * first line names the columns, each further line is a row. RFC 4180 quoting;
 * an unquoted empty field or NULL is SQL null, a quoted "" the empty string.
 */
import { fail } from '../errors.ts';

export function parseCsv(text: string): Record<string, unknown>[] {
  const records = splitRecords(text);
  if (!records.length) return [];
  const header = records[0].map((f) => f.value);
  return records.slice(1).map((fields, i) => {
    if (fields.length !== header.length) {
      throw fail('PGRST102', 'Invalid CSV body', {
        details: `Line ${i + 2} has ${fields.length} fields; the header has ${header.length}.`,
      });
    }
    return Object.fromEntries(
      header.map((name, j) => [
        name,
        !fields[j].quoted && (fields[j].value === '' || fields[j].value === 'NULL') ? null : fields[j].value,
      ]),
    );
  });
}

interface CsvField {
  value: string;
  quoted: boolean;
}

function splitRecords(text: string): CsvField[][] {
  const records: CsvField[][] = [];
  let record: CsvField[] = [];
  let i = 0;
  while (i <= text.length) {
    let value = '';
    let quoted = false;
    if (text[i] === '"') {
      quoted = true;
      i++;
      for (;;) {
        if (i >= text.length) throw fail('PGRST102', 'Invalid CSV body', { details: 'A quoted field is not closed.' });
        if (text[i] === '"' && text[i + 1] === '"') {
          value += '"';
          i += 2;
        } else if (text[i] === '"') break;
        else value += text[i++];
      }
      i++;
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') value += text[i++];
    }
    record.push({ value, quoted });
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text[i] === '\r') i++;
    i++; // past '\n' or the end
    if (!(record.length === 1 && !quoted && value === '')) records.push(record);
    record = [];
  }
  return records;
}
