// The campaign builder, new and edit (loaded on demand: it is the dashboard's biggest page).
// The trigger of each type (docs/campaigns-runtime.md): event (names, filters, debounce, delay,
// max_per_user, first_occurrence, count conditions), webhook (the curl that triggers it with an
// Idempotency-Key, for a chosen key), schedule (send_at in a chosen zone, or cron with its next
// five runs), dynamic schedule (trait and offset); the audience; the workflow; save and
// activate, with ACTIVATION_FAILED's details at the fields they name and warnings before
// activating; the live progress of a campaign that runs.
import { useCallback, useEffect, useMemo, useState, type ReactNode } from 'react';
import { flushSync } from 'react-dom';
import { Cron } from 'croner';
import { api, ApiError, call, type Schemas } from '../api';
import { Link, navigate } from '../router';
import { Actions, describe, Field, Loaded, TableBox, useLoad, usePageBack, useSubmit, when } from '../ui';
import { refusal } from '../field-errors';
import { inWorkspace, LIVE } from './Campaigns';
import { CHANNEL_COUNTERS, CHANNELS, NODE_LABEL, TRIGGER_LABEL, TRIGGER_TYPES, type Trigger } from '../enums';
import { Conditions, fromCondition, toCondition, type Cond } from './conditions';
import { cleanNode, stepName, Workflow, type WorkflowNode } from './workflow';
import { personDataUsed, PersonPicker, useDebounced } from './authoring-parts';
import { displayName } from './People';
import { MessageTable } from './message-table';

type Campaign = Schemas['Campaign'];
type Template = Schemas['MessageTemplate'];

export function CampaignBuilder({ workspaceId, campaignId }: { workspaceId: string; campaignId?: string }) {
  // A campaign created here keeps its editor (and what it shows) when the address takes its id.
  const [created, setCreated] = useState<Campaign | null>(null);
  const [templates] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/templates', { params: { path: { workspaceId } } })), [workspaceId]);
  const list = templates.state === 'done' ? templates.data.templates : [];
  if (!campaignId || created?.id === campaignId) {
    return (
      <Editor
        workspaceId={workspaceId}
        initial={created}
        templates={list}
        onCreated={(c) => {
          // Before the address changes (its render is synchronous), so the editor stays.
          flushSync(() => setCreated(c));
          navigate(`/w/${workspaceId}/campaigns/${c.id}`, { replace: true });
        }}
      />
    );
  }
  return <Existing workspaceId={workspaceId} campaignId={campaignId} templates={list} />;
}

