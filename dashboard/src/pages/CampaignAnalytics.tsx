// A campaign's analytics (docs/campaign-analytics.md): the funnel with its rates, bounce and
// complaint rates with the mailbox providers' thresholds, sends, opens and clicks over time,
// the figures by channel and by step, the most clicked links, and the CSV export. Loaded when
// first opened (its chart library with it).
import { useId, useState } from 'react';
import { api, call, type Schemas } from '../api';
import { token } from '../session';
import { Link } from '../router';
import { Actions, Loaded, percent, TableBox, useLoad, useSubmit } from '../ui';
import { MESSAGE_CHANNEL_LABEL, MESSAGE_CHANNELS } from '../enums';
import { inWorkspace } from './Campaigns';
import { SERIES, TimeseriesChart } from './analytics/timeseries-chart';

type Stats = Schemas['CampaignStats'] & { converted?: number };
type Bucket = 'hour' | 'day';

/** What mailbox providers publish as the most a sender may have: above these, mail goes to spam or is refused. */
const BOUNCE_MAX = 0.02;
const COMPLAINT_MAX = 0.001;

export function CampaignAnalytics({ workspaceId, campaignId }: { workspaceId: string; campaignId: string }) {
  const [load, reload] = useLoad(() => call(api.GET('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId } } })), [workspaceId, campaignId]);
  const name = load.state === 'done' ? load.data.data.campaign.name : 'Campaign';
  return (
    <>
      <p><Link to={`/w/${workspaceId}/campaigns/${campaignId}`}>← {name}</Link></p>
      <h1 tabIndex={-1}>Analytics: {name}</h1>
      <Loaded load={load} retry={reload} what="the campaign's stats">
        {({ data }) => (
          <>
            <Funnel stats={data.stats} />
            <Deliverability stats={data.stats} />
            <OverTime workspaceId={workspaceId} campaignId={campaignId} />
            <ByChannel stats={data.stats} />
            {data.nodes && <ByStep nodes={data.nodes} />}
          </>
        )}
      </Loaded>
      <Links workspaceId={workspaceId} campaignId={campaignId} />
      <Export workspaceId={workspaceId} campaignId={campaignId} />
    </>
  );
}

function Funnel({ stats }: { stats: Stats }) {
  const steps: [string, number][] = [['Sent', stats.sent], ['Delivered', stats.delivered], ['Opened', stats.opened], ['Clicked', stats.clicked]];
  if (stats.converted !== undefined) steps.push(['Converted', stats.converted]);
  return (
    <section aria-labelledby="funnel">
      <h2 id="funnel">Funnel</h2>
      <TableBox label="Funnel">
        <table className="funnel">
          <caption className="sr-only">Funnel: each step's count, its share of those sent and of the step before</caption>
          <thead>
            <tr><th scope="col">Step</th><th scope="col">Count</th><th scope="col">Of sent</th><th scope="col">Of the step before</th></tr>
          </thead>
          <tbody>
            {steps.map(([label, n], i) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                <td>{n}</td>
                <td>
                  <meter min={0} max={1} value={stats.sent === 0 ? 0 : Math.min(1, n / stats.sent)} aria-label={`${label}, of sent`} /> {percent(n, stats.sent)}
                </td>
                <td>{i === 0 ? '' : percent(n, steps[i - 1]![1])}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      <p className="muted">Opened and clicked count the messages opened or clicked at least once (a person's repeats count once).</p>
    </section>
  );
}

function Deliverability({ stats }: { stats: Stats }) {
  const bounce = stats.sent === 0 ? 0 : stats.bounced / stats.sent;
  const complaint = stats.delivered === 0 ? 0 : stats.complained / stats.delivered;
  return (
    <section aria-labelledby="deliverability">
      <h2 id="deliverability">Bounces and complaints</h2>
      <ul className="stats" aria-label="Bounce and complaint rates">
        <li><strong>{percent(stats.bounced, stats.sent)}</strong> bounced ({stats.bounced} of {stats.sent} sent)</li>
        <li><strong>{percent(stats.complained, stats.delivered)}</strong> complained ({stats.complained} of {stats.delivered} delivered)</li>
      </ul>
      {bounce > BOUNCE_MAX && (
        <p className="warning" role="alert">
          The bounce rate is above 2%, where mailbox providers start sending your mail to spam or refusing it. Herald has suppressed the addresses that
          bounced hard; check where the others came from, remove addresses nobody confirmed, and send to recently engaged people first.
        </p>
      )}
      {complaint > COMPLAINT_MAX && (
        <p className="warning" role="alert">
          The complaint rate is above 0.1%, the most Gmail and Yahoo accept from bulk senders. Send only to people who asked for this mail, make the
          unsubscribe link easy to find (Herald adds one-click unsubscribe headers), and send less often.
        </p>
      )}
    </section>
  );
}

function OverTime({ workspaceId, campaignId }: { workspaceId: string; campaignId: string }) {
  const id = useId();
  const [bucket, setBucket] = useState<Bucket>('day');
  const [load, reload] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/campaigns/{campaignId}/analytics/timeseries', { params: { path: { workspaceId, campaignId }, query: { bucket } } })),
    [workspaceId, campaignId, bucket],
  );
  const per = bucket === 'hour' ? 'hour, the last 7 days' : 'day, the last 30 days';
  const label = `Chart: messages sent, opened and clicked per ${per}`;
  return (
    <section aria-labelledby="over-time">
      <h2 id="over-time">Sends and opens over time</h2>
      <label htmlFor={`${id}-bucket`}>Counted per</label>{' '}
      <select id={`${id}-bucket`} value={bucket} onChange={(e) => setBucket(e.target.value as Bucket)}>
        <option value="day">day</option>
        <option value="hour">hour</option>
      </select>
      <Loaded load={load} retry={reload} what="sends over time">
        {(r) => (
          <figure>
            <TimeseriesChart points={r.points} label={label} />
            {r.capped && <figcaption className="muted">Counted from the newest 200,000 messages of the range.</figcaption>}
            <details>
              <summary>The chart's numbers as a table</summary>
              <TableBox label="Sends over time">
                <table>
                  <caption className="sr-only">Messages sent, opened and clicked per {per}; times in UTC</caption>
                  <thead>
                    <tr><th scope="col">From (UTC)</th>{SERIES.map((s) => <th key={s.key} scope="col">{s.label}</th>)}</tr>
                  </thead>
                  <tbody>
                    {r.points.filter((p) => p.sent + p.opened + p.clicked > 0).map((p) => (
                      <tr key={p.at}>
                        <th scope="row">{bucket === 'hour' ? p.at.slice(0, 16).replace('T', ' ') : p.at.slice(0, 10)}</th>
                        {SERIES.map((s) => <td key={s.key}>{p[s.key]}</td>)}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableBox>
            </details>
          </figure>
        )}
      </Loaded>
    </section>
  );
}

function ByChannel({ stats }: { stats: Stats }) {
  const used = MESSAGE_CHANNELS.filter((ch) => stats.by_channel[ch].sent + stats.by_channel[ch].failed + stats.by_channel[ch].skipped > 0);
  return (
    <section aria-labelledby="by-channel">
      <h2 id="by-channel">By channel</h2>
      {used.length === 0 ? (
        <p className="muted">No message sent yet.</p>
      ) : (
        <TableBox label="By channel">
          <table>
            <caption className="sr-only">Each channel's messages and rates</caption>
            <thead>
              <tr><th scope="col">Channel</th><th scope="col">Sent</th><th scope="col">Delivered</th><th scope="col">Opened</th><th scope="col">Clicked</th><th scope="col">Bounced</th><th scope="col">Failed</th></tr>
            </thead>
            <tbody>
              {used.map((ch) => {
                const c = stats.by_channel[ch];
                return (
                  <tr key={ch}>
                    <th scope="row">{MESSAGE_CHANNEL_LABEL[ch]}</th>
                    <td>{c.sent}</td>
                    <td>{c.delivered} ({percent(c.delivered, c.sent)})</td>
                    <td>{c.opened} ({percent(c.opened, c.sent)})</td>
                    <td>{c.clicked} ({percent(c.clicked, c.sent)})</td>
                    <td>{c.bounced} ({percent(c.bounced, c.sent)})</td>
                    <td>{c.failed}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableBox>
      )}
    </section>
  );
}

/** A journey's steps: how many entered and completed each, and a split's branches (its variants). */
function ByStep({ nodes }: { nodes: Record<string, { entered: number; completed: number; took?: Record<string, number> }> }) {
  return (
    <section aria-labelledby="by-step">
      <h2 id="by-step">By step and variant</h2>
      <TableBox label="By step">
        <table>
          <caption className="sr-only">Each step of the journey: entered, completed, and per branch of a split</caption>
          <thead>
            <tr><th scope="col">Step</th><th scope="col">Entered</th><th scope="col">Completed</th><th scope="col">Branches taken</th></tr>
          </thead>
          <tbody>
            {Object.entries(nodes).map(([id, n]) => (
              <tr key={id}>
                <th scope="row">{id}</th>
                <td>{n.entered}</td>
                <td>{n.completed}</td>
                <td>{n.took ? Object.entries(n.took).map(([to, k]) => `${to || 'end'}: ${k} (${percent(k, n.completed)})`).join(', ') : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </section>
  );
}

function Links({ workspaceId, campaignId }: { workspaceId: string; campaignId: string }) {
  const [load, reload] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/campaigns/{campaignId}/analytics/links', { params: { path: { workspaceId, campaignId }, query: { limit: 20 } } })),
    [workspaceId, campaignId],
  );
  return (
    <section aria-labelledby="links">
      <h2 id="links">Clicks per link</h2>
      <Loaded load={load} retry={reload} what="the clicked links">
        {(r) =>
          r.links.length === 0 ? (
            <p className="muted">No click recorded yet.</p>
          ) : (
            <TableBox label="Clicks per link">
              <table className="links">
                <caption className="sr-only">The {r.links.length} links clicked most{r.total > r.links.length ? ` of ${r.total}` : ''}</caption>
                <thead>
                  <tr><th scope="col">Link</th><th scope="col">Clicks</th><th scope="col">Unique</th></tr>
                </thead>
                <tbody>
                  {r.links.map((l) => (
                    <tr key={l.url}><td>{l.url}</td><td>{l.clicks}</td><td>{l.unique_clicks}</td></tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          )
        }
      </Loaded>
    </section>
  );
}

/** The export's pages, fetched one after another (each a bounded read on the server) and saved as one file. */
function Export({ workspaceId, campaignId }: { workspaceId: string; campaignId: string }) {
  const { busy, done, error, submit } = useSubmit();
  const [rows, setRows] = useState(0);
  const download = () =>
    submit(async () => {
      const base = `/api/v1/workspaces/${workspaceId}/campaigns/${campaignId}/analytics/export`;
      const parts: string[] = [];
      let next: string | null = base;
      let n = 0;
      setRows(0);
      while (next) {
        const r: Response = await fetch(next, { headers: { Authorization: `Bearer ${token()}` } });
        if (!r.ok) throw new Error(`Herald answered ${r.status}`);
        const text = await r.text();
        // Each page has the header row: the first is kept.
        const body = parts.length === 0 ? text : text.slice(text.indexOf('\r\n') + 2);
        parts.push(body);
        n += body.split('\r\n').length - (parts.length === 1 ? 2 : 1);
        setRows(n);
        const link = /^<([^>]+)>; rel="next"$/.exec(r.headers.get('Link') ?? '');
        next = link ? base + link[1] : null;
      }
      const a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob(parts, { type: 'text/csv' }));
      a.download = `campaign-${campaignId}.csv`;
      a.click();
      URL.revokeObjectURL(a.href);
      return `Exported ${n} messages.`;
    });
  return (
    <section aria-labelledby="export">
      <h2 id="export">Export</h2>
      <p>Every message of the campaign as CSV: message id, person, channel, status, when sent, delivered, opened, clicked, error.</p>
      <Actions done={done} error={error}>
        <button type="button" onClick={() => void download()} aria-disabled={busy || undefined}>{busy ? `Exporting… ${rows} messages` : 'Download CSV'}</button>
      </Actions>
    </section>
  );
}
