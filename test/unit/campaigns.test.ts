// Campaign rules (docs/campaigns-runtime.md; README, Request bodies and Routes): known-bad keys, workflow shape,
// where a push node's content comes from, node messages, the activation rules one by one and
// together, status moves and deletion.
import t, { type Test } from 'tap';
import {
  activationProblems, checkDeletable, cronOf, dueScheduledRun, initialWorkflow, nodeContent, normalizeWorkflow, refuseKnownBadKeys, runProblems, setNodeMessage, settleStatus,
  type CampaignSpec, type CampaignStatus, type PushNode, type Templates, type Workflow,
} from '../../src/domain/campaigns.js';
import { DomainError } from '../../src/domain/errors.js';

const NOW = Date.parse('2030-01-15T12:00:00.000Z');
const T1 = '0191f3a0-0000-7000-8000-000000000001';
const NONE: Templates = new Map();
const PUSH: Workflow = { nodes: [{ id: 'p1', type: 'push', title: 'Hi {{ person.first_name }}', body: 'Welcome' }] };

function spec(over: Partial<CampaignSpec> = {}): CampaignSpec {
  return { trigger_type: 'event', trigger_config: { event_names: ['signed_up'] }, audience_config: {}, workflow_definition: PUSH, ...over };
}

/** The fields activation complains about, sorted. */
const problemFields = (s: CampaignSpec, templates: Templates = NONE) => activationProblems(s, templates, NOW).map((p) => p.field).sort();

function throwsCode(t: Test, fn: () => unknown, code: string, what: string): DomainError | undefined {
  try {
    fn();
  } catch (err) {
    t.ok(err instanceof DomainError, `${what}: a DomainError`);
    t.equal((err as DomainError).code, code, `${what}: ${code}`);
    return err as DomainError;
  }
  t.fail(`${what}: did not throw`);
  return undefined;
}

t.test('event_name (singular) is refused with a message naming event_names', async (t) => {
  const err = throwsCode(t, () => refuseKnownBadKeys({ event_name: 'signed_up' }), 'INVALID_TRIGGER_CONFIG', 'event_name');
  t.match(err?.message, /replaced by event_names/);
  t.same(err?.details, [{ field: 'trigger_config.event_name', message: 'was replaced by event_names (an array of event names)' }]);
  t.doesNotThrow(() => refuseKnownBadKeys({ event_names: ['a'] }));
  t.doesNotThrow(() => refuseKnownBadKeys({}));
});

t.test('workflow shape: unique node ids, delays with minutes, template ids lower-cased', async (t) => {
  const dup = throwsCode(t, () => normalizeWorkflow({ nodes: [{ id: 'a', type: 'push' }, { id: 'a', type: 'delay', minutes: 5 }] }), 'VALIDATION_ERROR', 'repeated id');
  t.same((dup?.details as { field: string }[]).map((d) => d.field), ['workflow_definition.nodes.1.id']);
  const delay = throwsCode(t, () => normalizeWorkflow({ nodes: [{ id: 'd', type: 'delay' } as never] }), 'VALIDATION_ERROR', 'delay without minutes');
  t.same((delay?.details as { field: string }[]).map((d) => d.field), ['workflow_definition.nodes.0.minutes']);
  const w = normalizeWorkflow({ nodes: [{ id: 'p', type: 'push', template_id: T1.toUpperCase() }, { id: 'd', type: 'delay', minutes: 0 }] });
  t.equal((w.nodes[0] as PushNode).template_id, T1);
});

t.test('initial workflow: a template alone makes one push node; with a workflow it fills push nodes naming none', async (t) => {
  t.same(initialWorkflow(undefined, undefined), { nodes: [] });
  t.same(initialWorkflow(PUSH, undefined), PUSH);
  t.same(initialWorkflow(undefined, T1), { nodes: [{ id: 'push', type: 'push', template_id: T1 }] });
  const T2 = T1.replace(/1$/, '2');
  const w = initialWorkflow({ nodes: [{ id: 'a', type: 'push' }, { id: 'd', type: 'delay', minutes: 1 }, { id: 'b', type: 'push', template_id: T2 }] }, T1);
  t.same(w.nodes, [{ id: 'a', type: 'push', template_id: T1 }, { id: 'd', type: 'delay', minutes: 1 }, { id: 'b', type: 'push', template_id: T2 }]);
});

