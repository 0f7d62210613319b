// People of a workspace: counts by status, search by name or email, a status filter and
// paging, all kept in the address (back and reload keep them).
import { api, call, type Schemas } from '../api';
import { Link, navigate, useRoute, withQuery } from '../router';
import { Empty, Loaded, Pager, SearchForm, TableBox, useLoad, when } from '../ui';
import { PERSON_STATUSES } from '../enums';

const LIMIT = 25;
type Person = Schemas['DashboardPerson'];

export const displayName = (p: Person) => [p.first_name, p.last_name].filter(Boolean).join(' ') || p.email || p.external_id;

export function People({ workspaceId }: { workspaceId: string }) {
  const { query } = useRoute();
  const search = query.get('search') ?? '';
  const status = PERSON_STATUSES.find((s) => s === query.get('status'));
  const offset = Math.max(0, Number(query.get('offset')) || 0);

  const [stats, retryStats] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/people/stats', { params: { path: { workspaceId } } })), [workspaceId]);
  const [load, retry] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/people', { params: { path: { workspaceId }, query: { limit: LIMIT, offset, search: search || undefined, status } } })),
    [workspaceId, search, status, offset],
  );
  const go = (changes: Record<string, string | number | undefined>) => navigate(`/w/${workspaceId}/people${withQuery(query, changes)}`);
  const filtered = Boolean(search || status);

  return (
    <>
      <h1 tabIndex={-1}>People</h1>
      {/* Linked from here rather than the header, which holds one row at 1280 px. */}
      <p>People kept by their conditions, for campaigns to target: <Link to={`/w/${workspaceId}/segments`}>Segments</Link>.</p>
      <Loaded load={stats} retry={retryStats} what="people counts">
        {(s) => (
          <ul className="stats" aria-label="People by status">
            <li><strong>{s.total}</strong> in all</li>
            {PERSON_STATUSES.map((k) => <li key={k}><strong>{s[k]}</strong> {k}</li>)}
            <li><strong>{s.recent}</strong> new in 7 days</li>
          </ul>
        )}
      </Loaded>
      <SearchForm label="Search by name or email" value={search} search={(text) => go({ search: text, offset: undefined })}>
        <div className="field">
          <label htmlFor="people-status">Status</label>
          <select id="people-status" value={status ?? ''} onChange={(e) => go({ status: e.target.value, offset: undefined })}>
            <option value="">Any status</option>
            {PERSON_STATUSES.map((k) => <option key={k} value={k}>{k}</option>)}
          </select>
        </div>
      </SearchForm>
      <Loaded load={load} retry={retry} what="people">
        {(r) =>
          r.people.length === 0 ? (
            filtered ? (
              <Empty title="No one matches this search.">
                <p>
                  Search looks at email, first and last name. <Link to={`/w/${workspaceId}/people`}>Clear the search and filter</Link>.
                </p>
              </Empty>
            ) : (
              <Empty title="No people in this workspace yet.">
                <p>
                  People appear when your app identifies them: <code>POST /api/v1/identify</code> with an API key. Create a key on the{' '}
                  <Link to={`/w/${workspaceId}/keys`}>API keys</Link> page.
                </p>
              </Empty>
            )
          ) : (
            <>
              <TableBox label="People">
                <table>
                  <caption className="sr-only">People{filtered ? ' matching the search' : ''}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th><th scope="col">Email</th><th scope="col">User ID</th><th scope="col">Status</th><th scope="col">Last seen</th>
                    </tr>
                  </thead>
                  <tbody>
                    {r.people.map((p) => (
                      <tr key={p.id}>
                        <td><Link to={`/w/${workspaceId}/people/${p.id}`}>{displayName(p)}</Link></td>
                        <td>{p.email ?? '—'}</td>
                        <td><code>{p.external_id}</code></td>
                        <td><span className={`badge ${p.status}`}>{p.status}</span></td>
                        <td>{when(p.last_seen_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableBox>
              <Pager offset={r.offset} limit={LIMIT} total={r.total} go={(o) => go({ offset: o })} />
            </>
          )
        }
      </Loaded>
    </>
  );
}
