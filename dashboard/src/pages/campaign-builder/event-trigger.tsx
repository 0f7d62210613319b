// An event trigger's fields: the event names (offered from those seen in the workspace), the
// filters, and its limits and timing.
import { Field } from '../../ui';
import { Conditions } from '../conditions';
import { SeenEventNames } from './seen-events';
import type { SetTrigger, TriggerDraft } from './trigger-draft';

export function EventTrigger({ d, set, fields, workspaceId }: { d: TriggerDraft; set: SetTrigger; fields: Record<string, string>; workspaceId: string }) {
  const names = fields['trigger_config.event_names'] ?? Object.entries(fields).find(([k]) => k.startsWith('trigger_config.event_names.'))?.[1];
  const chosen = d.eventNames.split(',').map((n) => n.trim()).filter(Boolean);
  return (
    <>
      <Field label="Event names" value={d.eventNames} onChange={(e) => set({ eventNames: e.target.value })} placeholder="signed_up, purchase" error={names}
        hint="The events that trigger the campaign, comma-separated: the names your app sends to POST /api/v1/track" />
      <SeenEventNames workspaceId={workspaceId} skip={chosen} label="Event names seen in this workspace" action={(n) => `Add the event ${n}`} pick={(n) => set({ eventNames: [...chosen, n].join(', ') })} />
      <h3>Filters</h3>
      <p className="muted">Conditions the event (and its person) must meet. A count condition ("performed at least…") reads how often the person performed an event, this one included.</p>
      <Conditions conds={d.filters} set={(filters) => set({ filters })} at="trigger_config.filters" fields={fields} eventFields label="Filter" />
      <h3>Limits and timing</h3>
      <div className="inline">
        <Field label="Debounce (seconds)" type="number" min={0} value={d.debounce} onChange={(e) => set({ debounce: e.target.value })} error={fields['trigger_config.debounce']}
          hint="A person is not entered again within this long of their last entry" />
        <Field label="Delay (minutes)" type="number" min={0} step="any" value={d.delayMinutes} onChange={(e) => set({ delayMinutes: e.target.value })} error={fields['trigger_config.delay_minutes']}
          hint="The workflow starts this long after the event" />
        <Field label="Max entries per person" type="number" min={1} step={1} value={d.maxPerUser} onChange={(e) => set({ maxPerUser: e.target.value })} error={fields['trigger_config.max_per_user']}
          hint="Empty: no limit" />
      </div>
      <label className="check">
        <input type="checkbox" checked={d.firstOccurrence} onChange={(e) => set({ firstOccurrence: e.target.checked })} /> Only the first time a person performs the event
      </label>
      {fields['trigger_config.first_occurrence'] && <p className="error">{fields['trigger_config.first_occurrence']}</p>}
    </>
  );
}