t.test("a push node's content: the template's fields, each overridden by the node's own", async (t) => {
  const templates: Templates = new Map([[T1, { channel: 'push', title: 'T title', body: 'T body', image_url: 'https://img' }]]);
  t.same(nodeContent({ id: 'p', type: 'push', template_id: T1, body: 'own body' }, templates), { title: 'T title', body: 'own body', image_url: 'https://img' });
  t.same(nodeContent({ id: 'p', type: 'push', title: 'x' }, templates), { title: 'x' });
  t.same(nodeContent({ id: 'p', type: 'push', template_id: T1.replace(/1$/, '9') }, templates), {}, 'a missing template gives nothing');
});

t.test('node messages: set, replace, remove; only push nodes; unknown node 404', async (t) => {
  const w: Workflow = { nodes: [{ id: 'p', type: 'push', title: 'old', body: 'keep' }, { id: 'd', type: 'delay', minutes: 3 }] };
  const r = setNodeMessage(w, 'p', { title: 'new', image_url: 'https://x/y.png' });
  t.same(r.node, { id: 'p', type: 'push', title: 'new', body: 'keep', image_url: 'https://x/y.png' });
  t.same(w.nodes[0], { id: 'p', type: 'push', title: 'old', body: 'keep' }, 'the workflow given is not changed');
  t.same(setNodeMessage(r.workflow, 'p', { body: null }).node, { id: 'p', type: 'push', title: 'new', image_url: 'https://x/y.png' }, 'null removes a field');
  throwsCode(t, () => setNodeMessage(w, 'nope', { title: 'x' }), 'NOT_FOUND', 'unknown node');
  const delay = throwsCode(t, () => setNodeMessage(w, 'd', { title: 'x' }), 'VALIDATION_ERROR', 'a delay node');
  t.match(delay?.message, /only push nodes, email nodes and sms nodes/);
  const foreign = throwsCode(t, () => setNodeMessage(w, 'p', { subject: 'x' }), 'VALIDATION_ERROR', "an email field on a push node");
  t.same((foreign?.details as { field: string }[]).map((d) => d.field), ['subject']);
  const bad = throwsCode(t, () => setNodeMessage(w, 'p', { body: 'Hi {{ name' }), 'VALIDATION_ERROR', 'a template that does not parse');
  t.same((bad?.details as { field: string }[]).map((d) => d.field), ['body']);
});

t.test('a complete event campaign activates', async (t) => {
  t.same(activationProblems(spec(), NONE, NOW), []);
  t.same(
    problemFields(spec({
      trigger_config: {
        event_names: ['a', 'b'], debounce: 30, delay_minutes: 0, max_per_user: 3, first_occurrence: false, properties: {},
        filters: [
          { field: 'parameters.plan.tier', operator: 'eq', value: 'pro' },
          { field: 'traits.age', operator: 'gte', value: 18 },
          { field: 'person.email', operator: 'ends_with', value: '@example.com' },
          { field: 'person.locale', operator: 'in', value: ['fr', 'de'] },
          { field: 'traits.vip', operator: 'exists' },
          { field: 'purchase', operator: 'performed_count_between', value: { count: 1, count_max: 3 } },
          { field: 'purchase', operator: 'performed_count_gte', value: { count: 0 } },
        ],
      },
      audience_config: { match: 'any', filters: [{ field: 'traits.city', operator: 'not_in', value: ['Paris'] }] },
    })),
    [],
  );
});

