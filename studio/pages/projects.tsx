/** Projects of the signed-in account's organizations: list, create, delete (with a typed confirmation). */
import { useEffect, useState } from 'preact/hooks';
import { mgmt, type Project } from '../api.ts';
import { go, href } from '../router.ts';
import { ConfirmDialog, Empty, ErrorNote, Loading, useAction, useLoad } from '../ui.tsx';

interface Organization {
  id: string;
  name: string;
  role: string;
}

export function ProjectsPage() {
  const projects = useLoad(() => mgmt<Project[]>('GET', '/v1/projects'), []);
  const orgs = useLoad(() => mgmt<Organization[]>('GET', '/v1/organizations'), []);
  const [name, setName] = useState('');
  const [org, setOrg] = useState('');
  const [deleting, setDeleting] = useState<Project | null>(null);
  const [run, busy, error] = useAction();
  useEffect(() => {
    document.title = 'Projects · Hearth Studio';
  }, []);
  const orgName = (id: string) => orgs.data?.find((o) => o.id === id)?.name ?? '';
  const canCreate = (orgs.data ?? []).filter((o) => o.role === 'owner' || o.role === 'admin');

  return (
    <section class="page">
      <h1>Projects</h1>
      <ErrorNote error={projects.error ?? orgs.error} />
      {projects.loading && !projects.data && <Loading what="projects" />}
      {projects.data && projects.data.length === 0 && <Empty>No projects yet: create one below.</Empty>}
      {projects.data && projects.data.length > 0 && (
        <table class="list">
          <caption class="sr-only">Your projects</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Reference</th>
              <th scope="col">Organization</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {projects.data.map((p) => (
              <tr key={p.ref}>
                <td>
                  <a href={href('p', p.ref)}>{p.name}</a>
                  {p.is_default && <span class="badge">default</span>}
                </td>
                <td>
                  <code>{p.ref}</code>
                </td>
                <td>{orgName(p.organization_id)}</td>
                <td>{new Date(p.created_at).toLocaleString()}</td>
                <td>
                  {!p.is_default && (
                    <button
                      type="button"
                      class="danger small"
                      onClick={() => setDeleting(p)}
                      aria-label={`Delete project ${p.name}`}
                    >
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>New project</h2>
      {orgs.data && canCreate.length === 0 ? (
        <p class="muted">Only owners and admins of an organization can create projects in it.</p>
      ) : (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              const p = await mgmt<Project>('POST', '/v1/projects', { name, organization_id: org || canCreate[0]?.id });
              setName('');
              go('p', p.ref);
            });
          }}
        >
          <label>
            Name
            <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Organization
            <select value={org || canCreate[0]?.id} onChange={(e) => setOrg(e.currentTarget.value)}>
              {canCreate.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create project'}
          </button>
        </form>
      )}
      <ErrorNote error={error} />
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.name}?`}
          text={`This drops the project's database with every table, user and file record. It cannot be undone.`}
          confirmWord={deleting.ref}
          action="Delete project"
          onConfirm={async () => {
            await mgmt('DELETE', `/v1/projects/${encodeURIComponent(deleting.ref)}`, { confirm: deleting.ref });
            projects.reload();
          }}
          onClose={() => setDeleting(null)}
        />
      )}
    </section>
  );
}
