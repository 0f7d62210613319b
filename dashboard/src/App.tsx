// The shell: sign-in when there is no session, else the header (workspace switcher, the
// workspace's pages, sign out) and the page the address names.
import { lazy, Suspense, useEffect, useRef, useState, type ReactNode } from 'react';
import { useSession, signOut } from './session';
import { Link, Redirect, useRoute } from './router';
import { SignIn } from './pages/SignIn';
import { Home, Workspaces, WorkspaceSwitcher } from './pages/Workspaces';
import { People } from './pages/People';
import { Person } from './pages/Person';
import { ApiKeys } from './pages/ApiKeys';
import { Settings } from './pages/Settings';
import { Channels } from './pages/Channels';
import { Members } from './pages/Members';
import { Events } from './pages/Events';
import { Suppressions } from './pages/Suppressions';
import { Campaigns } from './pages/Campaigns';
import { Webhooks } from './pages/Webhooks';
import { List, Lists } from './pages/Lists';
import { Topics } from './pages/Topics';
import { SegmentPage, Segments } from './pages/Segments';

// The campaign builder, the template editor and the analytics (with its charts) are loaded when first opened (the initial
// JavaScript stays small).
const CampaignBuilder = lazy(() => import('./pages/CampaignBuilder').then((m) => ({ default: m.CampaignBuilder })));
const Templates = lazy(() => import('./pages/Templates').then((m) => ({ default: m.Templates })));
// A campaign's analytics, with its chart library.
const CampaignAnalytics = lazy(() => import('./pages/CampaignAnalytics').then((m) => ({ default: m.CampaignAnalytics })));
const Analytics = lazy(() => import('./pages/Analytics').then((m) => ({ default: m.Analytics })));

const PAGES = [
  { path: 'campaigns', label: 'Campaigns' },
  { path: 'templates', label: 'Templates' },
  { path: 'people', label: 'People' },
  { path: 'lists', label: 'Lists' },
  { path: 'events', label: 'Events' },
  { path: 'keys', label: 'API keys' },
  { path: 'channels', label: 'Channels' },
  { path: 'suppressions', label: 'Suppressions' },
  { path: 'members', label: 'Members' },
  { path: 'settings', label: 'Settings' },
] as const;

export function App() {
  const { token, notice } = useSession();
  const { path } = useRoute();
  const main = useRef<HTMLElement>(null);

  // On a new page (not the first one loaded, where the skip link comes first), focus its
  // heading: screen readers announce it, the keyboard starts there.
  const first = useRef(true);
  // At phone width the pages and sign-out are behind a menu button; a new page closes it.
  const [menu, setMenu] = useState(false);
  useEffect(() => {
    if (!first.current) main.current?.querySelector<HTMLElement>('h1')?.focus();
    first.current = false;
    setMenu(false);
  }, [path, token]);

  if (!token) {
    return (
      <main ref={main} className="signin">
        <SignIn notice={notice} />
      </main>
    );
  }

  const ws = /^\/w\/([^/]+)(?:\/([^/]+))?/.exec(path);
  const workspaceId = ws?.[1];
  return (
    <>
      <a className="skip" href="#main">Skip to content</a>
      <header className="top" onKeyDown={(e) => e.key === 'Escape' && setMenu(false)}>
        <Link to="/" className="brand">Herald</Link>
        <WorkspaceSwitcher current={workspaceId} />
        <button type="button" className="menu" aria-expanded={menu} aria-controls="header-pages" onClick={() => setMenu(!menu)}>Menu</button>
        <div id="header-pages" className={menu ? 'pages open' : 'pages'}>
          {workspaceId && (
            <nav aria-label="Workspace pages">
              {PAGES.map((p) => (
                <Link key={p.path} to={`/w/${workspaceId}/${p.path}`} aria-current={ws?.[2] === p.path ? 'page' : undefined}>
                  {p.label}
                </Link>
              ))}
            </nav>
          )}
          <button type="button" className="link" onClick={() => signOut()}>Sign out</button>
        </div>
      </header>
      <main id="main" ref={main}>
        <Suspense fallback={<p className="muted" role="status">Loading the page…</p>}>
          <Page path={path} />
        </Suspense>
      </main>
    </>
  );
}

function Page({ path }: { path: string }) {
  if (path === '/') return <Home />;
  if (path === '/workspaces') return <Workspaces />;
  // A workspace's page: /w/<workspace>[/<page>[/<id>[/analytics]]].
  const [, workspaceId, page, id, sub] = /^\/w\/([^/]+)(?:\/([^/]+)(?:\/([^/]+)(?:\/(analytics))?)?)?$/.exec(path) ?? [];
  if (workspaceId) {
    const shown = sub ? page === 'campaigns' && <CampaignAnalytics workspaceId={workspaceId} campaignId={id!} /> : workspacePage(workspaceId, page, id);
    if (shown) return shown;
  }
  return (
    <>
      <h1 tabIndex={-1}>Page not found</h1>
      <p>
        There is no page at this address. <Link to="/">Go to your workspace</Link>.
      </p>
    </>
  );
}

/** The page at /w/<workspaceId>[/<page>[/<id>]], or null where there is none. */
function workspacePage(workspaceId: string, page: string | undefined, id: string | undefined): ReactNode {
  if (page === undefined) return <Redirect to={`/w/${workspaceId}/people`} />;
  if (id !== undefined) {
    if (page === 'campaigns') return id === 'new' ? <CampaignBuilder workspaceId={workspaceId} /> : <CampaignBuilder workspaceId={workspaceId} campaignId={id} />;
    if (page === 'templates') return <Templates workspaceId={workspaceId} templateId={id} />;
    if (page === 'people') return <Person workspaceId={workspaceId} personId={id} />;
    if (page === 'lists') return <List workspaceId={workspaceId} listId={id} />;
    if (page === 'segments') return <SegmentPage workspaceId={workspaceId} segmentId={id} />;
    return null;
  }
  switch (page) {
    case 'campaigns': return <Campaigns workspaceId={workspaceId} />;
    case 'templates': return <Templates workspaceId={workspaceId} />;
    case 'people': return <People workspaceId={workspaceId} />;
    case 'keys': return <ApiKeys workspaceId={workspaceId} />;
    case 'webhooks': return <Webhooks workspaceId={workspaceId} />;
    case 'channels': return <Channels workspaceId={workspaceId} />;
    case 'settings': return <Settings workspaceId={workspaceId} />;
    case 'members': return <Members workspaceId={workspaceId} />;
    case 'events': return <Events workspaceId={workspaceId} />;
    case 'analytics': return <Analytics workspaceId={workspaceId} />;
    case 'suppressions': return <Suppressions workspaceId={workspaceId} />;
    case 'lists': return <Lists workspaceId={workspaceId} />;
    case 'topics': return <Topics workspaceId={workspaceId} />;
    case 'segments': return <Segments workspaceId={workspaceId} />;
    default: return null;
  }
}
