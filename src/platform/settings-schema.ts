/**
 * The shape of one per-project settings area (config/auth, config/storage,
 * config/workflows): each field's type, default and bounds. A domain declares
 * its fields in its own settings.ts; project-config.ts validates PATCHes
 * against them.
 */
export type FieldSpec =
  | { type: 'string'; default: string | null; maxLength?: number; secret?: boolean; check?: (v: string) => string | null }
  | { type: 'integer'; default: number | null; min: number; max: number }
  | { type: 'boolean'; default: boolean };

export type AreaSpec = Record<string, FieldSpec>;

export type Settings = Record<string, string | number | boolean | null>;

/** A check for fields holding an absolute http(s) URL. */
export function httpUrl(v: string): string | null {
  if (v === '') return null;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:' ? null : 'must be an http(s) URL';
  } catch {
    return 'must be an absolute URL such as https://app.example.com';
  }
}