t.test('event trigger: event_names required, non-empty, of names', async (t) => {
  t.same(problemFields(spec({ trigger_config: {} })), ['trigger_config.event_names']);
  t.same(problemFields(spec({ trigger_config: { event_names: [] } })), ['trigger_config.event_names']);
  t.same(problemFields(spec({ trigger_config: { event_names: 'signed_up' } })), ['trigger_config.event_names']);
  t.same(problemFields(spec({ trigger_config: { event_names: ['ok', '', 7] } })), ['trigger_config.event_names.1', 'trigger_config.event_names.2']);
});

t.test('event trigger: first_occurrence cannot go with max_per_user > 1; types of the other fields', async (t) => {
  t.same(problemFields(spec({ trigger_config: { event_names: ['a'], first_occurrence: true, max_per_user: 2 } })), ['trigger_config.first_occurrence']);
  t.same(problemFields(spec({ trigger_config: { event_names: ['a'], first_occurrence: true, max_per_user: 1 } })), []);
  t.same(problemFields(spec({ trigger_config: { event_names: ['a'], first_occurrence: true } })), []);
  t.same(
    problemFields(spec({ trigger_config: { event_names: ['a'], max_per_user: 0, debounce: -1, delay_minutes: '5', first_occurrence: 'yes', properties: [] } })),
    ['trigger_config.debounce', 'trigger_config.delay_minutes', 'trigger_config.first_occurrence', 'trigger_config.max_per_user', 'trigger_config.properties'],
  );
  t.same(problemFields(spec({ trigger_config: { event_names: ['a'], max_per_user: 1.5 } })), ['trigger_config.max_per_user']);
});

t.test('conditions: known operators only, field shapes, value shapes', async (t) => {
  const filters = (...f: unknown[]) => problemFields(spec({ trigger_config: { event_names: ['a'], filters: f } }));
  t.same(filters({ field: 'traits.a', operator: 'like', value: 'x' }), ['trigger_config.filters.0.operator']);
  t.same(filters({ field: 'traits.a', value: 'x' }), ['trigger_config.filters.0.operator']);
  t.same(filters({ field: 'person.name', operator: 'eq', value: 'x' }), ['trigger_config.filters.0.field']);
  t.same(filters({ field: 'traits.', operator: 'eq', value: 'x' }), ['trigger_config.filters.0.field']);
  t.same(filters({ field: 'parameters..a', operator: 'eq', value: 'x' }), ['trigger_config.filters.0.field']);
  t.same(filters({ field: 'plan', operator: 'eq', value: 'x' }), ['trigger_config.filters.0.field']);
  t.same(filters({ operator: 'eq', value: 'x' }), ['trigger_config.filters.0.field']);
  t.same(filters({ field: 'traits.a', operator: 'in', value: 'x' }), ['trigger_config.filters.0.value']);
  t.same(filters({ field: 'traits.a', operator: 'not_in', value: [] }), ['trigger_config.filters.0.value']);
  t.same(filters({ field: 'traits.a', operator: 'gt', value: true }), ['trigger_config.filters.0.value']);
  t.same(filters({ field: 'traits.a', operator: 'starts_with', value: 1 }), ['trigger_config.filters.0.value']);
  t.same(filters({ field: 'traits.a', operator: 'contains', value: {} }), ['trigger_config.filters.0.value']);
  t.same(filters({ field: 'traits.a', operator: 'eq' }), ['trigger_config.filters.0.value']);
  t.same(filters({ field: 'traits.a', operator: 'eq', value: null }), []);
  t.same(filters({ field: 'traits.a', operator: 'not_exists' }), []);
  t.same(filters('x'), ['trigger_config.filters.0']);
  t.same(problemFields(spec({ trigger_config: { event_names: ['a'], filters: {} } })), ['trigger_config.filters']);
});

