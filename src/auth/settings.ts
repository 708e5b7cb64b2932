import { httpUrl, type AreaSpec } from '../platform/settings-schema.ts';

/** config/auth fields; names follow the Supabase Management API. */
export const authSettings: AreaSpec = {
  site_url: { type: 'string', default: 'http://localhost:3000', maxLength: 2048, check: httpUrl },
  uri_allow_list: { type: 'string', default: '', maxLength: 8192 },
  rate_limit_signups: { type: 'integer', default: 30, min: 0, max: 1_000_000 },
  rate_limit_anonymous_users: { type: 'integer', default: 30, min: 0, max: 1_000_000 },
  /** /otp and /recover requests per client IP per hour (each may send one e-mail). */
  rate_limit_email_sent: { type: 'integer', default: 60, min: 0, max: 1_000_000 },
  smtp_host: { type: 'string', default: null, maxLength: 255 },
  smtp_port: { type: 'integer', default: 587, min: 1, max: 65535 },
  smtp_user: { type: 'string', default: null, maxLength: 255 },
  smtp_pass: { type: 'string', default: null, maxLength: 1024, secret: true },
  smtp_admin_email: { type: 'string', default: null, maxLength: 320 },
  smtp_sender_name: { type: 'string', default: null, maxLength: 255 },
};
