/** Hearth Studio: sign-in, then the projects and each project's pages. */
import './style.css';
import { render } from 'preact';
import { lazy, Suspense } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import { mgmt, onSessionChange, signedIn, signOut, type Project } from './api.ts';
import { ProjectsPage } from './pages/projects.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { SignInPage } from './pages/signin.tsx';
import { href, useRoute } from './router.ts';
import { ErrorNote, Loading, useLoad } from './ui.tsx';

// Pages with heavy libraries load when first opened (CodeMirror is most of the weight).
const SqlPage = lazy(() => import('./pages/sql.tsx').then((m) => m.SqlPage));
const TablesPage = lazy(() => import('./pages/tables.tsx').then((m) => m.TablesPage));
const UsersPage = lazy(() => import('./pages/users.tsx').then((m) => m.UsersPage));
const MailboxPage = lazy(() => import('./pages/mailbox.tsx').then((m) => m.MailboxPage));
const AuthSettingsPage = lazy(() => import('./pages/auth-settings.tsx').then((m) => m.AuthSettingsPage));
const StoragePage = lazy(() => import('./pages/storage.tsx').then((m) => m.StoragePage));

const SECTIONS: [string, string][] = [
  ['', 'Overview'],
  ['tables', 'Table editor'],
  ['sql', 'SQL editor'],
  ['users', 'Users'],
  ['mailbox', 'Mailbox'],
  ['auth', 'Auth settings'],
  ['storage', 'Storage'],
];

function ProjectShell({ projectRef, section, rest }: { projectRef: string; section: string; rest: string[] }) {
  const project = useLoad(() => mgmt<Project>('GET', `/v1/projects/${encodeURIComponent(projectRef)}`), [projectRef]);
  useEffect(() => {
    if (project.data)
      document.title = `${SECTIONS.find((s) => s[0] === section)?.[1] ?? ''} · ${project.data.name} · Hearth Studio`;
  }, [project.data, section]);
  if (project.error) return <ErrorNote error={project.error} />;
  if (!project.data) return <Loading what="the project" />;
  const p = project.data;
  return (
    <div class="project">
      <nav class="sections" aria-label="Project">
        <p class="project-name">{p.name}</p>
        <ul>
          {SECTIONS.map(([s, label]) => (
            <li key={s}>
              <a href={s ? href('p', p.ref, s) : href('p', p.ref)} aria-current={s === section ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="page">
        <Suspense fallback={<Loading what="the page" />}>
          {section === '' && <OverviewPage project={p} />}
          {section === 'tables' && <TablesPage project={p} rest={rest} />}
          {section === 'sql' && <SqlPage project={p} />}
          {section === 'users' && <UsersPage project={p} />}
          {section === 'mailbox' && <MailboxPage project={p} rest={rest} />}
          {section === 'auth' && <AuthSettingsPage project={p} />}
          {section === 'storage' && <StoragePage project={p} rest={rest} />}
        </Suspense>
      </div>
    </div>
  );
}

function App() {
  const [, setTick] = useState(0);
  useEffect(() => onSessionChange(() => setTick((t) => t + 1)), []);
  const route = useRoute();
  if (!signedIn()) return <SignInPage />;
  return (
    <>
      {/* Routes live in the hash, so the skip link moves focus itself rather than navigating to #main. */}
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')!.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <a href="#/" class="brand">
          Hearth Studio
        </a>
        <button type="button" onClick={() => ((location.hash = '#/'), signOut())}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {route[0] === 'p' && route[1] ? (
          <ProjectShell projectRef={route[1]} section={route[2] ?? ''} rest={route.slice(3)} />
        ) : (
          <ProjectsPage />
        )}
      </main>
    </>
  );
}

const root = document.getElementById('app')!;
root.textContent = ''; // index.html's "Loading Hearth Studio…", shown until this script runs
render(<App />, root);