t.test('conditions: performed_count_* take the event name and {count, count_max}', async (t) => {
  const filters = (...f: unknown[]) => problemFields(spec({ trigger_config: { event_names: ['a'], filters: f } }));
  for (const op of ['performed_count_gte', 'performed_count_lte', 'performed_count_eq']) t.same(filters({ field: 'purchase', operator: op, value: { count: 2 } }), [], op);
  t.same(filters({ field: 'purchase', operator: 'performed_count_eq', value: 2 }), ['trigger_config.filters.0.value']);
  t.same(filters({ field: 'purchase', operator: 'performed_count_eq', value: { count: -1 } }), ['trigger_config.filters.0.value']);
  t.same(filters({ field: '', operator: 'performed_count_eq', value: { count: 1 } }), ['trigger_config.filters.0.field']);
  t.same(filters({ field: 'purchase', operator: 'performed_count_between', value: { count: 3 } }), ['trigger_config.filters.0.value']);
  t.same(filters({ field: 'purchase', operator: 'performed_count_between', value: { count: 3, count_max: 2 } }), ['trigger_config.filters.0.value']);
  t.same(filters({ field: 'purchase', operator: 'performed_count_between', value: { count: 3, count_max: 3 } }), []);
});

t.test('audience conditions see no event: parameters.* refused there; match is all or any', async (t) => {
  t.same(problemFields(spec({ audience_config: { filters: [{ field: 'parameters.plan', operator: 'eq', value: 'x' }] } })), ['audience_config.filters.0.field']);
  t.same(problemFields(spec({ audience_config: { match: 'some' } })), ['audience_config.match']);
  t.same(problemFields(spec({ audience_config: { filters: [{ field: 'traits.x', operator: 'nope' }] } })), ['audience_config.filters.0.operator']);
  t.same(problemFields(spec({ trigger_type: 'webhook', trigger_config: { filters: [{ field: 'parameters.x', operator: 'eq', value: 1 }] } })), ['trigger_config.filters.0.field'], 'nor does a webhook trigger');
});

t.test('webhook: nothing required', async (t) => {
  t.same(problemFields(spec({ trigger_type: 'webhook', trigger_config: {} })), []);
});

t.test('schedule: a future send_at, or cron with an IANA timezone', async (t) => {
  const schedule = (trigger_config: Record<string, unknown>) => problemFields(spec({ trigger_type: 'schedule', trigger_config }));
  t.same(schedule({ send_at: '2030-01-16T09:00:00Z' }), []);
  t.same(schedule({ send_at: '2030-01-16T10:00:00+01:00' }), []);
  t.same(schedule({ send_at: '2030-01-15T11:59:59Z' }), ['trigger_config.send_at'], 'past');
  t.same(schedule({ send_at: 'tomorrow' }), ['trigger_config.send_at']);
  t.same(schedule({ send_at: 1_900_000_000 }), ['trigger_config.send_at']);
  t.same(schedule({}), ['trigger_config.send_at']);
  t.same(schedule({ cron: '0 9 * * 1-5', timezone: 'Europe/Paris' }), []);
  t.same(schedule({ cron: '@daily', timezone: 'UTC' }), []);
  t.same(schedule({ cron: '0 9 * * *' }), ['trigger_config.timezone']);
  t.same(schedule({ cron: '0 9 * * *', timezone: 'Mars/Olympus' }), ['trigger_config.timezone']);
  t.same(schedule({ cron: '61 9 * * *', timezone: 'UTC' }), ['trigger_config.cron']);
  t.same(schedule({ cron: '* * * * * *', timezone: 'UTC' }), ['trigger_config.cron'], 'seconds are refused: five fields');
  t.same(schedule({ cron: '0 0 31 2 *', timezone: 'UTC' }), ['trigger_config.cron'], 'never fires');
  t.same(schedule({ cron: 42, timezone: 'UTC' }), ['trigger_config.cron']);
  t.same(schedule({ send_at: '2030-01-16T09:00:00Z', cron: '0 9 * * *', timezone: 'UTC' }), ['trigger_config.send_at'], 'not both');
});

t.test('cronOf reads a pattern in its time zone', async (t) => {
  // 09:00 in Paris in January is 08:00 UTC.
  t.equal(cronOf('0 9 * * *', 'Europe/Paris').nextRun(new Date(NOW))?.toISOString(), '2030-01-16T08:00:00.000Z');
});

