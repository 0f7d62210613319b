// Workspace analytics (docs/analytics.md): an event's daily counts and distinct people over a
// range of UTC days, as a chart (uPlot, loaded when first drawn) and the same numbers as a
// table; and a funnel of 2 to 5 events in order within a window, as bars and a table. The
// standard events are offered first, then the names the workspace has seen; any name may be typed.
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { api, call } from '../api';
import { Link } from '../router';
import { Actions, Field, TableBox, describe, useLoad } from '../ui';
// Its CSS comes with this page's chunk; its code when the first chart is drawn.
import 'uplot/dist/uPlot.min.css';

type Daily = Awaited<ReturnType<typeof askDaily>>;
type Funnel = Awaited<ReturnType<typeof askFunnel>>;

const STANDARD = ['signed_up', 'logged_in', 'logged_out', 'purchase_completed', 'subscription_started', 'subscription_cancelled'];
const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** The last 30 UTC days, today included. */
const lastDays = () => ({ from: day(Date.now() - 29 * DAY_MS), to: day(Date.now()) });

const askDaily = (workspaceId: string, q: { event: string; from: string; to: string }) =>
  call(api.GET('/workspaces/{workspaceId}/analytics/events', { params: { path: { workspaceId }, query: q } }));
const askFunnel = (workspaceId: string, body: { steps: string[]; from: string; to: string; window: string }) =>
  call(api.POST('/workspaces/{workspaceId}/analytics/funnel', { params: { path: { workspaceId } }, body }));

const percent = (n: number, of: number) => (of > 0 ? `${Math.round((n / of) * 1000) / 10}%` : '—');

export function Analytics({ workspaceId }: { workspaceId: string }) {
  const [seen] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/event-names', { params: { path: { workspaceId }, query: { limit: 100 } } })), [workspaceId]);
  const names = [...STANDARD, ...(seen.state === 'done' ? seen.data.names.map((n) => n.name).filter((n) => !STANDARD.includes(n)) : [])];
  const list = useId();
  return (
    <>
      <h1 tabIndex={-1}>Analytics</h1>
      <p>
        Counts by UTC day and funnels over this workspace's events. The latest events one by one: <Link to={`/w/${workspaceId}/events`}>Events</Link>.
      </p>
      <datalist id={list}>{names.map((n) => <option key={n} value={n} />)}</datalist>
      <DailySection workspaceId={workspaceId} list={list} />
      <FunnelSection workspaceId={workspaceId} list={list} />
    </>
  );
}

function DailySection({ workspaceId, list }: { workspaceId: string; list: string }) {
  const [form, setForm] = useState({ event: 'signed_up', ...lastDays() });
  const [shown, setShown] = useState<Daily | null>(null);
  const [error, setError] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  const ask = async (e?: FormEvent) => {
    e?.preventDefault();
    try {
      setShown(await askDaily(workspaceId, form));
      setError('');
      setFields({});
    } catch (err) {
      setError(describe(err));
      setFields((err as { fields?: Record<string, string> }).fields ?? {});
    }
  };
  // The default question is answered on opening.
  useEffect(() => void ask(), [workspaceId]);
  return (
    <section aria-labelledby="daily-heading">
      <h2 id="daily-heading">Daily counts</h2>
      <form className="filters" onSubmit={(e) => void ask(e)}>
        <Field label="Event" list={list} value={form.event} onChange={(e) => setForm({ ...form, event: e.target.value })} required maxLength={255} spellCheck={false} error={fields.event} />
        <Field label="From" type="date" value={form.from} onChange={(e) => setForm({ ...form, from: e.target.value })} required error={fields.from} />
        <Field label="To" type="date" value={form.to} onChange={(e) => setForm({ ...form, to: e.target.value })} required error={fields.to} hint="UTC days, at most 366" />
        <Actions done="" error={error}>
          <button type="submit">Show</button>
        </Actions>
      </form>
      {shown && (
        <>
          <p>
            <strong>{shown.total.count}</strong> <code>{shown.event}</code> events by <strong>{shown.total.people}</strong> {shown.total.people === 1 ? 'person' : 'people'} from {shown.from} to {shown.to}.
          </p>
          <DailyChart daily={shown} />
          <TableBox label={`Daily ${shown.event} table`}>
            <table>
              <caption>Daily {shown.event}, {shown.from} to {shown.to} (UTC)</caption>
              <thead>
                <tr><th scope="col">Day</th><th scope="col">Events</th><th scope="col">People</th></tr>
              </thead>
              <tbody>
                {shown.days.map((d) => (
                  <tr key={d.date}><td>{d.date}</td><td>{d.count}</td><td>{d.people}</td></tr>
                ))}
              </tbody>
              <tfoot>
                <tr><th scope="row">Whole range</th><td>{shown.total.count}</td><td>{shown.total.people}</td></tr>
              </tfoot>
            </table>
          </TableBox>
        </>
      )}
    </section>
  );
}

