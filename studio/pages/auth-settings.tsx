/**
 * config/auth through the management API: site URL, redirect allowlist,
 * sign-ups, SMTP, social providers, passkeys and rate limits, grouped. Only changed
 * fields are sent (secrets come back as ******** and are never sent back).
 */
import { useState } from 'preact/hooks';
import { mgmt, type Project } from '../api.ts';
import { ErrorNote, Loading, useAction, useLoad } from '../ui.tsx';

type Settings = Record<string, string | number | boolean | null>;

const GROUPS: [string, RegExp][] = [
  ['URLs', /^(site_url|uri_allow_list)$/],
  ['Sign-ups', /^(disable_signup|external_anonymous_users_enabled|mailer_autoconfirm)$/],
  ['SMTP (outgoing mail)', /^smtp_/],
  ['Social sign-in', /^(external_(?!anonymous_users_enabled$)|security_manual_linking_enabled$)/],
  ['Passkeys', /^webauthn_/],
  ['Rate limits', /^rate_limit_/],
];
const SECRET = '********';
/** The fields config/auth keeps secret (src/auth/settings.ts, `secret: true`): typed hidden also while unset (null). */
const SECRET_FIELD = /^(smtp_pass|external_\w+_secret)$/;

export function AuthSettingsPage({ project }: { project: Project }) {
  const path = `/v1/projects/${encodeURIComponent(project.ref)}/config/auth`;
  const settings = useLoad(() => mgmt<Settings>('GET', path), [project.ref]);
  const [changes, setChanges] = useState<Settings>({});
  const [saved, setSaved] = useState(false);
  const [run, busy, error] = useAction();
  if (settings.error) return <ErrorNote error={settings.error} />;
  if (!settings.data) return <Loading what="auth settings" />;
  const all = settings.data;
  const value = (k: string) => (k in changes ? changes[k] : all[k]);
  const set = (k: string, v: Settings[string]) => (setSaved(false), setChanges({ ...changes, [k]: v }));
  /** Back to untouched: nothing of this field is sent. */
  const unset = (k: string) => {
    const { [k]: _, ...rest } = changes;
    setChanges(rest);
  };
  const grouped = GROUPS.map(([title, re]) => [title, Object.keys(all).filter((k) => re.test(k))] as const);
  const other = Object.keys(all).filter((k) => !GROUPS.some(([, re]) => re.test(k)));

  const field = (k: string) => {
    const v = value(k);
    const original = all[k];
    const id = `auth-${k}`;
    if (typeof original === 'boolean')
      return (
        <label class="check" key={k}>
          <input type="checkbox" checked={!!v} onChange={(e) => set(k, e.currentTarget.checked)} /> {k}
        </label>
      );
    const secret = original === SECRET || SECRET_FIELD.test(k);
    const isSet = original === SECRET;
    return (
      <div class="field" key={k}>
        <label for={id}>{k}</label>
        <input
          id={id}
          type={(secret ? 'password' : typeof original === 'number' ? 'number' : 'text') as 'text'}
          value={isSet && !(k in changes) ? '' : v === null ? '' : String(v)}
          placeholder={isSet ? 'set (type to replace)' : ''}
          autocomplete="off"
          onInput={(e) => {
            const t = e.currentTarget.value;
            // A field typed in and emptied again is untouched: a saved secret is not erased, and an
            // emptied number does not fall back to its default behind a "Saved."
            if (t === '' && (isSet || typeof original === 'number')) return unset(k);
            const next = typeof original === 'number' ? Number(t) : t === '' && original === null ? null : t;
            if (next === original) unset(k);
            else set(k, next);
          }}
        />
      </div>
    );
  };

  return (
    <section>
      <h1>Auth settings</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            await mgmt('PATCH', path, changes);
            setChanges({});
            setSaved(true);
            settings.reload();
          });
        }}
      >
        {grouped.map(([title, keys]) =>
          keys.length ? (
            <fieldset key={title}>
              <legend>{title}</legend>
              {keys.map(field)}
              {title.startsWith('SMTP') && <TestMail project={project} />}
            </fieldset>
          ) : null,
        )}
        {other.length > 0 && (
          <fieldset>
            <legend>Other</legend>
            {other.map(field)}
          </fieldset>
        )}
        <ErrorNote error={error} />
        {saved && (
          <p class="notice" role="status">
            Saved.
          </p>
        )}
        <button type="submit" class="primary" disabled={busy || Object.keys(changes).length === 0}>
          Save changes
        </button>
      </form>
    </section>
  );
}

/** Sends a test message with the saved SMTP settings (POST config/auth/smtp-test). */
function TestMail({ project }: { project: Project }) {
  const [to, setTo] = useState('');
  const [sent, setSent] = useState('');
  const [run, busy, error] = useAction();
  return (
    <div class="inline test-mail">
      <label>
        Send a test mail to
        <input type="email" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
      </label>
      <button
        type="button"
        disabled={busy || !to}
        onClick={() =>
          run(
            async () => (
              setSent(''),
              await mgmt('POST', `/v1/projects/${encodeURIComponent(project.ref)}/config/auth/smtp-test`, { to }),
              setSent(`Test mail sent to ${to}.`)
            ),
          )
        }
      >
        Send test mail
      </button>
      {sent && <span role="status">{sent}</span>}
      <ErrorNote error={error} />
    </div>
  );
}
