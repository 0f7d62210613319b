// The live event debugger (README, Dashboard): the workspace's latest events, newest first, asked
// again every few seconds while live; pausing keeps what is shown still to read it. "Older"
// pages back by `before` and `before_id` (the last event shown, kept in the address), which
// shows a fixed page, not a live one. The search by event name asks Herald (`name`, kept in the
// address): every event of that name, not only those on screen.
import { useEffect, useState } from 'react';
import { api, call } from '../api';
import { Link, navigate, useRoute, withQuery } from '../router';
import { Empty, Loaded, SearchForm, TableBox, useLoad, when } from '../ui';

const LIMIT = 50;
/** How often the live view asks again. */
const REFRESH_MS = 3000;

export function Events({ workspaceId }: { workspaceId: string }) {
  const { query } = useRoute();
  const before = query.get('before') ?? undefined;
  const beforeId = query.get('before_id') ?? undefined;
  const [paused, setPaused] = useState(false);
  const name = query.get('name') ?? '';
  const [asked, setAsked] = useState<Date | null>(null);
  const [load, retry] = useLoad(async () => {
    const r = await call(api.GET('/workspaces/{workspaceId}/events', { params: { path: { workspaceId }, query: { limit: LIMIT, before, before_id: beforeId, name: name || undefined } } }));
    setAsked(new Date());
    return r;
  }, [workspaceId, before, beforeId, name]);
  const live = !before && !paused;
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(retry, REFRESH_MS);
    return () => clearInterval(timer);
  }, [live, retry]);

  /** To the events before `last` (an event shown), or back to the live view. */
  const go = (last: { created_at: string; id: string } | undefined) => navigate(`/w/${workspaceId}/events${withQuery(query, { before: last?.created_at, before_id: last?.id })}`);
  const search = (text: string) => navigate(`/w/${workspaceId}/events${withQuery(query, { name: text || undefined, before: undefined, before_id: undefined })}`);

  return (
    <>
      <h1 tabIndex={-1}>Events</h1>
      <p>Counts by day and funnels over these events: <Link to={`/w/${workspaceId}/analytics`}>Analytics</Link>.</p>
      <SearchForm label="Event name" hint="The whole name, as your app tracks it" value={name} search={search}>
        {before ? (
          <button type="button" onClick={() => go(undefined)}>Back to live</button>
        ) : (
          <button type="button" aria-pressed={paused} onClick={() => setPaused(!paused)}>{paused ? 'Resume' : 'Pause'}</button>
        )}
        <p className="muted">
          {before ? `Events before ${when(before)}.` : paused ? 'Paused.' : `Live: asked every ${REFRESH_MS / 1000} s.`}
          {asked && <> Last asked {asked.toLocaleTimeString()}.</>}
        </p>
      </SearchForm>
      <Loaded load={load} retry={retry} what="events">
        {(r) =>
          r.events.length === 0 ? (
            <Empty title={`No ${before ? 'older ' : ''}events${name ? ` named “${name}”` : before ? '' : ' yet'}.`}>
              {name ? (
                <p><button type="button" className="link" onClick={() => search('')}>Show every event</button></p>
              ) : before ? (
                <p><button type="button" className="link" onClick={() => go(undefined)}>Back to the latest events</button></p>
              ) : (
                <p>
                  Track one with a secret key holding <code>events:write</code>: <code>POST /api/v1/track</code> with{' '}
                  <code>{'{"event":"signed_up","external_id":"user-1"}'}</code>. It shows here within seconds.
                </p>
              )}
            </Empty>
          ) : (
            <>
              <TableBox label="Events">
                <table>
                  <caption className="sr-only">Events, newest first</caption>
                  <thead>
                    <tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Person</th><th scope="col">Parameters</th></tr>
                  </thead>
                  <tbody>
                    {r.events.map((e) => (
                      <tr key={e.id}>
                        <td>{when(e.created_at)}</td>
                        <td><code>{e.type}</code></td>
                        <td><Link to={`/w/${workspaceId}/people/${e.person_id}`}>{e.external_id}</Link></td>
                        <td>{Object.keys(e.parameters).length > 0 ? <code className="params">{JSON.stringify(e.parameters)}</code> : <span className="muted">none</span>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableBox>
              {r.events.length === LIMIT && (
                <nav className="pager" aria-label="Pages">
                  <button type="button" onClick={() => go(r.events[r.events.length - 1])}>Older events</button>
                </nav>
              )}
            </>
          )
        }
      </Loaded>
    </>
  );
}
