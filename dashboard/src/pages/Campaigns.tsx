// Campaigns of a workspace: filters by status and trigger type and a search by name (in the
// address), each campaign's stats at a glance, and what can be done to it in its status
// (pause, resume, archive, duplicate, delete). The builder is CampaignBuilder.tsx.
import { useState, type FormEvent } from 'react';
import { api, call, type Schemas } from '../api';
import { Link, navigate, useRoute, withQuery } from '../router';
import { Actions, describe, Empty, Loaded, Pager, TableBox, useLoad, when } from '../ui';
import { CAMPAIGN_STATUSES, TRIGGER_LABEL, TRIGGER_TYPES, type CampaignStatus } from '../enums';

const LIMIT = 25;
type Campaign = Schemas['Campaign'];
/** The statuses of a campaign that can send (pause stops them). */
export const LIVE: readonly CampaignStatus[] = ['active', 'scheduled'];

/** The session routes of campaigns name the workspace in a header. */
export const inWorkspace = (workspaceId: string) => ({ header: { 'X-Workspace-ID': workspaceId } });

export function Campaigns({ workspaceId }: { workspaceId: string }) {
  const { query } = useRoute();
  const q = query.get('q') ?? '';
  const status = CAMPAIGN_STATUSES.find((s) => s === query.get('status'));
  const trigger = TRIGGER_TYPES.find((t) => t === query.get('trigger_type'));
  const offset = Math.max(0, Number(query.get('offset')) || 0);
  const [text, setText] = useState(q);
  const [done, setDone] = useState('');
  const [failed, setFailed] = useState('');

  const [load, retry] = useLoad(
    () => call(api.GET('/campaigns', { params: { ...inWorkspace(workspaceId), query: { limit: LIMIT, offset, status, trigger_type: trigger, ...(q ? { q } : {}) } } })),
    [workspaceId, status, trigger, offset, q],
  );
  const go = (changes: Record<string, string | number | undefined>) => navigate(`/w/${workspaceId}/campaigns${withQuery(query, changes)}`);
  const find = (e: FormEvent) => {
    e.preventDefault();
    go({ q: text.trim(), offset: undefined });
  };
  const filtered = Boolean(q || status || trigger);

  const act = async (what: string, action: () => Promise<unknown>) => {
    setDone('');
    setFailed('');
    try {
      await action();
      setDone(what);
      retry();
    } catch (e) {
      setFailed(`${what.replace(/\.$/, '')} failed: ${describe(e)}`);
    }
  };
  const setStatus = (c: Campaign, to: 'active' | 'paused' | 'archived', what: string) =>
    act(what, () => call(api.PUT('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId: c.id } }, body: { status: to } })));
  const duplicate = (c: Campaign) =>
    act(`${c.name} duplicated as a draft.`, () =>
      call(
        api.POST('/campaigns', {
          params: inWorkspace(workspaceId),
          body: {
            name: `${c.name} (copy)`.slice(0, 255),
            trigger_type: c.trigger_type,
            // Free objects, which the generated types cannot say.
            trigger_config: c.trigger_config as never,
            audience_config: c.audience_config as never,
            workflow_definition: c.workflow_definition as never,
          },
        }),
      ),
    );
  const remove = (c: Campaign) => {
    if (!confirm(`Delete ${c.name}? Its enrolments go; the messages it sent stay in the history.`)) return;
    void act(`${c.name} deleted.`, () => call(api.DELETE('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId: c.id } } })));
  };

  return (
    <>
      <h1 tabIndex={-1}>Campaigns</h1>
      <p>
        <Link to={`/w/${workspaceId}/campaigns/new`} className="button">New campaign</Link>{' '}
        <Link to={`/w/${workspaceId}/templates`}>Message templates</Link>
      </p>
      <Actions done={done} error={failed} />
      <form className="filters" role="search" onSubmit={find}>
        <div className="field">
          <label htmlFor="campaigns-search">Search by name</label>
          <input id="campaigns-search" type="search" value={text} onChange={(e) => setText(e.target.value)} maxLength={255} />
        </div>
        <button type="submit">Search</button>
        <div className="field">
          <label htmlFor="campaigns-status">Status</label>
          <select id="campaigns-status" value={status ?? ''} onChange={(e) => go({ status: e.target.value, offset: undefined })}>
            <option value="">Any status</option>
            {CAMPAIGN_STATUSES.map((k) => <option key={k} value={k}>{k}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor="campaigns-trigger">Trigger</label>
          <select id="campaigns-trigger" value={trigger ?? ''} onChange={(e) => go({ trigger_type: e.target.value, offset: undefined })}>
            <option value="">Any trigger</option>
            {TRIGGER_TYPES.map((k) => <option key={k} value={k}>{TRIGGER_LABEL[k]}</option>)}
          </select>
        </div>
      </form>
      <Loaded load={load} retry={retry} what="campaigns">
        {(r) => {
          const shown = r.campaigns;
          if (shown.length === 0) {
            return filtered ? (
              <Empty title="No campaign matches.">
                <p>
                  <Link to={`/w/${workspaceId}/campaigns`} onClick={() => setText('')}>Clear the search and filters</Link>.
                </p>
              </Empty>
            ) : (
              <Empty title="No campaigns yet.">
                <p>
                  A campaign sends push, email or SMS messages when something happens: an event your app tracks, a call to its webhook, a
                  date, or a date in each person's traits. <Link to={`/w/${workspaceId}/campaigns/new`}>Create your first campaign</Link>; it
                  stays a draft until you activate it.
                </p>
              </Empty>
            );
          }
          return (
            <>
              <TableBox label="Campaigns">
                <table>
                  <caption className="sr-only">Campaigns{filtered ? ' matching the filters' : ''}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th><th scope="col">Trigger</th><th scope="col">Status</th><th scope="col">Enrolled</th><th scope="col">Sent</th>
                      <th scope="col">Delivered</th><th scope="col">Failed</th><th scope="col">Last triggered</th><th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {shown.map((c) => (
                      <tr key={c.id}>
                        <td><Link to={`/w/${workspaceId}/campaigns/${c.id}`}>{c.name}</Link></td>
                        <td>{TRIGGER_LABEL[c.trigger_type]}</td>
                        <td><span className={`badge ${c.status}`}>{c.status}</span></td>
                        <StatsCells workspaceId={workspaceId} campaign={c} />
                        <td>
                          <div className="actions">
                            {LIVE.includes(c.status) && <button type="button" onClick={() => void setStatus(c, 'paused', `${c.name} paused.`)} aria-label={`Pause ${c.name}`}>Pause</button>}
                            {c.status === 'paused' && <button type="button" onClick={() => void setStatus(c, 'active', `${c.name} resumed.`)} aria-label={`Resume ${c.name}`}>Resume</button>}
                            {c.status !== 'archived' && !LIVE.includes(c.status) && (
                              <button type="button" onClick={() => void setStatus(c, 'archived', `${c.name} archived.`)} aria-label={`Archive ${c.name}`}>Archive</button>
                            )}
                            <button type="button" onClick={() => void duplicate(c)} aria-label={`Duplicate ${c.name}`}>Duplicate</button>
                            {!LIVE.includes(c.status) && <button type="button" className="danger" onClick={() => remove(c)} aria-label={`Delete ${c.name}`}>Delete</button>}
                          </div>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableBox>
              <Pager offset={r.offset} limit={LIMIT} total={r.total} go={(o) => go({ offset: o })} />
            </>
          );
        }}
      </Loaded>
    </>
  );
}

/** One campaign's counters: enrolled, sent, delivered, failed, last triggered. */
function StatsCells({ workspaceId, campaign }: { workspaceId: string; campaign: Campaign }) {
  const [load] = useLoad(
    () => call(api.GET('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId: campaign.id } } })),
    [workspaceId, campaign.id, campaign.updated_at],
  );
  if (load.state !== 'done') {
    const text = load.state === 'failed' ? '?' : '…';
    return <>{[0, 1, 2, 3, 4].map((i) => <td key={i} className="muted">{text}</td>)}</>;
  }
  const s = load.data.data.stats;
  return (
    <>
      <td>{s.enrolled}</td>
      <td>{s.sent}</td>
      <td>{s.delivered}</td>
      <td>{s.failed}</td>
      <td>{when(s.last_triggered_at)}</td>
    </>
  );
}
