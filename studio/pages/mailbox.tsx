/**
 * The development mailbox: the auth mail a project without an SMTP server
 * kept instead of sending (GET /v1/projects/{ref}/mailbox, newest first).
 * A mail's body is plain text and shown as text: only its http(s) links
 * become <a> elements, and its 6-digit code gets a copy button.
 */
import { useState } from 'preact/hooks';
import { mgmt, type Project } from '../api.ts';
import { CopyButton, Dialog, Empty, ErrorNote, Loading, useLoad } from '../ui.tsx';

interface Mail {
  id: number;
  to: string;
  subject: string;
  body: string;
  created_at: string;
}

/** How many of the newest mails the page reads (the filter works on these). */
const LIMIT = 200;
const LINK = /https?:\/\/[^\s<>"']+/g;
/** The code of src/auth/messages.ts, looked for outside the links (a link's token may hold six digits). */
const CODE = /\b\d{6}\b/;

const mailCode = (body: string) => body.replace(LINK, ' ').match(CODE)?.[0] ?? null;

/** The body as text nodes, with each http(s) link (less trailing punctuation) an <a>. */
function MailText({ body }: { body: string }) {
  const parts: (string | { url: string })[] = [];
  let at = 0;
  for (const m of body.matchAll(LINK)) {
    const url = m[0].replace(/[.,;:!?)\]]+$/, '');
    parts.push(body.slice(at, m.index), { url });
    at = m.index + url.length;
  }
  parts.push(body.slice(at));
  return (
    <pre class="mail-body">
      {parts.map((p, i) =>
        typeof p === 'string' ? (
          p
        ) : (
          <a key={i} href={p.url} target="_blank" rel="noopener noreferrer">
            {p.url}
          </a>
        ),
      )}
    </pre>
  );
}

export function MailboxPage({ project, rest }: { project: Project; rest: string[] }) {
  const [filter, setFilter] = useState(rest[0] ?? '');
  const [open, setOpen] = useState<Mail | null>(null);
  const mails = useLoad(
    () => mgmt<Mail[]>('GET', `/v1/projects/${encodeURIComponent(project.ref)}/mailbox?limit=${LIMIT}`),
    [project.ref],
  );
  // Whether mail goes out through SMTP instead (then nothing new arrives here); unknown if config/auth is refused.
  const smtp = useLoad(
    async () =>
      (await mgmt<{ smtp_host: string | null }>('GET', `/v1/projects/${encodeURIComponent(project.ref)}/config/auth`))
        .smtp_host,
    [project.ref],
  );
  const smtpSet = typeof smtp.data === 'string' && smtp.data.trim() !== '';
  const wanted = filter.trim().toLowerCase();
  const shown = (mails.data ?? []).filter((m) => m.to.toLowerCase().includes(wanted));

  return (
    <section>
      <h1>Mailbox</h1>
      <p class="muted">
        The auth mail this project kept instead of sending (sign-in codes, confirmations, invitations, recovery links),
        newest first: the {LIMIT} newest.
      </p>
      {smtpSet && (
        <p class="notice" role="status">
          An SMTP server is set ({smtp.data}): auth mail goes out through it, not here.
        </p>
      )}
      <div class="toolbar">
        <label>
          Filter by recipient
          <input type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        </label>
        <button type="button" onClick={() => (mails.reload(), smtp.reload())} disabled={mails.loading}>
          Refresh
        </button>
      </div>
      <ErrorNote error={mails.error} />
      {mails.loading && !mails.data && <Loading what="the mailbox" />}
      {mails.data && shown.length === 0 && (
        <Empty>
          {mails.data.length > 0
            ? `No mail to an address matching "${filter.trim()}".`
            : smtpSet
              ? 'No mail here: an SMTP server is set, so auth mail goes out through it instead.'
              : 'No mail yet. While no SMTP server is set (config/auth smtp_host), auth mail appears here instead of being sent.'}
        </Empty>
      )}
      {shown.length > 0 && (
        <div class="scroll-x">
          <table class="list">
            <caption class="sr-only">Mail, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">To</th>
                <th scope="col">Subject</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((m) => (
                <tr key={m.id}>
                  <td>{new Date(m.created_at).toLocaleString()}</td>
                  <td>{m.to}</td>
                  <td>
                    <button
                      type="button"
                      class="link"
                      aria-label={`Open "${m.subject}" to ${m.to}`}
                      onClick={() => setOpen(m)}
                    >
                      {m.subject}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open && <MailDialog mail={open} onClose={() => setOpen(null)} />}
    </section>
  );
}

function MailDialog({ mail, onClose }: { mail: Mail; onClose: () => void }) {
  const code = mailCode(mail.body);
  return (
    <Dialog title={mail.subject} onClose={onClose} wide>
      <dl class="facts">
        <dt>To</dt>
        <dd>{mail.to}</dd>
        <dt>Time</dt>
        <dd>{new Date(mail.created_at).toLocaleString()}</dd>
        {code && (
          <>
            <dt>Code</dt>
            <dd>
              <code class="otp">{code}</code> <CopyButton text={code} label="Copy the code" />
            </dd>
          </>
        )}
      </dl>
      <MailText body={mail.body} />
      <div class="actions">
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
