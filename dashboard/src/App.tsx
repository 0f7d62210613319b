// The shell: sign-in when there is no session, else the header (workspace switcher, the
// workspace's pages, sign out) and the page the address names.
import { lazy, Suspense, useEffect, useRef, useState } from 'react';
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

// The campaign builder and the template editor are loaded when first opened (the initial
// JavaScript stays small).
const CampaignBuilder = lazy(() => import('./pages/CampaignBuilder').then((m) => ({ default: m.CampaignBuilder })));
const Templates = lazy(() => import('./pages/Templates').then((m) => ({ default: m.Templates })));

const PAGES = [
  { path: 'campaigns', label: 'Campaigns' },
  { path: 'templates', label: 'Templates' },
  { path: 'people', label: 'People' },
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
  let m: RegExpExecArray | null;
  if (path === '/') return <Home />;
  if (path === '/workspaces') return <Workspaces />;
  if ((m = /^\/w\/([^/]+)\/campaigns$/.exec(path))) return <Campaigns workspaceId={m[1]!} />;
  if ((m = /^\/w\/([^/]+)\/campaigns\/new$/.exec(path))) return <CampaignBuilder workspaceId={m[1]!} />;
  if ((m = /^\/w\/([^/]+)\/campaigns\/([^/]+)$/.exec(path))) return <CampaignBuilder workspaceId={m[1]!} campaignId={m[2]!} />;
  if ((m = /^\/w\/([^/]+)\/templates$/.exec(path))) return <Templates workspaceId={m[1]!} />;
  if ((m = /^\/w\/([^/]+)\/templates\/([^/]+)$/.exec(path))) return <Templates workspaceId={m[1]!} templateId={m[2]!} />;
  if ((m = /^\/w\/([^/]+)\/people$/.exec(path))) return <People workspaceId={m[1]!} />;
  if ((m = /^\/w\/([^/]+)\/people\/([^/]+)$/.exec(path))) return <Person workspaceId={m[1]!} personId={m[2]!} />;
  if ((m = /^\/w\/([^/]+)\/keys$/.exec(path))) return <ApiKeys workspaceId={m[1]!} />;
  if ((m = /^\/w\/([^/]+)\/channels$/.exec(path))) return <Channels workspaceId={m[1]!} />;
  if ((m = /^\/w\/([^/]+)\/settings$/.exec(path))) return <Settings workspaceId={m[1]!} />;
  if ((m = /^\/w\/([^/]+)\/members$/.exec(path))) return <Members workspaceId={m[1]!} />;
  if ((m = /^\/w\/([^/]+)\/events$/.exec(path))) return <Events workspaceId={m[1]!} />;
  if ((m = /^\/w\/([^/]+)\/suppressions$/.exec(path))) return <Suppressions workspaceId={m[1]!} />;
  if ((m = /^\/w\/([^/]+)$/.exec(path))) return <Redirect to={`/w/${m[1]}/people`} />;
  return (
    <>
      <h1 tabIndex={-1}>Page not found</h1>
      <p>
        There is no page at this address. <Link to="/">Go to your workspace</Link>.
      </p>
    </>
  );
}
