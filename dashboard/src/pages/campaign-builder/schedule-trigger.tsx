// A schedule trigger's fields: once at a date in a chosen time zone (with the instant it is), or
// a cron pattern with its next five runs.
import { useMemo } from 'react';
import { Cron } from 'croner';
import { Field } from '../../ui';
import type { SetTrigger, TriggerDraft } from './trigger-draft';
import { localToInstant, zones } from './zones';

export function ScheduleTrigger({ d, set, fields }: { d: TriggerDraft; set: SetTrigger; fields: Record<string, string> }) {
  const all = useMemo(zones, []);
  const next = useMemo(() => {
    if (d.scheduleMode !== 'cron' || !d.cron.trim()) return null;
    try {
      return { runs: new Cron(d.cron.trim(), { timezone: d.zone, mode: '5-part', paused: true }).nextRuns(5) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  }, [d.cron, d.zone, d.scheduleMode]);
  const at = d.scheduleMode === 'once' ? localToInstant(d.sendAtLocal, d.zone) : null;
  return (
    <>
      <fieldset className="inline">
        <legend>When</legend>
        <label className="check"><input type="radio" name="schedule-mode" checked={d.scheduleMode === 'once'} onChange={() => set({ scheduleMode: 'once' })} /> Once, at a date</label>
        <label className="check"><input type="radio" name="schedule-mode" checked={d.scheduleMode === 'cron'} onChange={() => set({ scheduleMode: 'cron' })} /> Recurring (cron)</label>
      </fieldset>
      <div className="inline">
        {d.scheduleMode === 'once' ? (
          <Field label="Send at" type="datetime-local" step={1} value={d.sendAtLocal} onChange={(e) => set({ sendAtLocal: e.target.value })} error={fields['trigger_config.send_at']} />
        ) : (
          <Field label="Cron pattern" value={d.cron} onChange={(e) => set({ cron: e.target.value })} placeholder="0 9 * * 1" error={fields['trigger_config.cron']}
            hint="minute hour day-of-month month day-of-week, or @daily, @weekly…" />
        )}
        <div className="field">
          <label htmlFor="schedule-zone">Time zone</label>
          <select id="schedule-zone" value={d.zone} onChange={(e) => set({ zone: e.target.value })} aria-invalid={fields['trigger_config.timezone'] ? true : undefined}>
            {(all.includes(d.zone) ? all : [d.zone, ...all]).map((z) => <option key={z} value={z}>{z}</option>)}
          </select>
          {fields['trigger_config.timezone'] && <small className="error">{fields['trigger_config.timezone']}</small>}
        </div>
      </div>
      {at && <p className="muted">That is {at.toISOString().replace('.000Z', 'Z')} (UTC), {at.toLocaleString()} here.</p>}
      {next && (
        'error' in next ? (
          <p className="error">Not a cron pattern: {next.error}</p>
        ) : (
          <div>
            <h3>Next runs</h3>
            {next.runs.length === 0 ? <p>It never fires.</p> : (
              <ol aria-label="Next runs">
                {next.runs.map((r) => <li key={r.getTime()}>{r.toLocaleString(undefined, { timeZone: d.zone, dateStyle: 'full', timeStyle: 'short' })} ({d.zone})</li>)}
              </ol>
            )}
          </div>
        )
      )}
    </>
  );
}
