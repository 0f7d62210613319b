// The builder's trigger section: the type, chosen once at creation, and its fields.
import type { Schemas } from '../../api';
import { Field } from '../../ui';
import { TRIGGER_LABEL, TRIGGER_TYPES, type Trigger } from '../../enums';
import type { SetTrigger, TriggerDraft } from './trigger-draft';
import { EventTrigger } from './event-trigger';
import { ScheduleTrigger } from './schedule-trigger';
import { WebhookTrigger } from './webhook-trigger';

const TRIGGER_HELP: Record<Trigger, string> = {
  event: 'when a person performs an event your app tracks',
  webhook: 'when your server calls its trigger URL',
  schedule: 'at a date, or on a recurring schedule',
  dynamic_schedule: "at a date in each person's traits",
};

export function TriggerSection({ workspaceId, campaign, type, setType, d, set, fields }: {
  workspaceId: string;
  campaign: Schemas['Campaign'] | null;
  type: Trigger;
  setType: (t: Trigger) => void;
  d: TriggerDraft;
  set: SetTrigger;
  fields: Record<string, string>;
}) {
  return (
    <section aria-labelledby="trigger">
      <h2 id="trigger">Trigger</h2>
      {campaign ? (
        <p>This campaign is triggered by <strong>{TRIGGER_LABEL[type].toLowerCase()}</strong> (a campaign's trigger type is set when it is created).</p>
      ) : (
        <fieldset className="checks">
          <legend>What starts the campaign</legend>
          {TRIGGER_TYPES.map((k) => (
            <label key={k} className="check">
              <input type="radio" name="trigger-type" value={k} checked={type === k} onChange={() => setType(k)} /> {TRIGGER_LABEL[k]}: {TRIGGER_HELP[k]}
            </label>
          ))}
        </fieldset>
      )}
      {fields.trigger_config && <p className="error">{fields.trigger_config}</p>}
      {type === 'event' && <EventTrigger d={d} set={set} fields={fields} workspaceId={workspaceId} />}
      {type === 'webhook' && <WebhookTrigger workspaceId={workspaceId} campaign={campaign} />}
      {type === 'schedule' && <ScheduleTrigger d={d} set={set} fields={fields} />}
      {type === 'dynamic_schedule' && (
        <div className="inline">
          <Field label="Trait holding each person's date" value={d.trait} onChange={(e) => set({ trait: e.target.value })} placeholder="renewal_date" error={fields['trigger_config.trait']}
            hint="An ISO 8601 date or date-time in each person's traits (no offset: UTC)" />
          <Field label="Offset (minutes)" type="number" step={1} value={d.offsetMinutes} onChange={(e) => set({ offsetMinutes: e.target.value })} error={fields['trigger_config.offset_minutes']}
            hint="Negative: before the date (-1440 is a day before)" />
        </div>
      )}
    </section>
  );
}