function Existing({ workspaceId, campaignId, templates }: { workspaceId: string; campaignId: string; templates: Template[] }) {
  const [load, retry] = useLoad(() => call(api.GET('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId } } })), [workspaceId, campaignId]);
  return (
    <Loaded load={load} retry={retry} what="this campaign">
      {({ data }) => <Editor key={data.campaign.id} workspaceId={workspaceId} initial={data.campaign} templates={templates} />}
    </Loaded>
  );
}

/** The trigger config as edited, every type's fields (only the chosen type's are sent). */
interface TriggerDraft {
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

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
const num = (v: unknown) => (typeof v === 'number' ? String(v) : '');

function triggerDraft(cfg: Record<string, unknown>): TriggerDraft {
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

function triggerConfig(type: Trigger, d: TriggerDraft, original: Record<string, unknown>): Record<string, unknown> {
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

/** The wall-clock offset of `zone` at `instant`, in ms. */
function zoneOffset(instant: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
    .formatToParts(new Date(instant));
  const n = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second')) - Math.floor(instant / 1000) * 1000;
}

/** `YYYY-MM-DDTHH:mm[:ss]` on the clocks of `zone`, as an instant. */
function localToInstant(local: string, zone: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local);
  if (!m) return null;
  const [, year, month, day, hour, minute, second = 0] = m;
  const wall = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  try {
    let t = wall - zoneOffset(wall, zone);
    t = wall - zoneOffset(t, zone);
    return new Date(t);
  } catch {
    return null;
  }
}

function instantToLocal(iso: string, zone: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  try {
    return new Date(t + zoneOffset(t, zone)).toISOString().slice(0, 19).replace(/:00$/, '');
  } catch {
    return '';
  }
}

const zones = (): string[] => {
  const supported = (Intl as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  return supported.includes('UTC') ? supported : ['UTC', ...supported];
};

/** What activating would warn of, known before asking Herald. */
function warningsOf(nodes: WorkflowNode[], templates: Template[]): string[] {
  const out: string[] = [];
  nodes.forEach((n, i) => {
    if (n.type !== 'email') return;
    const t = n.template_id ? templates.find((x) => x.id === n.template_id) : undefined;
    const html = String(n.html ?? t?.html ?? '');
    if (html && !/unsubscribe_url/.test(html)) out.push(`${stepName(n, i)}: its HTML has no {{ unsubscribe_url }} link, so recipients cannot unsubscribe from the message itself (the List-Unsubscribe header is still sent).`);
  });
  if (!nodes.some((n) => n.type !== 'delay')) out.push('The workflow sends nothing yet: add a push, email or SMS step.');
  return out;
}

/**
 * Herald's warnings on the workflow it saved ("email node email-1: …"), less those of a step
 * `known` already warns of (said by warningsOf, which also reads templates), the rest naming
 * the step as the builder does.
 */
function heraldWarnings(warned: string[], nodes: WorkflowNode[], known: string[]): string[] {
  return warned.flatMap((w) => {
    const [, id, said] = /^\w+ node (\S+): (.*)$/.exec(w) ?? [];
    const i = nodes.findIndex((n) => n.id === id);
    const node = nodes[i];
    if (!id || !node) return [w];
    const name = stepName(node, i);
    return known.some((k) => k.startsWith(`${name}:`)) ? [] : [`${name}: ${said}`];
  });
}

function Editor({ workspaceId, initial, templates, onCreated }: { workspaceId: string; initial: Campaign | null; templates: Template[]; onCreated?: (c: Campaign) => void }) {
  const [campaign, setCampaign] = useState<Campaign | null>(initial);
  const [name, setName] = useState(initial?.name ?? '');
  const [type, setType] = useState<Trigger>(initial?.trigger_type ?? 'event');
  const [trigger, setTrigger] = useState<TriggerDraft>(() => triggerDraft(initial?.trigger_config ?? {}));
  const [match, setMatch] = useState<'all' | 'any'>(initial?.audience_config.match === 'any' ? 'any' : 'all');
  const [audience, setAudience] = useState<Cond[]>(() => (Array.isArray(initial?.audience_config.filters) ? initial.audience_config.filters.map(fromCondition) : []));
  const [nodes, setNodes] = useState<WorkflowNode[]>(() => (initial?.workflow_definition.nodes as WorkflowNode[] | undefined) ?? [{ id: 'push-1', type: 'push' }]);
  // A refusal names the steps as they were sent.
  const { busy, done, error, fields, submit } = useSubmit((i) => (nodes[i] ? stepName(nodes[i], i) : `Step ${i + 1}`));
  const [serverWarnings, setServerWarnings] = useState<string[]>([]);
  const t = (patch: Partial<TriggerDraft>) => setTrigger((d) => ({ ...d, ...patch }));

  // trigger_config and audience_config are free objects, which the generated types cannot say.
  const body = () => ({
    name: name.trim(),
    trigger_config: triggerConfig(type, trigger, initial?.trigger_config ?? {}) as never,
    audience_config: (audience.length > 0 ? { match, filters: audience.map(toCondition) } : {}) as never,
    workflow_definition: { nodes: nodes.map(cleanNode) as never },
  });
  const warnings = useMemo(() => warningsOf(nodes, templates), [nodes, templates]);

  const run = (what: string, status?: 'active' | 'paused' | 'draft') =>
    submit(async () => {
      let c = campaign;
      let warned: string[];
      if (!c) {
        const r = await call(api.POST('/campaigns', { params: inWorkspace(workspaceId), body: { ...body(), trigger_type: type } }));
        c = r.data.campaign;
        warned = r.data.warnings ?? [];
        setCampaign(c);
        onCreated?.(c);
        if (status) {
          const u = await call(api.PUT('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId: c.id } }, body: { status } }));
          c = u.data.campaign;
          warned = u.warnings ?? warned;
        }
      } else {
        const u = await call(api.PUT('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId: c.id } }, body: { ...body(), ...(status ? { status } : {}) } }));
        c = u.data.campaign;
        warned = u.warnings ?? [];
      }
      setCampaign(c);
      setServerWarnings(warned);
      return what;
    });

  const live = campaign !== null && LIVE.includes(campaign.status);
  const f = (k: string) => fields[k];
  const shownWarnings = [...warnings, ...heraldWarnings(serverWarnings, nodes, warnings)];
  return (
    <>
      <p><Link to={`/w/${workspaceId}/campaigns`}>← Campaigns</Link></p>
      <h1 tabIndex={-1}>{campaign ? campaign.name : 'New campaign'}</h1>
      {campaign && (
        <p>
          Status: <span className={`badge ${campaign.status}`}>{campaign.status}</span> · {TRIGGER_LABEL[campaign.trigger_type]} trigger · updated {when(campaign.updated_at)}
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(campaign ? 'Saved.' : 'Saved as a draft.');
        }}
      >
        <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} maxLength={255} required error={f('name')} />
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
          {f('trigger_config') && <p className="error">{f('trigger_config')}</p>}
          {type === 'event' && <EventTrigger d={trigger} set={t} fields={fields} workspaceId={workspaceId} />}
          {type === 'webhook' && <WebhookTrigger workspaceId={workspaceId} campaign={campaign} />}
          {type === 'schedule' && <ScheduleTrigger d={trigger} set={t} fields={fields} />}
          {type === 'dynamic_schedule' && (
            <div className="inline">
              <Field label="Trait holding each person's date" value={trigger.trait} onChange={(e) => t({ trait: e.target.value })} placeholder="renewal_date" error={f('trigger_config.trait')}
                hint="An ISO 8601 date or date-time in each person's traits (no offset: UTC)" />
              <Field label="Offset (minutes)" type="number" step={1} value={trigger.offsetMinutes} onChange={(e) => t({ offsetMinutes: e.target.value })} error={f('trigger_config.offset_minutes')}
                hint="Negative: before the date (-1440 is a day before)" />
            </div>
          )}
        </section>
        <section aria-labelledby="audience">
          <h2 id="audience">Audience</h2>
          <p className="muted">
            {type === 'event' ? 'Who of the people performing the event may enter. ' : ''}No condition: everyone in the workspace.
          </p>
          <div className="field">
            <label htmlFor="audience-match">People must match</label>
            <select id="audience-match" value={match} onChange={(e) => setMatch(e.target.value as 'all' | 'any')}>
              <option value="all">all of the conditions</option>
              <option value="any">any of the conditions</option>
            </select>
            {f('audience_config.match') && <small className="error">{f('audience_config.match')}</small>}
          </div>
          <AudiencePreview workspaceId={workspaceId} config={audience.length > 0 ? { match, filters: audience.map(toCondition) } : {}} fields={fields}>
            {(previewFields) => <Conditions conds={audience} set={setAudience} at="audience_config.filters" fields={{ ...previewFields, ...fields }} eventFields={false} label="Audience condition" />}
          </AudiencePreview>
        </section>
        <section aria-labelledby="workflow">
          <h2 id="workflow">Workflow</h2>
          <Workflow
            workspaceId={workspaceId}
            nodes={nodes}
            set={(n) => {
              setNodes(n);
              // Herald's warnings were about the workflow it saved: this one is said by warningsOf.
              setServerWarnings([]);
            }}
            templates={templates}
            fields={fields}
          />
        </section>
        {campaign && <TestSend workspaceId={workspaceId} campaign={campaign} />}
        {shownWarnings.length > 0 && (
          <div className="notice" role="note" aria-label="Warnings">
            <p><strong>Before activating</strong></p>
            <ul>
              {[...new Set(shownWarnings)].map((w) => <li key={w}>{w}</li>)}
            </ul>
          </div>
        )}
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{campaign ? 'Save' : 'Save as draft'}</button>
          {/* One button, so focus stays on it when activating makes it Pause (and back). */}
          <button type="button" aria-disabled={busy || undefined} onClick={() => void (live ? run('Paused: nothing more is sent until it is resumed.', 'paused') : run('Activated: the campaign is live.', 'active'))}>
            {live ? 'Pause' : campaign?.status === 'paused' ? 'Resume' : 'Activate'}
          </button>
        </Actions>
      </form>
      {campaign && campaign.status !== 'draft' && <Progress workspaceId={workspaceId} campaign={campaign} onStatus={(c) => setCampaign((old) => (old && old.status !== c.status ? c : old))} />}
    </>
  );
}

const TRIGGER_HELP: Record<Trigger, string> = {
  event: 'when a person performs an event your app tracks',
  webhook: 'when your server calls its trigger URL',
  schedule: 'at a date, or on a recurring schedule',
  dynamic_schedule: "at a date in each person's traits",
};

type SetTrigger = (patch: Partial<TriggerDraft>) => void;

function EventTrigger({ d, set, fields, workspaceId }: { d: TriggerDraft; set: SetTrigger; fields: Record<string, string>; workspaceId: string }) {
  const names = fields['trigger_config.event_names'] ?? Object.entries(fields).find(([k]) => k.startsWith('trigger_config.event_names.'))?.[1];
  // The names this workspace's events have had (GET …/event-names), offered to pick from.
  const [seen] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/event-names', { params: { path: { workspaceId }, query: { limit: 50 } } })), [workspaceId]);
  const chosen = d.eventNames.split(',').map((n) => n.trim()).filter(Boolean);
  const offered = seen.state === 'done' ? seen.data.names.filter((n) => !chosen.includes(n.name)) : [];
  return (
    <>
      <Field label="Event names" value={d.eventNames} onChange={(e) => set({ eventNames: e.target.value })} placeholder="signed_up, purchase" error={names}
        hint="The events that trigger the campaign, comma-separated: the names your app sends to POST /api/v1/track" />
      {offered.length > 0 && (
        <p role="group" aria-label="Event names seen in this workspace">
          <span className="muted">Seen in this workspace: </span>
          {offered.map((n) => (
            <button key={n.name} type="button" className="link" aria-label={`Add the event ${n.name}`} title={`Last seen ${when(n.last_seen_at)}`} onClick={() => set({ eventNames: [...chosen, n.name].join(', ') })}>
              {n.name}
            </button>
          ))}
        </p>
      )}
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

function ScheduleTrigger({ d, set, fields }: { d: TriggerDraft; set: SetTrigger; fields: Record<string, string> }) {
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

function WebhookTrigger({ workspaceId, campaign }: { workspaceId: string; campaign: Campaign | null }) {
  const [keys] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/api-keys', { params: { path: { workspaceId } } })), [workspaceId]);
  const [keyId, setKeyId] = useState('');
  const [idem, setIdem] = useState<string>(() => crypto.randomUUID());
  const [copied, setCopied] = useState('');
  if (!campaign) return <p className="muted">Save the campaign to get its trigger URL and the curl that calls it.</p>;
  const usable = keys.state === 'done' ? keys.data.api_keys.filter((k) => k.key_type === 'secret' && (k.permissions.includes('campaigns:trigger') || k.permissions.includes('*'))) : [];
  const key = usable.find((k) => k.id === keyId) ?? usable[0];
  const url = `${location.origin}/api/v1/campaigns/${campaign.id}/trigger`;
  const curl = [
    `curl -X POST '${url}'`,
    `  -H 'Authorization: Bearer ${key ? `${key.key_prefix}…` : '<secret API key with campaigns:trigger>'}'`,
    `  -H 'Content-Type: application/json'`,
    ...(idem.trim() ? [`  -H 'Idempotency-Key: ${idem.trim()}'`] : []),
    `  -d '{"workspace_id":"${workspaceId}","trigger_data":{}}'`,
  ].join(' \\\n');
  return (
    <>
      <p>Your server triggers this campaign for its whole audience with a call like this one (the key's full secret was shown once when it was created; the curl shows its prefix). <code>trigger_data</code> is the Liquid scope <code>trigger</code>.</p>
      <div className="inline">
        <div className="field">
          <label htmlFor="webhook-key">API key</label>
          <select id="webhook-key" value={key?.id ?? ''} onChange={(e) => setKeyId(e.target.value)}>
            {usable.length === 0 && <option value="">No secret key with campaigns:trigger</option>}
            {usable.map((k) => <option key={k.id} value={k.id}>{k.name} ({k.key_prefix}…)</option>)}
          </select>
        </div>
        <Field label="Idempotency-Key" value={idem} onChange={(e) => setIdem(e.target.value)} maxLength={255}
          hint="A repeat with the same key within 24 hours sends nothing again" />
      </div>
      {keys.state === 'done' && usable.length === 0 && (
        <p className="notice">No secret API key can trigger campaigns: <Link to={`/w/${workspaceId}/keys`}>create one</Link> with the <code>campaigns:trigger</code> permission.</p>
      )}
      <pre role="region" aria-label="The curl that triggers this campaign" tabIndex={0}>{curl}</pre>
      <button type="button" onClick={() => void navigator.clipboard.writeText(curl).then(() => setCopied('Copied.'), () => setCopied('Could not copy: select the text instead.'))}>Copy the curl</button>{' '}
      <span role="status" className="ok">{copied}</span>
      {!LIVE.includes(campaign.status) && <p className="muted">The call is refused until the campaign is active.</p>}
    </>
  );
}

/** Messages a page of the progress's list. */
const MESSAGES = 20;
/** Where the next page of messages starts: the last one shown. */
const lastShown = (ms: { message_id: string; created_at: string }[]) => {
  const m = ms.at(-1);
  return m && { id: m.message_id, created_at: m.created_at };
};

/** The campaign's counters, by channel, asked again every 2 s while it can still send. */
function Progress({ workspaceId, campaign, onStatus }: { workspaceId: string; campaign: Campaign; onStatus: (c: Campaign) => void }) {
  const [load, reload] = useLoad(
    () => call(api.GET('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId: campaign.id } } })),
    [workspaceId, campaign.id],
  );
  // Each person's messages, newest first (GET …/campaigns/{id}/messages), polled with the
  // counters; paged back by the last one shown (an older page is asked again too: its statuses move).
  const pages = usePageBack();
  const [messages, reloadMessages] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/campaigns/{campaignId}/messages', { params: { path: { workspaceId, campaignId: campaign.id }, query: { limit: MESSAGES, ...pages.query } } })),
    [workspaceId, campaign.id, pages.query],
  );
  const again = useCallback(() => {
    reload();
    reloadMessages();
  }, [reload, reloadMessages]);
  const status = load.state === 'done' ? load.data.data.campaign.status : campaign.status;
  const polling = status !== 'archived' && status !== 'failed';
  useEffect(() => {
    if (!polling) return;
    const timer = setInterval(again, 2000);
    return () => clearInterval(timer);
  }, [again, polling]);
  useEffect(() => {
    if (load.state === 'done') onStatus(load.data.data.campaign);
  }, [load]);
  return (
    <section aria-labelledby="progress">
      <h2 id="progress">Progress</h2>
      <Loaded load={load} retry={again} what="the campaign's progress">
        {({ data: { stats } }) => (
          <>
            <ul className="stats" aria-label="Campaign totals">
              <li><strong>{stats.enrolled}</strong> enrolled</li>
              <li><strong>{stats.triggered}</strong> runs</li>
              <li><strong>{stats.sent}</strong> sent</li>
              <li><strong>{stats.delivered}</strong> delivered</li>
              <li><strong>{stats.failed}</strong> failed</li>
              <li>last triggered {when(stats.last_triggered_at)}</li>
            </ul>
            <TableBox label="Messages by channel">
              <table>
                <caption className="sr-only">Messages by channel{polling ? ', updated every 2 seconds' : ''}</caption>
                <thead>
                  <tr>
                    <th scope="col">Channel</th>
                    {CHANNEL_COUNTERS.map((c) => <th key={c} scope="col">{c.replace('_', ' ')}</th>)}
                  </tr>
                </thead>
                <tbody>
                  {CHANNELS.map((ch) => (
                    <tr key={ch}>
                      <th scope="row">{NODE_LABEL[ch]}</th>
                      {CHANNEL_COUNTERS.map((c) => <td key={c}>{stats.by_channel[ch][c]}</td>)}
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
            {polling && <p className="muted">Updated every 2 seconds.</p>}
          </>
        )}
      </Loaded>
      <h3>{pages.query ? `Messages, page ${pages.page}` : 'Latest messages'}</h3>
      <Loaded load={messages} retry={again} what="the campaign's messages">
        {(r) => (
          <>
            {r.messages.length === 0 ? (
              <p className="muted">{pages.query ? 'No older messages.' : 'No message yet: they appear here as the campaign sends, one row a person and step.'}</p>
            ) : (
              <MessageTable
                label={pages.query ? `Page ${pages.page} of the campaign's messages: ${r.messages.length} older, newest first` : `The campaign's latest ${r.messages.length} messages, newest first`}
                messages={r.messages}
                person
              />
            )}
            {pages.pager(r.messages.length, MESSAGES, lastShown(r.messages), 'messages')}
          </>
        )}
      </Loaded>
    </section>
  );
}

/**
 * How many people the audience matches and who (POST …/audiences/preview), asked again 500 ms
 * after the conditions last changed; its refusals go to the conditions they name.
 */
function AudiencePreview({ workspaceId, config, fields, children }: {
  workspaceId: string;
  config: Record<string, unknown>;
  fields: Record<string, string>;
  children: (previewFields: Record<string, string>) => ReactNode;
}) {
  const settled = useDebounced(JSON.stringify(config), 500);
  // A condition without a field is still being written: nothing to count yet.
  const incomplete = ((JSON.parse(settled) as { filters?: { field: string }[] }).filters ?? []).some((c) => !c.field);
  const [load] = useLoad(
    () =>
      incomplete
        ? Promise.resolve(null)
        : call(api.POST('/workspaces/{workspaceId}/audiences/preview', { params: { path: { workspaceId } }, body: { audience_config: JSON.parse(settled) as never } })),
    [workspaceId, settled],
  );
  const previewFields = load.state === 'failed' && load.error instanceof ApiError ? refusal(load.error).fields : {};
  const shownElsewhere = Object.keys(fields).length > 0;
  return (
    <>
      {children(previewFields)}
      <div className="summary" aria-live="polite" aria-label="Audience preview">
        {load.state === 'loading' && <p className="muted">Counting…</p>}
        {load.state === 'failed' && !shownElsewhere && <p className="error">Cannot count this audience yet: {describe(load.error)}</p>}
        {load.state === 'done' && load.data === null && <p className="muted">Give each condition a field to count who matches.</p>}
        {load.state === 'done' && load.data !== null && (
          <>
            <p><strong>{load.data.count_capped ? `More than ${load.data.count.toLocaleString()}` : load.data.count.toLocaleString()}</strong> {load.data.count === 1 ? 'person matches' : 'people match'} now.</p>
            {load.data.sample.length > 0 && (
              <p>
                For example:{' '}
                {load.data.sample.map((p, i) => (
                  <span key={p.id}>{i > 0 && ', '}<Link to={`/w/${workspaceId}/people/${p.id}`}>{displayName(p)}</Link></span>
                ))}
              </p>
            )}
          </>
        )}
      </div>
    </>
  );
}

type TestResult = { node_id: string; channel: string; status: string; address: string | null; provider: string; skip_reason: string | null; error: string | null };

/** One message step, as last saved, sent now to one person (outside caps and quiet hours, tagged test). */
function TestSend({ workspaceId, campaign }: { workspaceId: string; campaign: Campaign }) {
  const steps = (campaign.workflow_definition.nodes as WorkflowNode[]).map((n, i) => ({ n, i })).filter(({ n }) => n.type !== 'delay');
  const [nodeId, setNodeId] = useState(steps[0]?.n.id ?? '');
  const [person, setPerson] = useState({ id: '', byUser: false });
  const personId = person.id;
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<TestResult | null>(null);
  const [error, setError] = useState('');
  const node = steps.find((s) => s.n.id === nodeId) ?? steps[0];
  if (!node) return null;
  const send = async () => {
    setBusy(true);
    setError('');
    setResult(null);
    try {
      const r = await call(api.POST('/workspaces/{workspaceId}/campaigns/{campaignId}/test-send', { params: { path: { workspaceId, campaignId: campaign.id } }, body: { node_id: node.n.id, person_id: personId } }));
      setResult(r.data);
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="test-send">
      <h2 id="test-send">Test send</h2>
      <p className="muted">Sends one step, as last saved, to one person now: no caps or quiet hours, recorded as a test and left out of the campaign's counts.</p>
      <div className="inline">
        <div className="field">
          <label htmlFor="test-step">Step</label>
          <select id="test-step" value={node.n.id} onChange={(e) => setNodeId(e.target.value)}>
            {steps.map(({ n, i }) => <option key={n.id} value={n.id}>{stepName(n, i)}</option>)}
          </select>
        </div>
        <PersonPicker workspaceId={workspaceId} label="Send to" value={personId} onChange={(id, byUser) => setPerson({ id, byUser })} auto={!person.byUser} prefer={personDataUsed(node.n)} />
        {/* Busy, it stays focusable: focus stays on it for the result. */}
        <button type="button" disabled={!personId} aria-disabled={busy || undefined} onClick={() => void (busy || send())}>Send the test</button>
      </div>
      {error && <p className="error" role="alert">Not sent: {error}</p>}
      <div role="status">
        {result && (
          <p className={result.status === 'failed' || result.status === 'bounced' ? 'error' : 'ok'}>
            Test {NODE_LABEL[result.channel as keyof typeof NODE_LABEL] ?? result.channel}: <strong>{result.status}</strong>
            {result.address ? ` to ${result.address}` : ''} via {result.provider}
            {result.skip_reason ? ` (skipped: ${result.skip_reason.replace(/_/g, ' ')})` : ''}
            {result.error ? ` (${result.error})` : ''}.
          </p>
        )}
      </div>
    </section>
  );
}
