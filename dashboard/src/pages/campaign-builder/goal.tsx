// The builder's goal section (docs/campaigns-runtime.md, Goals and conversions): an optional
// event and window; a person who performs the event within the window after their first message
// of the campaign converts, once, and leaves the journey. Both fields empty: no goal.
import { useRef } from 'react';
import type { Schemas } from '../../api';
import { Field } from '../../ui';
import { SeenEventNames } from './seen-events';

/** The goal as edited: both empty is none. */
export interface GoalDraft {
  eventName: string;
  within: string;
}

export const goalDraft = (goal: Schemas['Campaign']['goal']): GoalDraft => ({ eventName: goal?.event_name ?? '', within: goal?.within ?? '' });

/** The goal to save: null when both fields are empty; a half-written one is sent for Herald to say what it lacks. */
export const goalOf = (d: GoalDraft): { event_name: string; within: string } | null =>
  d.eventName.trim() === '' && d.within.trim() === '' ? null : { event_name: d.eventName.trim(), within: d.within.trim() };

export function GoalSection({ workspaceId, d, set, fields }: { workspaceId: string; d: GoalDraft; set: (d: GoalDraft) => void; fields: Record<string, string> }) {
  const chosen = d.eventName.trim();
  const section = useRef<HTMLElement>(null);
  const remove = () => {
    set({ eventName: '', within: '' });
    // The button goes with the goal: focus stays in the section, on its first field.
    section.current?.querySelector('input')?.focus();
  };
  return (
    <section aria-labelledby="goal" ref={section}>
      <h2 id="goal">Goal</h2>
      <p className="muted">
        Optional. A person converts when they perform the goal event within this time after their first message of the campaign: counted once as
        converted, and they leave the journey (no later step is sent to them).
      </p>
      {fields.goal && <p className="error">{fields.goal}</p>}
      <div className="inline">
        <Field label="Goal event" value={d.eventName} onChange={(e) => set({ ...d, eventName: e.target.value })} placeholder="purchase_completed" maxLength={255} error={fields['goal.event_name']}
          hint="The event your app sends to POST /api/v1/track" />
        <Field label="Converts within" value={d.within} onChange={(e) => set({ ...d, within: e.target.value })} placeholder="3d" error={fields['goal.within']}
          hint='After the first message: minutes, hours or days ("45m", "12h", "3d"), at most 366 days' />
      </div>
      <SeenEventNames workspaceId={workspaceId} skip={chosen ? [chosen] : []} label="Goal events seen in this workspace" action={(n) => `Make ${n} the goal event`} pick={(n) => set({ ...d, eventName: n })} />
      {goalOf(d) && <button type="button" onClick={remove}>Remove the goal</button>}
    </section>
  );
}