/** The daily counts as lines over a time axis; uPlot is fetched the first time one is drawn. */
function DailyChart({ daily }: { daily: Daily }) {
  const box = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    let plot: { destroy(): void; setSize(s: { width: number; height: number }): void } | undefined;
    let resize: ResizeObserver | undefined;
    void import('uplot').then(({ default: UPlot }) => {
      const el = box.current;
      if (!live || !el) return;
      const xs = daily.days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
      const size = () => ({ width: Math.max(200, el.clientWidth), height: 220 });
      plot = new UPlot(
        {
          ...size(),
          legend: { show: false },
          scales: { x: { time: true } },
          series: [{}, { label: 'Events', stroke: '#1d4ed8', width: 2 }, { label: 'People', stroke: '#15803d', width: 2, dash: [6, 4] }],
          axes: [{}, { size: 50 }],
        },
        [xs, daily.days.map((d) => d.count), daily.days.map((d) => d.people)],
        el,
      );
      resize = new ResizeObserver(() => plot?.setSize(size()));
      resize.observe(el);
    }, () => live && setFailed(true));
    return () => {
      live = false;
      resize?.disconnect();
      plot?.destroy();
    };
  }, [daily]);
  const label = `Chart of daily ${daily.event} events (solid) and people (dashed) from ${daily.from} to ${daily.to}; the table below has the same numbers`;
  return (
    <figure className="daily-chart">
      <div ref={box} role="img" aria-label={label} className="chart-box" />
      <figcaption className="muted">{failed ? 'The chart could not be loaded; the table below has the numbers.' : 'Solid: events. Dashed: people.'}</figcaption>
    </figure>
  );
}

function FunnelSection({ workspaceId, list }: { workspaceId: string; list: string }) {
  const [steps, setSteps] = useState(['signed_up', 'purchase_completed']);
  const [range, setRange] = useState(lastDays);
  const [within, setWithin] = useState('7d');
  const [shown, setShown] = useState<Funnel | null>(null);
  const [error, setError] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  const ask = async (e: FormEvent) => {
    e.preventDefault();
    try {
      setShown(await askFunnel(workspaceId, { steps, ...range, window: within }));
      setError('');
      setFields({});
    } catch (err) {
      setError(describe(err));
      setFields((err as { fields?: Record<string, string> }).fields ?? {});
    }
  };
  const first = shown?.steps[0]?.people ?? 0;
  return (
    <section aria-labelledby="funnel-heading">
      <h2 id="funnel-heading">Funnel</h2>
      <p className="muted">Each person from their first step-1 event in the range; each next step counts when it comes after the step before and within the window of step 1.</p>
      <form onSubmit={(e) => void ask(e)}>
        <ol className="funnel-steps">
          {steps.map((s, i) => (
            <li key={i} className="inline">
              <Field label={`Step ${i + 1}`} list={list} value={s} onChange={(e) => setSteps(steps.map((x, j) => (j === i ? e.target.value : x)))} required maxLength={255} spellCheck={false} error={fields[`steps.${i}`]} />
              {steps.length > 2 && <button type="button" onClick={() => setSteps(steps.filter((_, j) => j !== i))} aria-label={`Remove step ${i + 1}`}>Remove</button>}
            </li>
          ))}
        </ol>
        {steps.length < 5 && <p><button type="button" onClick={() => setSteps([...steps, ''])}>Add a step</button></p>}
        <div className="filters">
          <Field label="Step 1 from" type="date" value={range.from} onChange={(e) => setRange({ ...range, from: e.target.value })} required error={fields.from} />
          <Field label="Step 1 to" type="date" value={range.to} onChange={(e) => setRange({ ...range, to: e.target.value })} required error={fields.to} />
          <Field label="Window" value={within} onChange={(e) => setWithin(e.target.value)} required maxLength={10} hint="From step 1 to the last: 30m, 12h, 7d (at most 90d)" error={fields.window} />
        </div>
        <Actions done="" error={error}>
          <button type="submit">Show funnel</button>
        </Actions>
      </form>
      {shown && (
        <>
          <ol className="funnel-bars" aria-label={`Funnel chart: people per step within ${shown.window}, from ${shown.from} to ${shown.to}`}>
            {shown.steps.map((s, i) => (
              <li key={i}>
                <span><code>{s.event}</code>: {s.people}</span>
                <progress max={Math.max(first, 1)} value={s.people} aria-label={`Step ${i + 1}, ${s.event}: ${s.people} people, ${percent(s.people, first)} of step 1`} />
              </li>
            ))}
          </ol>
          <TableBox label="Funnel table">
            <table>
              <caption>Funnel within {shown.window}, step 1 from {shown.from} to {shown.to} (UTC)</caption>
              <thead>
                <tr><th scope="col">Step</th><th scope="col">Event</th><th scope="col">People</th><th scope="col">Of step 1</th><th scope="col">Of the step before</th></tr>
              </thead>
              <tbody>
                {shown.steps.map((s, i) => (
                  <tr key={i}>
                    <td>{i + 1}</td><td><code>{s.event}</code></td><td>{s.people}</td><td>{percent(s.people, first)}</td><td>{i === 0 ? '—' : percent(s.people, shown.steps[i - 1]!.people)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </>
      )}
    </section>
  );
}
