/**
 * Outgoing auth mail. "A mailer is configured" means config/auth smtp_host is
 * set: messages then go out through nodemailer to that server (port 465 is
 * implicit TLS, other ports upgrade with STARTTLS when offered). Without
 * smtp_host every message is logged and kept in the project's development
 * mailbox (auth.dev_mailbox, listed by GET /v1/projects/{ref}/mailbox), so a
 * local user can still sign in by code; e-mail changes then apply at once.
 * The SMTP host is resolved first and its address must pass the same outbound
 * guard as webhooks (public unicast, or listed in HEARTH_OUTBOUND_ALLOW), so
 * project settings cannot reach internal services.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { lazy } from '../lazy.ts';

const nodemailer = lazy(async () => (await import('nodemailer')).default);
import { outboundAdvice, parseAllowList, refusalReason } from '../outbound/address.ts';
import type { Settings } from '../platform/settings-schema.ts';
import { now, type AuthContext } from './context.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export const mailerConfigured = (settings: Settings): boolean =>
  typeof settings.smtp_host === 'string' && settings.smtp_host.trim() !== '';

function sender(settings: Settings): string {
  const address = (settings.smtp_admin_email as string | null) || 'no-reply@hearth.local';
  const name = settings.smtp_sender_name as string | null;
  return name ? `"${name.replace(/["\\\r\n]/g, '')}" <${address}>` : address;
}

/** Sends through the configured SMTP server; throws what the server or the outbound guard refused. */
export async function sendSmtp(ctx: AuthContext, mail: Mail): Promise<void> {
  const s = ctx.settings;
  const host = String(s.smtp_host).trim();
  const address = isIP(host) ? host : (await lookup(host)).address;
  const refused = refusalReason(address, parseAllowList(ctx.p.config.outboundAllow));
  if (refused) throw new Error(`SMTP host ${host} resolves to ${address}, ${refused}; ${outboundAdvice(address)}`);
  const port = Number(s.smtp_port ?? 587);
  const transport = (await nodemailer()).createTransport({
    host: address,
    port,
    secure: port === 465,
    tls: { servername: isIP(host) ? undefined : host },
    auth: s.smtp_user ? { user: String(s.smtp_user), pass: String(s.smtp_pass ?? '') } : undefined,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  try {
    await transport.sendMail({ from: sender(s), to: mail.to, subject: mail.subject, text: mail.text });
  } finally {
    transport.close();
  }
}

/** Sends (or, without SMTP, keeps in the development mailbox). Failures are logged, never thrown: callers already answered. */
export async function deliver(ctx: AuthContext, mail: Mail): Promise<void> {
  try {
    if (mailerConfigured(ctx.settings)) {
      await sendSmtp(ctx, mail);
      ctx.p.log.info({ project: ctx.project.ref, to: mail.to, subject: mail.subject }, 'auth mail sent');
      return;
    }
    await ctx.project.sql`insert into auth.dev_mailbox (to_address, subject, body, created_at)
      values (${mail.to}, ${mail.subject}, ${mail.text}, ${now(ctx)})`;
    ctx.p.log.info(
      { project: ctx.project.ref, to: mail.to, subject: mail.subject, body: mail.text },
      'auth mail kept in the development mailbox (no smtp_host configured)',
    );
  } catch (err) {
    ctx.p.log.error(
      { err, project: ctx.project.ref, to: mail.to, subject: mail.subject },
      'auth mail could not be delivered',
    );
  }
}

export async function listMailbox(ctx: Pick<AuthContext, 'project'>, limit = 100) {
  return ctx.project.sql`select id::int as id, to_address as to, subject, body, created_at
    from auth.dev_mailbox order by id desc limit ${limit}`;
}