t.test('dynamic_schedule: trait and an integer offset_minutes', async (t) => {
  const dynamic = (trigger_config: Record<string, unknown>) => problemFields(spec({ trigger_type: 'dynamic_schedule', trigger_config }));
  t.same(dynamic({ trait: 'birthday', offset_minutes: -1440 }), []);
  t.same(dynamic({ trait: 'birthday', offset_minutes: 0 }), []);
  t.same(dynamic({}), ['trigger_config.offset_minutes', 'trigger_config.trait']);
  t.same(dynamic({ trait: ' ', offset_minutes: 1.5 }), ['trigger_config.offset_minutes', 'trigger_config.trait']);
});

t.test('workflow: a push node with a title or body, from the node or its template; templates exist and parse', async (t) => {
  t.same(problemFields(spec({ workflow_definition: { nodes: [] } })), ['workflow_definition']);
  t.same(problemFields(spec({ workflow_definition: { nodes: [{ id: 'd', type: 'delay', minutes: 5 }] } })), ['workflow_definition']);
  t.same(problemFields(spec({ workflow_definition: { nodes: [{ id: 'p', type: 'push' }] } })), ['workflow_definition.nodes.0']);
  t.same(problemFields(spec({ workflow_definition: { nodes: [{ id: 'p', type: 'push', title: '  ', image_url: 'https://x' }] } })), ['workflow_definition.nodes.0']);
  t.same(problemFields(spec({ workflow_definition: { nodes: [{ id: 'p', type: 'push', body: 'only a body' }] } })), []);
  const templated = spec({ workflow_definition: { nodes: [{ id: 'p', type: 'push', template_id: T1 }] } });
  t.same(problemFields(templated, new Map([[T1, { channel: 'push' as const, title: 'From the template' }]])), []);
  t.same(problemFields(templated), ['workflow_definition.nodes.0', 'workflow_definition.nodes.0.template_id'], 'a template that is gone');
  t.same(problemFields(spec({ workflow_definition: { nodes: [{ id: 'p', type: 'push', title: '{% if %}' }] } })), ['workflow_definition.nodes.0.title'], 'a template that does not parse');
});

t.test('every problem is listed at once', async (t) => {
  const problems = activationProblems(
    spec({
      trigger_config: { first_occurrence: true, max_per_user: 5, filters: [{ field: 'traits.a', operator: 'like', value: 1 }] },
      audience_config: { match: 'most' },
      workflow_definition: { nodes: [] },
    }),
    NONE,
    NOW,
  );
  t.same(problems.map((p) => p.field).sort(), [
    'audience_config.match', 'trigger_config.event_names', 'trigger_config.filters.0.operator', 'trigger_config.first_occurrence', 'workflow_definition',
  ]);
  for (const p of problems) t.type(p.message, 'string');
});

t.test('status moves: any settable status from any state; activation checked when going or staying live', async (t) => {
  const statuses: CampaignStatus[] = ['draft', 'scheduled', 'active', 'paused', 'completed', 'archived', 'failed'];
  const invalid = spec({ trigger_config: {} });
  for (const from of statuses) {
    for (const to of ['draft', 'paused', 'archived', 'completed'] as const) {
      t.equal(settleStatus(from, to, invalid, NONE, true, NOW), to, `${from} → ${to} needs nothing`);
    }
    t.equal(settleStatus(from, 'active', spec(), NONE, false, NOW), 'active', `${from} → active`);
    const err = throwsCode(t, () => settleStatus(from, 'active', invalid, NONE, false, NOW), 'ACTIVATION_FAILED', `${from} → active, invalid`);
    t.same(err?.details, [{ field: 'trigger_config.event_names', message: 'is required: a non-empty array of event names' }]);
  }
  // A schedule with a future send_at shows `scheduled`; with cron it is `active`.
  t.equal(settleStatus('draft', 'active', spec({ trigger_type: 'schedule', trigger_config: { send_at: '2030-02-01T00:00:00Z' } }), NONE, false, NOW), 'scheduled');
  t.equal(settleStatus('draft', 'active', spec({ trigger_type: 'schedule', trigger_config: { cron: '0 9 * * *', timezone: 'UTC' } }), NONE, false, NOW), 'active');
  // No status sent: a live campaign whose rules' inputs change is checked again; otherwise nothing is.
  throwsCode(t, () => settleStatus('active', undefined, invalid, NONE, true, NOW), 'ACTIVATION_FAILED', 'live, inputs changed');
  t.equal(settleStatus('scheduled', undefined, spec({ trigger_type: 'schedule', trigger_config: { cron: '0 9 * * *', timezone: 'UTC' } }), NONE, true, NOW), 'active', 'send_at replaced by cron');
  t.equal(settleStatus('active', undefined, invalid, NONE, false, NOW), 'active', 'live, only the name changed');
  t.equal(settleStatus('draft', undefined, invalid, NONE, true, NOW), 'draft', 'a draft may be anything');
});

