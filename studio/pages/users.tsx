/**
 * The project's users through the GoTrue admin API (/auth/v1/admin, secret
 * key): search and pages, create and invite, recovery link, ban and unban,
 * sign out everywhere (Hearth's POST /admin/users/{id}/logout), delete.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { data, mgmt, type Project } from '../api.ts';
import { href } from '../router.ts';
import { ConfirmDialog, Dialog, Empty, ErrorNote, Loading, useAction, useLoad } from '../ui.tsx';

interface User {
  id: string;
  email: string | null;
  phone: string | null;
  created_at: string;
  last_sign_in_at: string | null;
  banned_until?: string | null;
  app_metadata?: { providers?: string[] };
  factors?: { id: string; factor_type: string; status: string }[];
}

const PER_PAGE = 50;
const when = (t: string | null | undefined) => (t ? new Date(t).toLocaleString() : '—');
const isBanned = (u: User) => !!u.banned_until && new Date(u.banned_until) > new Date();

export function UsersPage({ project }: { project: Project }) {
  const [page, setPage] = useState(1);
  const [search, setSearch] = useState('');
  const [filter, setFilter] = useState('');
  const [dialog, setDialog] = useState<'create' | 'invite' | null>(null);
  const [deleting, setDeleting] = useState<User | null>(null);
  const [notice, setNotice] = useState<ComponentChildren>('');
  const [run, busy, error] = useAction();
  const users = useLoad(async () => {
    const q = new URLSearchParams({ page: String(page), per_page: String(PER_PAGE), ...(filter ? { filter } : {}) });
    const { body, res } = await data<{ users: User[] }>(project.ref, 'GET', `/auth/v1/admin/users?${q}`);
    return { users: body.users, total: Number(res.headers.get('x-total-count') ?? body.users.length) };
  }, [project.ref, page, filter]);
  // Without an SMTP server, auth mail goes to the development mailbox: say so (and link to it), rather than "sent".
  const smtp = useLoad(
    async () =>
      (await mgmt<{ smtp_host: string | null }>('GET', `/v1/projects/${encodeURIComponent(project.ref)}/config/auth`))
        .smtp_host,
    [project.ref],
  );
  const mailed = (what: string, to: string): ComponentChildren =>
    smtp.data === null ? (
      <>
        {what} for {to} is in the <a href={href('p', project.ref, 'mailbox', to)}>development mailbox</a> (no SMTP
        server is set), not sent.
      </>
    ) : (
      `${what} sent to ${to}.`
    );
  const act = (label: ComponentChildren, f: () => Promise<unknown>) =>
    run(async () => {
      setNotice('');
      await f();
      setNotice(label);
      users.reload();
    });

  const pages = users.data ? Math.max(1, Math.ceil(users.data.total / PER_PAGE)) : 1;
  return (
    <section>
      <h1>Users</h1>
      <div class="toolbar">
        <form
          role="search"
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            setFilter(search.trim());
            setPage(1);
          }}
        >
          <label>
            Search by e-mail
            <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
          </label>
          <button type="submit">Search</button>
        </form>
        <button type="button" onClick={() => setDialog('create')}>
          Create user
        </button>
        <button type="button" class="primary" onClick={() => setDialog('invite')}>
          Invite user
        </button>
      </div>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorNote error={users.error ?? error} />
      {users.loading && !users.data && <Loading what="users" />}
      {users.data && users.data.users.length === 0 && (
        <Empty>{filter ? `No user matches "${filter}".` : 'No users yet: create or invite one.'}</Empty>
      )}
      {users.data && users.data.users.length > 0 && (
        <div class="scroll-x">
          <table class="list">
            <caption class="sr-only">Users</caption>
            <thead>
              <tr>
                {['E-mail', 'Phone', 'Created', 'Last sign-in', 'Providers', 'Factors', 'Status'].map((h) => (
                  <th scope="col" key={h}>
                    {h}
                  </th>
                ))}
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data.users.map((u) => (
                <tr key={u.id}>
                  <td>{u.email ?? ''}</td>
                  <td>{u.phone ?? ''}</td>
                  <td>{when(u.created_at)}</td>
                  <td>{when(u.last_sign_in_at)}</td>
                  <td>{(u.app_metadata?.providers ?? []).join(', ')}</td>
                  <td>{(u.factors ?? []).map((f) => `${f.factor_type} (${f.status})`).join(', ')}</td>
                  <td>{isBanned(u) ? <span class="badge danger">banned</span> : 'active'}</td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="small"
                      disabled={busy || !u.email || smtp.loading}
                      aria-label={`Send recovery link to ${u.email}`}
                      onClick={() =>
                        act(mailed('Recovery link', u.email!), () =>
                          data(project.ref, 'POST', '/auth/v1/recover', { body: { email: u.email } }),
                        )
                      }
                    >
                      Send recovery
                    </button>
                    <button
                      type="button"
                      class="small"
                      disabled={busy}
                      aria-label={`${isBanned(u) ? 'Unban' : 'Ban'} ${u.email}`}
                      onClick={() =>
                        act(
                          isBanned(u)
                            ? `${u.email} may sign in again.`
                            : `${u.email} is banned: they can neither sign in nor refresh a session.`,
                          () =>
                            data(project.ref, 'PUT', `/auth/v1/admin/users/${u.id}`, {
                              body: { ban_duration: isBanned(u) ? 'none' : '876000h' },
                            }),
                        )
                      }
                    >
                      {isBanned(u) ? 'Unban' : 'Ban'}
                    </button>
                    <button
                      type="button"
                      class="small"
                      disabled={busy}
                      aria-label={`Sign out everywhere: ${u.email}`}
                      onClick={() =>
                        act(
                          `${u.email} is signed out everywhere: their refresh tokens no longer work, and access tokens already issued expire within the hour.`,
                          () => data(project.ref, 'POST', `/auth/v1/admin/users/${u.id}/logout`),
                        )
                      }
                    >
                      Sign out everywhere
                    </button>
                    <button
                      type="button"
                      class="small danger"
                      aria-label={`Delete ${u.email}`}
                      onClick={() => setDeleting(u)}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="pager" role="group" aria-label="Pages">
        <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span role="status">{users.data ? `Page ${page} of ${pages} · ${users.data.total} users` : ''}</span>
        <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </div>
      {dialog && (
        <UserDialog
          project={project}
          kind={dialog}
          mailed={mailed}
          onClose={() => setDialog(null)}
          onDone={(msg) => (setDialog(null), setNotice(msg), users.reload())}
        />
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.email}?`}
          text="The user, their identities, factors and sessions are deleted."
          action="Delete user"
          onConfirm={async () => (
            await data(project.ref, 'DELETE', `/auth/v1/admin/users/${deleting.id}`),
            setNotice(`${deleting.email} deleted.`),
            users.reload()
          )}
          onClose={() => setDeleting(null)}
        />
      )}
    </section>
  );
}

function UserDialog({
  project,
  kind,
  mailed,
  onClose,
  onDone,
}: {
  project: Project;
  kind: 'create' | 'invite';
  mailed: (what: string, to: string) => ComponentChildren;
  onClose: () => void;
  onDone: (message: ComponentChildren) => void;
}) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [run, busy, error] = useAction();
  return (
    <Dialog title={kind === 'invite' ? 'Invite a user' : 'Create a user'} onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            if (kind === 'invite') await data(project.ref, 'POST', '/auth/v1/invite', { body: { email } });
            else
              await data(project.ref, 'POST', '/auth/v1/admin/users', {
                body: { email, password, email_confirm: true },
              });
            onDone(kind === 'invite' ? mailed('Invitation', email) : `${email} created.`);
          });
        }}
      >
        <p class="muted">
          {kind === 'invite'
            ? 'They get an e-mail with a link to set their password.'
            : 'The address is confirmed at once; tell them their password.'}
        </p>
        <label>
          E-mail
          <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} autoFocus />
        </label>
        {kind === 'create' && (
          <label>
            Password (10 to 128 characters)
            <input
              type="password"
              required
              minLength={10}
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
              autocomplete="new-password"
            />
          </label>
        )}
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {kind === 'invite' ? 'Send invitation' : 'Create user'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
