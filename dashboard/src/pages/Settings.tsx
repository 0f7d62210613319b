// Workspace settings: name, time zone, the send policy (quiet hours, daily and rolling caps)
// with a plain-language summary of what it does, and Herald's own open and click tracking.
import { useState, type FormEvent } from 'react';
import { api, call, type Schemas } from '../api';
import { Actions, Field, Loaded, useLoad, useSubmit } from '../ui';
import { refreshWorkspaces } from '../workspaces';

type Workspace = Schemas['Workspace'];
type Policy = NonNullable<Schemas['SendPolicy']>;

const ZONES = Intl.supportedValuesOf('timeZone');

export function Settings({ workspaceId }: { workspaceId: string }) {
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}', { params: { path: { workspaceId } } })), [workspaceId]);
  return (
    <>
      <h1 tabIndex={-1}>Settings</h1>
      <Loaded load={load} retry={retry} what="the workspace">
        {(r) => <SettingsForm key={r.data.workspace.id} workspace={r.data.workspace} />}
      </Loaded>
    </>
  );
}

/** The form's values, as typed (numbers as text). */
interface Draft {
  name: string;
  timezone: string;
  policyTimezone: string;
  quiet: boolean;
  quietStart: string;
  quietEnd: string;
  perDay: string;
  perWindow: string;
  windowHours: string;
  trackOpens: boolean;
  trackClicks: boolean;
}

function draftOf(w: Workspace): Draft {
  const p: Policy = w.settings.send_policy ?? {};
  return {
    name: w.name,
    timezone: w.settings.timezone,
    // Typed `unknown` by the generated types (the schema's anyOf has no type of its own).
    policyTimezone: typeof p.timezone === 'string' ? p.timezone : '',
    quiet: Boolean(p.quiet_hours),
    quietStart: p.quiet_hours?.start ?? '22:00',
    quietEnd: p.quiet_hours?.end ?? '08:00',
    perDay: String(p.max_pushes_per_day ?? 0),
    perWindow: String(p.max_pushes_per_window ?? 0),
    windowHours: String(p.window_hours ?? 0),
    trackOpens: w.settings.tracking.opens,
    trackClicks: w.settings.tracking.clicks,
  };
}

const count = (s: string) => (/^\d+$/.test(s.trim()) ? Number(s) : NaN);

function policyOf(d: Draft): Policy {
  return {
    timezone: d.policyTimezone,
    quiet_hours: d.quiet ? { start: d.quietStart, end: d.quietEnd } : null,
    max_pushes_per_day: count(d.perDay),
    max_pushes_per_window: count(d.perWindow),
    window_hours: count(d.windowHours),
  };
}

/** What the policy does, in a sentence or three. */
function summary(p: Policy): string {
  const parts: string[] = [];
  const zone = p.timezone || 'UTC';
  if (p.quiet_hours) parts.push(`Nothing is sent between ${p.quiet_hours.start} and ${p.quiet_hours.end} (${zone}); a push due then is skipped as quiet hours.`);
  if (p.max_pushes_per_day) parts.push(`Each person gets at most ${p.max_pushes_per_day} push${p.max_pushes_per_day === 1 ? '' : 'es'} per day (${zone}).`);
  if (p.max_pushes_per_window && p.window_hours) parts.push(`And at most ${p.max_pushes_per_window} in any ${p.window_hours} hours.`);
  return parts.length ? parts.join(' ') : 'No limits: every push is sent when it is due.';
}

function SettingsForm({ workspace }: { workspace: Workspace }) {
  const [d, setD] = useState<Draft>(() => draftOf(workspace));
  const { busy, done, error, fields, submit, clearDone } = useSubmit();
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => {
    clearDone();
    setD((old) => ({ ...old, [k]: v }));
  };
  const policy = policyOf(d);
  const f = (name: string) => fields[`settings.send_policy.${name}`];

  const save = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      await call(api.PUT('/workspaces/{workspaceId}', { params: { path: { workspaceId: workspace.id } }, body: { name: d.name, settings: { timezone: d.timezone, send_policy: policy, tracking: { opens: d.trackOpens, clicks: d.trackClicks } } } }));
      refreshWorkspaces();
      return 'Saved.';
    });
  };

  return (
    <form onSubmit={save}>
      <datalist id="zones">{ZONES.map((z) => <option key={z} value={z} />)}</datalist>
      <Field label="Workspace name" value={d.name} onChange={(e) => set('name', e.target.value)} required maxLength={255} error={fields.name} />
      <Field label="Time zone" list="zones" value={d.timezone} onChange={(e) => set('timezone', e.target.value)} hint="IANA name, e.g. Europe/Paris" error={fields['settings.timezone']} />
      <fieldset>
        <legend>Send policy</legend>
        <Field label="Policy time zone" list="zones" value={d.policyTimezone} onChange={(e) => set('policyTimezone', e.target.value)} hint="Quiet hours and days are counted in it; empty means UTC" error={f('timezone')} />
        <label className="check">
          <input type="checkbox" checked={d.quiet} onChange={(e) => set('quiet', e.target.checked)} /> Quiet hours
        </label>
        {d.quiet && (
          <div className="inline">
            <Field label="From" type="time" value={d.quietStart} onChange={(e) => set('quietStart', e.target.value)} required error={f('quiet_hours.start')} />
            <Field label="To" type="time" value={d.quietEnd} onChange={(e) => set('quietEnd', e.target.value)} required error={f('quiet_hours.end')} />
          </div>
        )}
        <Field label="At most pushes per person per day" type="number" min={0} value={d.perDay} onChange={(e) => set('perDay', e.target.value)} hint="0: no daily cap" error={f('max_pushes_per_day')} />
        <div className="inline">
          <Field label="At most pushes per person…" type="number" min={0} value={d.perWindow} onChange={(e) => set('perWindow', e.target.value)} error={f('max_pushes_per_window')} />
          <Field label="…in any this many hours" type="number" min={0} max={168} value={d.windowHours} onChange={(e) => set('windowHours', e.target.value)} hint="Both 0: no rolling cap" error={f('window_hours')} />
        </div>
      </fieldset>
      <p className="summary" aria-live="polite"><strong>What this does:</strong> {summary(policy)}</p>
      <fieldset>
        <legend>Tracking</legend>
        <label className="check">
          <input type="checkbox" checked={d.trackOpens} onChange={(e) => set('trackOpens', e.target.checked)} /> Count opens (a 1×1 image in each email)
        </label>
        <label className="check">
          <input type="checkbox" checked={d.trackClicks} onChange={(e) => set('trackClicks', e.target.checked)} /> Count clicks (links in emails, SMS and campaign pushes go through Herald)
        </label>
        <small className="muted">Both off: what is sent carries nothing of Herald&apos;s.</small>
      </fieldset>
      <Actions done={done} error={error}>
        <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Saving…' : 'Save settings'}</button>
      </Actions>
    </form>
  );
}
