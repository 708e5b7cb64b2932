/**
 * The shape of one per-project settings area (config/auth, config/storage,
 * config/workflows): each field's type, default and bounds. A domain declares
 * its fields in its own settings.ts; project-config.ts validates PATCHes
 * against them.
 */
import { outboundAdvice, targetRefusal, type AllowList } from '../outbound/address.ts';

/** What a field's check may need beyond the value. */
export interface CheckContext {
  /** The platform's outbound allow list (HEARTH_OUTBOUND_ALLOW). */
  outboundAllow: AllowList;
  /** The schemas of the project's database, read for a PATCH that sets config/api db_schema. */
  projectSchemas?: ReadonlySet<string>;
}

export type FieldSpec =
  | {
      type: 'string';
      default: string | null;
      maxLength?: number;
      secret?: boolean;
      check?: (v: string, ctx: CheckContext) => string | null;
    }
  | { type: 'integer'; default: number | null; min: number; max: number }
  | { type: 'boolean'; default: boolean };

export type AreaSpec = Record<string, FieldSpec>;

export type Settings = Record<string, string | number | boolean | null>;

/**
 * Checks for fields holding a server the platform connects to (a social
 * sign-in issuer URL, the SMTP host): the one save-time check of every stored
 * outbound target (src/outbound/address.ts targetRefusal), ending with what
 * the operator can do about a refusal (outboundAdvice).
 */
function refusedTarget(host: string, ctx: CheckContext): string | null {
  const refused = targetRefusal(host, ctx.outboundAllow);
  return refused && `${refused}; ${outboundAdvice(host)}`;
}

export function outboundUrl(v: string, ctx: CheckContext): string | null {
  const why = httpUrl(v);
  if (why || v === '') return why;
  const host = new URL(v).hostname;
  const refused = refusedTarget(host, ctx);
  return refused && `points at ${host}, ${refused}`;
}

export function outboundHost(v: string, ctx: CheckContext): string | null {
  const host = v.trim();
  if (host === '') return null;
  const refused = refusedTarget(host, ctx);
  return refused && `is ${host}, ${refused}`;
}

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
