// A campaign's trigger_config as the builder edits it: read from the campaign into a draft of
// every trigger type's fields, written back for the chosen type only.
import type { Trigger } from '../../enums';
import { fromCondition, toCondition, type Cond } from '../conditions';
import { instantToLocal, localToInstant } from './zones';

/** The trigger config as edited, every type's fields (only the chosen type's are sent). */
export interface TriggerDraft {
  eventNames: string;
  filters: Cond[];
  debounce: string;
  delayMinutes: string;
  maxPerUser: string;
  firstOccurrence: boolean;
  scheduleMode: 'once' | 'cron';
  sendAtLocal: string;
  zone: string;
  cron: string;
  trait: string;
  offsetMinutes: string;
}

export type SetTrigger = (patch: Partial<TriggerDraft>) => void;

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
const num = (v: unknown) => (typeof v === 'number' ? String(v) : '');

export function triggerDraft(cfg: Record<string, unknown>): TriggerDraft {
  const zone = typeof cfg.timezone === 'string' ? cfg.timezone : browserZone();
  return {
    eventNames: Array.isArray(cfg.event_names) ? cfg.event_names.join(', ') : '',
    filters: Array.isArray(cfg.filters) ? cfg.filters.map(fromCondition) : [],
    debounce: num(cfg.debounce),
    delayMinutes: num(cfg.delay_minutes),
    maxPerUser: num(cfg.max_per_user),
    firstOccurrence: cfg.first_occurrence === true,
    scheduleMode: typeof cfg.cron === 'string' ? 'cron' : 'once',
    sendAtLocal: typeof cfg.send_at === 'string' ? instantToLocal(cfg.send_at, zone) : '',
    zone,
    cron: typeof cfg.cron === 'string' ? cfg.cron : '',
    trait: typeof cfg.trait === 'string' ? cfg.trait : '',
    offsetMinutes: num(cfg.offset_minutes),
  };
}

/** The trigger_config keys the builder edits; any other key of a campaign (e.g. `properties`) is kept as it was. */
const EDITED = ['event_names', 'filters', 'debounce', 'delay_minutes', 'max_per_user', 'first_occurrence', 'send_at', 'cron', 'timezone', 'trait', 'offset_minutes'];

export function triggerConfig(type: Trigger, d: TriggerDraft, original: Record<string, unknown>): Record<string, unknown> {
  const cfg: Record<string, unknown> = Object.fromEntries(Object.entries(original).filter(([k]) => !EDITED.includes(k)));
  const setNum = (key: string, v: string) => {
    if (v.trim() !== '') cfg[key] = Number(v);
  };
  switch (type) {
    case 'event':
      cfg.event_names = d.eventNames.split(',').map((n) => n.trim()).filter(Boolean);
      if (d.filters.length > 0) cfg.filters = d.filters.map(toCondition);
      setNum('debounce', d.debounce);
      setNum('delay_minutes', d.delayMinutes);
      setNum('max_per_user', d.maxPerUser);
      if (d.firstOccurrence) cfg.first_occurrence = true;
      break;
    case 'webhook':
      break;
    case 'schedule':
      if (d.scheduleMode === 'once') {
        const at = localToInstant(d.sendAtLocal, d.zone);
        cfg.send_at = at ? at.toISOString() : d.sendAtLocal;
        cfg.timezone = d.zone;
      } else {
        cfg.cron = d.cron.trim();
        cfg.timezone = d.zone;
      }
      break;
    case 'dynamic_schedule':
      cfg.trait = d.trait.trim();
      setNum('offset_minutes', d.offsetMinutes);
      break;
  }
  return cfg;
}