t.test('deleting: refused for active and scheduled campaigns', async (t) => {
  for (const s of ['active', 'scheduled'] as const) throwsCode(t, () => checkDeletable(s), 'CAMPAIGN_ACTIVE', s);
  for (const s of ['draft', 'paused', 'archived', 'completed', 'failed'] as const) t.doesNotThrow(() => checkDeletable(s), s);
});

t.test('the run a schedule campaign has due', async (t) => {
  const at = (iso: string) => Date.parse(iso);
  const sendAt = { send_at: '2030-01-15T12:00:00+01:00' };
  t.equal(dueScheduledRun(sendAt, null, at('2030-01-15T10:59:59Z')), null, 'send_at not reached');
  t.same(dueScheduledRun(sendAt, null, at('2030-01-15T11:00:00Z')), { key: 'at:2030-01-15T11:00:00.000Z', at: new Date('2030-01-15T11:00:00Z') }, 'at send_at, keyed by the instant');
  t.same(dueScheduledRun(sendAt, null, at('2030-03-01T00:00:00Z'))?.key, 'at:2030-01-15T11:00:00.000Z', 'long after: the same run (it runs once)');

  // 09:00 Paris is 08:00 UTC in January.
  const cron = { cron: '0 9 * * *', timezone: 'Europe/Paris' };
  const live = new Date('2030-01-10T12:00:00Z');
  t.equal(dueScheduledRun(cron, live, at('2030-01-11T07:59:00Z')), null, 'no tick since it went live');
  t.same(dueScheduledRun(cron, live, at('2030-01-11T08:00:30Z')), { key: 'cron:2030-01-11T08:00:00.000Z', at: new Date('2030-01-11T08:00:00Z') }, 'the tick just passed');
  t.equal(dueScheduledRun(cron, live, at('2030-01-14T10:00:00Z'))?.key, 'cron:2030-01-14T08:00:00.000Z', 'ticks missed meanwhile: only the latest');
  t.equal(dueScheduledRun(cron, new Date('2030-01-14T09:00:00Z'), at('2030-01-14T10:00:00Z')), null, 'a tick before the campaign went live is not run');
  t.equal(dueScheduledRun({ cron: '0 9 * * *', timezone: 'Nowhere/Else' }, live, at('2030-01-14T10:00:00Z')), null, 'an unreadable pattern runs nothing');
  t.equal(dueScheduledRun({}, live, NOW), null, 'neither send_at nor cron');
});

t.test('what stops a run: the audience and the workflow, not send_at being past', async (t) => {
  const past = spec({ trigger_type: 'schedule', trigger_config: { send_at: '2020-01-01T00:00:00Z' } });
  t.same(runProblems(past, NONE), [], 'a passed send_at does not stop its own run');
  t.same(runProblems(spec({ workflow_definition: { nodes: [{ id: 'p', type: 'push' }] } }), NONE).map((p) => p.field), ['workflow_definition.nodes.0']);
  t.same(runProblems(spec({ audience_config: { match: 'some' } }), NONE).map((p) => p.field), ['audience_config.match']);
});
