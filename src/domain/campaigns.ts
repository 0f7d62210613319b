// Campaign rules (docs/campaigns-runtime.md; README, Request bodies and Routes): the statuses a user may set,
// what a campaign must satisfy to go live, and where a push node's content comes from.
// Validation is lenient at creation (only known-bad keys and a malformed workflow are refused)
// and strict at activation, which lists every problem at once. Pure: the handlers load the
// campaign and its templates and store what these rules decide.
import { Cron } from 'croner';
import { DomainError, InvalidInput, fieldProblems, type FieldError } from './errors.js';
import { compileContent, compileFields, renderContent, type PushContent, type TemplateScope } from './templates.js';
import { isTimeZone } from './send-policy.js';
import { parseDuration, parseTimestamp } from './time.js';
import { CONDITION_OPERATORS, COUNT_OPERATORS, PERSON_FIELDS, isUuidText, type AudienceConfig, type Condition } from './conditions.js';
import { graphProblems, type Branch } from './journeys.js';
import type { AddressChannel, Channel } from './messages.js';

export const TRIGGER_TYPES = ['event', 'webhook', 'schedule', 'dynamic_schedule'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'active', 'paused', 'completed', 'archived', 'failed'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** What PUT may set; `scheduled` and `failed` are set only by the system (README, Routes). */
export const SETTABLE_STATUSES = ['draft', 'active', 'paused', 'archived', 'completed'] as const;
export type SettableStatus = (typeof SETTABLE_STATUSES)[number];

/** Statuses in which a campaign sends: it cannot be deleted, nor can a template it uses (docs/campaigns-runtime.md). */
export const LIVE_STATUSES = ['active', 'scheduled'] as const satisfies readonly CampaignStatus[];
const isLive = (s: CampaignStatus): boolean => (LIVE_STATUSES as readonly string[]).includes(s);

/**
 * A durable job's state (store/job-queue.ts): waiting for its due time, or claimed and running.
 * The job tables' own states begin with these two (the `messages` table names them with its record
 * statuses, `scheduled` and `sending`); the rest are how a job finished.
 */
export const JOB_STATES = ['waiting', 'running'] as const;

/** A schedule run's state (campaign_runs.state): a job walking its audience a page at a time, then enrolled or failed. */
export const CAMPAIGN_RUN_STATES = [...JOB_STATES, 'enrolled', 'failed'] as const;
/** How a run ends. */
export type FinishedRunState = Exclude<(typeof CAMPAIGN_RUN_STATES)[number], (typeof JOB_STATES)[number]>;

/**
 * Where an enrolment is in its workflow (campaign_enrolments.state): a job due at its next node or
 * claimed by an executor, then finished or cut short (`converted`: its person reached the campaign's goal).
 */
export const ENROLMENT_STATES = [...JOB_STATES, 'done', 'stopped', 'held_out', 'converted'] as const;

/** The kinds of workflow node (docs/campaigns-runtime.md; docs/channels.md). */
export const NODE_TYPES = ['push', 'delay', 'email', 'sms', 'webhook', 'split', 'wait_for_event', 'random_split', 'exit'] as const;
/** The node types that send a message. */
const MESSAGE_TYPES: ReadonlySet<string> = new Set(['push', 'email', 'sms', 'webhook']);
/** Whether a node sends a message (not a delay, a split or an exit). */
export const isMessageNode = (n: WorkflowNode): n is MessageNode => MESSAGE_TYPES.has(n.type);

/** The content fields of a push node and of a message template. */
export const CONTENT_FIELDS = ['title', 'body', 'image_url', 'action_url', 'custom_data'] as const;
/** An email node's and an email template's fields (docs/channels.md); an SMS node uses `body`. */
export const EMAIL_FIELDS = ['subject', 'html', 'text', 'preheader'] as const;
/** A webhook node's Liquid fields (docs/channels.md); its `method` and `headers` are sent as written. */
export const WEBHOOK_FIELDS = ['url', 'body'] as const;
/** The fields each node type takes from node-messages and templates (docs/channels.md). */
export const NODE_FIELDS = { push: CONTENT_FIELDS, email: EMAIL_FIELDS, sms: ['body'], webhook: WEBHOOK_FIELDS } as const;
/**
 * What a message node of a channel with one address a person must have to be activated: each
 * group needs one of its fields non-empty (its own or its template's). Declared here, beside the
 * node types, so that activation (pure) checks every such channel with one rule.
 */
const NODE_REQUIRED: Readonly<Record<AddressChannel, readonly (readonly string[])[]>> = { email: [['subject'], ['html', 'text']], sms: [['body']] };
/** Whether a node is a message on a channel with one address a person (not push, not a delay). */
export const isAddressNode = (n: { type: string }): n is EmailNode | SmsNode => Object.hasOwn(NODE_REQUIRED, n.type);

export interface PushNode extends PushContent {
  id: string;
  type: 'push';
  template_id?: string;
  /** A topic of the workspace: its people not subscribed are skipped (docs/audiences.md). */
  topic_id?: string;
  bypass_frequency_cap?: boolean;
  /** The node that follows (journeys.ts); without it, the node after this one in the list. */
  next?: string;
}
interface DelayNode {
  id: string;
  type: 'delay';
  minutes: number;
  next?: string;
}
/** Evaluated for the person when they reach it (docs/campaigns-runtime.md, Journeys): `yes` when the condition holds, else `no`. */
export interface SplitNode {
  id: string;
  type: 'split';
  /** One condition {field, operator, value}, or an audience {filters, match} or {segment_id}. */
  condition: Condition | AudienceConfig;
  yes: string;
  no: string;
}
/**
 * Waits for the person's event (docs/campaigns-runtime.md, Journeys): one named `event_name`
 * passing `filters` moves them to `on_event`; none within `timeout` (a duration, e.g. `2d`), to `on_timeout`.
 */
export interface WaitForEventNode {
  id: string;
  type: 'wait_for_event';
  event_name: string;
  /** Conditions on the awaited event (parameters.*) and the person (traits.*, person.*), all to hold. */
  filters?: Condition[];
  timeout: string;
  on_event: string;
  on_timeout: string;
}
/** Each enrolment takes one branch, chosen by weight from a hash of its id (journeys.ts). */
export interface RandomSplitNode {
  id: string;
  type: 'random_split';
  branches: Branch[];
}
/** Ends the journey. */
interface ExitNode {
  id: string;
  type: 'exit';
}
/** An email node's activation needs `subject` and one of `html`, `text`. */
export interface EmailNode {
  id: string;
  type: 'email';
  subject?: string;
  html?: string;
  text?: string;
  preheader?: string;
  template_id?: string;
  topic_id?: string;
  next?: string;
}
export interface SmsNode {
  id: string;
  type: 'sms';
  body?: string;
  template_id?: string;
  topic_id?: string;
  next?: string;
}
/** A call to the sender's own system, one per person (docs/channels.md): activation needs `url`, and a `body` that renders to JSON. */
export interface WebhookNode {
  id: string;
  type: 'webhook';
  url?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Takes no template. */
  template_id?: never;
  topic_id?: string;
  next?: string;
}
export type WorkflowNode = PushNode | DelayNode | EmailNode | SmsNode | WebhookNode | SplitNode | WaitForEventNode | RandomSplitNode | ExitNode;
export interface Workflow {
  nodes: WorkflowNode[];
}

/** What activation looks at. */
export interface CampaignSpec {
  trigger_type: TriggerType;
  trigger_config: Record<string, unknown>;
  audience_config: Record<string, unknown>;
  workflow_definition: Workflow;
}

/** A template's content: push fields, email fields (docs/channels.md), and its channel. */
export type TemplateContent = PushContent & { channel: Channel; subject?: string; html?: string; text?: string; preheader?: string };
/** Templates by id: what nodes naming them get. */
export type Templates = ReadonlyMap<string, TemplateContent>;

const has = (o: object, key: string): boolean => Object.hasOwn(o, key);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const nonEmptyString = (v: unknown, max = 255): v is string => typeof v === 'string' && v.trim().length > 0 && v.length <= max;

/** Keys refused on create and update whatever the status: `event_name` became `event_names` (README, Request bodies). */
export function refuseKnownBadKeys(triggerConfig: Record<string, unknown>): void {
  if (has(triggerConfig, 'event_name')) {
    throw new DomainError(
      'INVALID_TRIGGER_CONFIG',
      'trigger_config.event_name was replaced by event_names, an array of event names: send "event_names": ["<event>"]',
      [{ field: 'trigger_config.event_name', message: 'was replaced by event_names (an array of event names)' }],
    );
  }
}

/**
 * A workflow as stored: node ids unique and every delay with its minutes (what its schema
 * cannot say), template ids in lower case. Anything else is left to activation.
 */
export function normalizeWorkflow(workflow: Workflow): Workflow {
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  workflow.nodes.forEach((node, i) => {
    if (seen.has(node.id)) problems.push({ field: `workflow_definition.nodes.${i}.id`, message: `repeats node id ${node.id}` });
    seen.add(node.id);
    if (node.type === 'delay' && node.minutes === undefined) problems.push({ field: `workflow_definition.nodes.${i}.minutes`, message: 'is required on a delay node' });
  });
  if (problems.length > 0) throw new InvalidInput(`workflow_definition is invalid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
  return { ...workflow, nodes: workflow.nodes.map((n) => (isMessageNode(n) && n.template_id !== undefined ? { ...n, template_id: n.template_id.toLowerCase() } : n)) };
}

/**
 * The workflow a new campaign starts with. With `templateId`, its push nodes that name no
 * template use that one, and with no workflow it is a single push node using it (docs/campaigns-runtime.md).
 */
export function initialWorkflow(workflow: Workflow | undefined, templateId: string | undefined): Workflow {
  if (templateId === undefined) return workflow ?? { nodes: [] };
  if (workflow === undefined) return { nodes: [{ id: 'push', type: 'push', template_id: templateId }] };
  return { ...workflow, nodes: workflow.nodes.map((n) => (n.type === 'push' && n.template_id === undefined ? { ...n, template_id: templateId } : n)) };
}

/** A push node's content: its template's fields, each overridden by the node's own. */
export function nodeContent(node: PushNode, templates: Templates): PushContent {
  const template = node.template_id === undefined ? undefined : templates.get(node.template_id);
  const content: PushContent = {};
  for (const key of CONTENT_FIELDS) {
    const value = node[key] ?? template?.[key];
    if (value !== undefined && value !== null) (content as Record<string, unknown>)[key] = value;
  }
  return content;
}

/** The template ids a workflow's push nodes name. */
export function templateIdsOf(workflow: Workflow): string[] {
  return [...new Set(workflow.nodes.flatMap((n) => (isMessageNode(n) && n.template_id !== undefined ? [n.template_id] : [])))];
}

/** A node-messages body: fields sent replace the node's, `null` removes one, omitted stay. */
export type NodeMessage = { [K in (typeof CONTENT_FIELDS)[number]]?: PushContent[K] | null } & { [K in (typeof EMAIL_FIELDS | typeof WEBHOOK_FIELDS)[number]]?: string | null };
/** The nodes that carry a message. */
export type MessageNode = PushNode | EmailNode | SmsNode | WebhookNode;

/**
 * The workflow with node `nodeId`'s content changed (docs/channels.md: each node type takes its own
 * fields: push title, body, image_url, action_url, custom_data; email subject, html, text,
 * preheader; sms body). A field of another node type is a 400 naming it, as is new content that
 * does not parse.
 */
export function setNodeMessage(workflow: Workflow, nodeId: string, change: NodeMessage): { workflow: Workflow; node: MessageNode } {
  const index = workflow.nodes.findIndex((n) => n.id === nodeId);
  if (index < 0) throw new DomainError('NOT_FOUND', `This campaign's workflow has no node ${nodeId}`);
  const current = workflow.nodes[index]!;
  if (!isMessageNode(current)) {
    throw new InvalidInput(`Node ${nodeId} is a ${current.type} node; only push nodes, email nodes and sms nodes carry a message`, [{ field: 'nodeId', message: `names a ${current.type} node, not a push, email or sms node` }]);
  }
  const fields: readonly string[] = NODE_FIELDS[current.type];
  const foreign = Object.keys(change).filter((k) => !fields.includes(k));
  if (foreign.length > 0) {
    const kind = `${current.type === 'push' ? 'a' : 'an'} ${current.type} node`;
    const takes = `${kind} takes ${fields.join(', ')}`;
    throw new InvalidInput(`${foreign.join(', ')}: not a field of ${current.type} node ${nodeId} (${takes})`, foreign.map((field) => ({ field, message: `is not a field of ${kind} (${takes})` })));
  }
  const node = { ...current } as Record<string, unknown>;
  const set: Record<string, unknown> = {};
  for (const key of fields) {
    if (!has(change, key)) continue;
    const value = (change as Record<string, unknown>)[key];
    if (value === null || value === undefined) delete node[key];
    else node[key] = set[key] = value;
  }
  // Only what this request sets: content stored earlier is checked at activation.
  if (current.type === 'push') compileContent(set);
  else {
    const problems = liquidProblems(set as Record<string, string>, '');
    if (problems.length > 0) throw new InvalidInput(`Not a valid template: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
  }
  const nodes = workflow.nodes.slice();
  nodes[index] = node as unknown as MessageNode;
  return { workflow: { ...workflow, nodes }, node: node as unknown as MessageNode };
}

/**
 * The status a campaign is left in by an update: `target`, or the current status when none
 * was sent. Going live (`active`, or staying live while the rules' inputs change) runs the
 * activation rules, so no update leaves a live campaign that could not have been activated;
 * a `schedule` campaign with a future `send_at` then shows `scheduled` (docs/campaigns-runtime.md).
 */
export function settleStatus(current: CampaignStatus, target: SettableStatus | undefined, spec: CampaignSpec, templates: Templates, rulesInputsChanged: boolean, now: number): CampaignStatus {
  const recheck = target === 'active' || (target === undefined && isLive(current) && rulesInputsChanged);
  if (!recheck) return target ?? current;
  const problems = activationProblems(spec, templates, now);
  if (problems.length > 0) throw fieldProblems('ACTIVATION_FAILED', 'The campaign cannot be activated', problems);
  return spec.trigger_type === 'schedule' && spec.trigger_config.send_at !== undefined ? 'scheduled' : 'active';
}

/** Deleting is for campaigns that cannot send (docs/campaigns-runtime.md). */
export function checkDeletable(status: CampaignStatus): void {
  if (isLive(status)) throw new DomainError('CAMPAIGN_ACTIVE', `The campaign is ${status}: pause it before deleting it`);
}

/** Every reason the campaign cannot go live, each naming its field; empty when it can. */
export function activationProblems(spec: CampaignSpec, templates: Templates, now: number): FieldError[] {
  return [
    ...triggerProblems(spec.trigger_type, spec.trigger_config, now),
    ...audienceProblems(spec.audience_config),
    ...workflowProblems(spec.workflow_definition, templates),
  ];
}

/**
 * Why a live campaign's run cannot start (it becomes `failed`: docs/campaigns-runtime.md): what activation
 * checks of its audience and workflow, which templates changed since may have broken.
 */
export function runProblems(spec: CampaignSpec, templates: Templates): FieldError[] {
  return [...audienceProblems(spec.audience_config), ...workflowProblems(spec.workflow_definition, templates)];
}

function triggerProblems(type: TriggerType, cfg: Record<string, unknown>, now: number): FieldError[] {
  const problems: FieldError[] = [];
  const at = (key: string) => `trigger_config.${key}`;
  const problem = (key: string, message: string) => problems.push({ field: at(key), message });
  if (has(cfg, 'filters')) problems.push(...conditionProblems(cfg.filters, at('filters'), type === 'event'));
  switch (type) {
    case 'event': {
      const names = cfg.event_names;
      if (!Array.isArray(names) || names.length === 0) problem('event_names', 'is required: a non-empty array of event names');
      else names.forEach((n, i) => nonEmptyString(n) || problem(`event_names.${i}`, 'must be an event name (1 to 255 characters)'));
      if (has(cfg, 'properties') && !isObject(cfg.properties)) problem('properties', 'must be an object');
      for (const key of ['debounce', 'delay_minutes']) {
        if (has(cfg, key) && !(typeof cfg[key] === 'number' && cfg[key] >= 0)) problem(key, 'must be a number ≥ 0');
      }
      const max = cfg.max_per_user;
      if (has(cfg, 'max_per_user') && !(Number.isInteger(max) && (max as number) >= 1)) problem('max_per_user', 'must be an integer ≥ 1');
      if (has(cfg, 'first_occurrence') && typeof cfg.first_occurrence !== 'boolean') problem('first_occurrence', 'must be true or false');
      if (cfg.first_occurrence === true && typeof max === 'number' && max > 1) {
        problem('first_occurrence', 'cannot be combined with max_per_user > 1: a first occurrence enrols a person once');
      }
      break;
    }
    case 'webhook':
      break;
    case 'schedule': {
      const hasSendAt = has(cfg, 'send_at');
      const hasCron = has(cfg, 'cron');
      if (hasSendAt && hasCron) problem('send_at', 'and cron cannot both be set: one run at send_at, or a run per cron tick');
      else if (!hasSendAt && !hasCron) problem('send_at', 'is required (an ISO 8601 instant in the future), or cron with timezone');
      if (hasSendAt) {
        const sendAt = typeof cfg.send_at === 'string' ? parseTimestamp(cfg.send_at) : null;
        if (sendAt === null) problem('send_at', 'must be an ISO 8601 date-time with a time zone');
        else if (sendAt <= now) problem('send_at', 'must be in the future');
      }
      if (hasCron) {
        const tz = cfg.timezone;
        const tzOk = typeof tz === 'string' && isTimeZone(tz);
        if (!has(cfg, 'timezone')) problem('timezone', 'is required with cron (an IANA name, e.g. Europe/Paris)');
        else if (!tzOk) problem('timezone', 'must be an IANA time zone name, e.g. Europe/Paris');
        const cronProblem = typeof cfg.cron === 'string' ? cronPatternProblem(cfg.cron, tzOk ? (tz) : 'UTC') : 'must be a cron pattern';
        if (cronProblem) problem('cron', cronProblem);
      }
      break;
    }
    case 'dynamic_schedule':
      if (!nonEmptyString(cfg.trait)) problem('trait', 'is required: the trait holding each person\'s date');
      if (!Number.isInteger(cfg.offset_minutes)) problem('offset_minutes', 'is required: an integer number of minutes (negative: before the date)');
      break;
  }
  return problems;
}

/**
 * A `schedule` campaign's cron: five fields (minute hour day-of-month month day-of-week) or a
 * nickname such as `@daily`, in `timezone`. The one reading of a pattern, for activation and runs.
 */
export function cronOf(pattern: string, timezone: string): Cron {
  return new Cron(pattern, { timezone, mode: '5-part', paused: true });
}

/** A `schedule` campaign's run: its key (unique per campaign, so it runs once) and when it is due. */
export interface ScheduledRun {
  key: string;
  at: Date;
}

/**
 * The run of a live `schedule` campaign due at `now`, if any: its `send_at` once passed; with
 * `cron`, the latest tick at or before now and after the campaign went live (`liveSince`), so
 * ticks missed while no Herald ran are not run one by one: the latest of them runs once.
 */
export function dueScheduledRun(cfg: Record<string, unknown>, liveSince: Date | null, now: number): ScheduledRun | null {
  if (typeof cfg.send_at === 'string') {
    const at = parseTimestamp(cfg.send_at);
    return at !== null && at <= now ? { key: `at:${new Date(at).toISOString()}`, at: new Date(at) } : null;
  }
  if (typeof cfg.cron !== 'string' || typeof cfg.timezone !== 'string') return null;
  let tick: Date | undefined;
  try {
    tick = cronOf(cfg.cron, cfg.timezone).previousRuns(1, new Date(now))[0];
  } catch {
    return null; // activation refuses such a pattern
  }
  if (tick === undefined || (liveSince !== null && tick.getTime() <= liveSince.getTime())) return null;
  return { key: `cron:${tick.toISOString()}`, at: tick };
}

function cronPatternProblem(pattern: string, timezone: string): string | undefined {
  let cron: Cron;
  try {
    cron = cronOf(pattern, timezone);
  } catch (err) {
    return `is not a 5-field cron pattern (minute hour day-of-month month day-of-week) or nickname: ${(err as Error).message}`;
  }
  return cron.nextRun() === null ? 'never fires' : undefined;
}

/** What is wrong with an audience_config (docs/campaigns-runtime.md), each problem naming its field; empty when nothing. */
export function audienceProblems(audience: Record<string, unknown>): FieldError[] {
  const problems: FieldError[] = [];
  if (has(audience, 'segment_id')) {
    // A segment's members are the audience: conditions beside it would be a second, silent rule.
    if (typeof audience.segment_id !== 'string' || !isUuidText(audience.segment_id)) problems.push({ field: 'audience_config.segment_id', message: 'must be a segment id (a UUID)' });
    if (has(audience, 'filters') || has(audience, 'match')) problems.push({ field: 'audience_config', message: 'takes segment_id or filters, not both' });
    return problems;
  }
  if (has(audience, 'filters')) problems.push(...conditionProblems(audience.filters, 'audience_config.filters', false));
  if (has(audience, 'match') && audience.match !== 'all' && audience.match !== 'any') problems.push({ field: 'audience_config.match', message: 'must be all or any' });
  return problems;
}

/**
 * Conditions (docs/campaigns-runtime.md): `{field, operator, value}`. `parameters.<path>` reads the
 * triggering event, so it exists only where there is one (`eventFields`: an event trigger's
 * filters); the performed_count_* operators take an event name as field and `{count, count_max}`.
 */
function conditionProblems(conditions: unknown, at: string, eventFields: boolean): FieldError[] {
  if (!Array.isArray(conditions)) return [{ field: at, message: 'must be an array of conditions {field, operator, value}' }];
  const problems: FieldError[] = [];
  conditions.forEach((c, i) => {
    const here = `${at}.${i}`;
    const problem = (key: string, message: string) => problems.push({ field: `${here}.${key}`, message });
    if (!isObject(c)) return problems.push({ field: here, message: 'must be an object {field, operator, value}' });
    const { field, operator, value } = c;
    if (typeof operator !== 'string' || !(CONDITION_OPERATORS as readonly string[]).includes(operator)) return problem('operator', `is not a known operator; known: ${CONDITION_OPERATORS.join(', ')}`);
    if ((COUNT_OPERATORS as readonly string[]).includes(operator)) {
      if (!nonEmptyString(field)) problem('field', 'must be the event name whose occurrences are counted');
      const count = isObject(value) ? value.count : undefined;
      // At most 2^53 - 1: the counts are compared as PostgreSQL bigints, which 1e30 is not.
      if (!Number.isSafeInteger(count) || (count as number) < 0) problem('value', 'must be {count} with count an integer from 0 to 2^53 - 1');
      else if (operator === 'performed_count_between') {
        const countMax = (value as Record<string, unknown>).count_max;
        if (!Number.isSafeInteger(countMax) || (countMax as number) < (count as number)) problem('value', 'must be {count, count_max} with count_max an integer from count to 2^53 - 1');
      }
      return;
    }
    const fieldProblem = conditionFieldProblem(field, eventFields);
    if (fieldProblem) problem('field', fieldProblem);
    const valueProblem = conditionValueProblem(operator, c);
    if (valueProblem) problem('value', valueProblem);
  });
  return problems;
}

function conditionFieldProblem(field: unknown, eventFields: boolean): string | undefined {
  if (typeof field !== 'string') return 'is required';
  if (field.startsWith('parameters.')) {
    if (!eventFields) return 'parameters.* reads the triggering event, which only an event trigger has';
    return validPath(field) ? undefined : 'must be parameters.<path>';
  }
  if (field.startsWith('traits.')) return validPath(field) ? undefined : 'must be traits.<path>';
  if (field.startsWith('person.') && PERSON_FIELDS.includes(field.slice('person.'.length))) return undefined;
  return `must be ${eventFields ? 'parameters.<path>, ' : ''}traits.<path> or person.${PERSON_FIELDS.join('|')}`;
}

/** `parameters.a.b`: a prefix and one or more non-empty segments. */
const validPath = (field: string): boolean => field.split('.').slice(1).every((s) => s.length > 0);

function conditionValueProblem(operator: string, c: Record<string, unknown>): string | undefined {
  const value = c.value;
  switch (operator) {
    case 'exists':
    case 'not_exists':
      return undefined;
    case 'in':
    case 'not_in':
      return Array.isArray(value) && value.length > 0 && value.every(isScalar) ? undefined : 'must be a non-empty array of strings, numbers or booleans';
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return typeof value === 'number' || typeof value === 'string' ? undefined : 'must be a number or a string';
    case 'starts_with':
    case 'ends_with':
      return typeof value === 'string' ? undefined : 'must be a string';
    case 'contains':
    case 'not_contains':
      return isScalar(value) ? undefined : 'must be a string, number or boolean';
    default: // eq, neq
      return isScalar(value) || value === null ? undefined : 'is required: a string, number, boolean or null';
  }
}

function workflowProblems(workflow: Workflow, templates: Templates): FieldError[] {
  const problems: FieldError[] = [...graphProblems(workflow.nodes), ...splitProblems(workflow), ...waitProblems(workflow)];
  const push = workflow.nodes.flatMap((n, i) => (n.type === 'push' ? [{ node: n, at: `workflow_definition.nodes.${i}` }] : []));
  problems.push(...channelNodeProblems(workflow, templates), ...webhookNodeProblems(workflow));
  if (push.length === 0 && !workflow.nodes.some((n) => isAddressNode(n) || n.type === 'webhook')) problems.push({ field: 'workflow_definition', message: 'has no push node: add one with a title or body (or a template_id)' });
  for (const { node, at } of push) {
    if (node.template_id !== undefined && templates.get(node.template_id)?.channel !== 'push') {
      problems.push({ field: `${at}.template_id`, message: templates.has(node.template_id) ? 'names an email or SMS template: a push node needs a push template' : 'names no message template of this workspace' });
    }
    const content = nodeContent(node, templates);
    if (!content.title?.trim() && !content.body?.trim()) {
      problems.push({ field: at, message: `push node ${node.id} has neither title nor body: set them with PUT /workspaces/{workspaceId}/campaigns/{campaignId}/node-messages/${node.id} or a template` });
    }
    try {
      compileContent(content);
    } catch (err) {
      if (!(err instanceof InvalidInput)) throw err;
      problems.push(...err.fields.map((f) => ({ field: `${at}.${f.field}`, message: f.message })));
    }
  }
  return problems;
}

/** The audience a split node evaluates: its one condition as a one-filter audience, or the audience it holds. */
export function splitAudience(node: SplitNode): AudienceConfig {
  const c = node.condition as Partial<Condition>;
  return typeof c.field === 'string' || typeof c.operator === 'string' ? { filters: [c as Condition] } : (node.condition as AudienceConfig);
}

/** A split's condition: a condition or an audience, checked as audiences are (no `parameters.*`: it is the person now). */
function splitProblems(workflow: Workflow): FieldError[] {
  return workflow.nodes.flatMap((n, i): FieldError[] => {
    if (n.type !== 'split') return [];
    const at = `workflow_definition.nodes.${i}.condition`;
    if (!isObject(n.condition)) return [{ field: at, message: `is required on split node ${n.id}: a condition {field, operator, value} or {filters, match} or {segment_id}` }];
    const audience = splitAudience(n);
    const problems = audienceProblems(audience as Record<string, unknown>).map((p) => ({ field: p.field.replace(/^audience_config/, at), message: `${p.message} (split node ${n.id})` }));
    if (!has(audience, 'segment_id') && !(Array.isArray(audience.filters) && audience.filters.length > 0)) problems.push({ field: at, message: `split node ${n.id} has no condition` });
    return problems;
  });
}

/** The longest a wait_for_event waits: a year. */
const MAX_WAIT_MS = 365 * 86_400_000;

/** A wait's event name, its timeout (a duration up to a year) and its filters, checked as an event trigger's. */
function waitProblems(workflow: Workflow): FieldError[] {
  return workflow.nodes.flatMap((n, i): FieldError[] => {
    if (n.type !== 'wait_for_event') return [];
    const at = `workflow_definition.nodes.${i}`;
    const problems: FieldError[] = [];
    if (!nonEmptyString(n.event_name)) problems.push({ field: `${at}.event_name`, message: `is required on wait_for_event node ${n.id}: the event name waited for (1 to 255 characters)` });
    const timeout = parseDuration(n.timeout);
    if (n.timeout === undefined) problems.push({ field: `${at}.timeout`, message: `is required on wait_for_event node ${n.id}: a duration such as 30m, 12h or 2d` });
    else if (timeout === null || timeout <= 0 || timeout > MAX_WAIT_MS) problems.push({ field: `${at}.timeout`, message: `must be a duration above 0 and up to 365d (a whole number and a unit: ms, s, m, h, d), on wait_for_event node ${n.id}` });
    if (has(n, 'filters')) problems.push(...conditionProblems(n.filters, `${at}.filters`, true).map((p) => ({ ...p, message: `${p.message} (wait_for_event node ${n.id})` })));
    // Counts would need the event stored first, which the resume (on the ingest path) does not wait for.
    (Array.isArray(n.filters) ? n.filters : []).forEach((c, j) => {
      if ((COUNT_OPERATORS as readonly string[]).includes((c as Partial<Condition>).operator ?? '')) problems.push({ field: `${at}.filters.${j}.operator`, message: `performed_count_* is not available on a wait (wait_for_event node ${n.id})` });
    });
    return problems;
  });
}

/** The Liquid fields of an email or SMS node, by name: its template's (of its channel), each overridden by the node's own. */
export function channelFields(node: EmailNode | SmsNode, templates: Templates): Record<string, string> {
  const names = NODE_FIELDS[node.type];
  const template = node.template_id === undefined ? undefined : templates.get(node.template_id);
  const base = template?.channel === node.type ? (template as unknown as Record<string, unknown>) : {};
  const out: Record<string, string> = {};
  for (const k of names) {
    const v = (node as unknown as Record<string, unknown>)[k] ?? base[k];
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/** A message node needs its channel's required fields (NODE_REQUIRED); every field must parse as Liquid. */
function channelNodeProblems(workflow: Workflow, templates: Templates): FieldError[] {
  return workflow.nodes.flatMap((n, i): FieldError[] => {
    if (!isAddressNode(n)) return [];
    const at = `workflow_definition.nodes.${i}`;
    const f = channelFields(n, templates);
    const problems: FieldError[] = [];
    const template = n.template_id === undefined ? undefined : templates.get(n.template_id);
    if (n.template_id !== undefined && template?.channel !== n.type) problems.push({ field: `${at}.template_id`, message: `names no ${n.type} template of this workspace` });
    for (const group of NODE_REQUIRED[n.type]) {
      if (group.some((k) => f[k]?.trim())) continue;
      problems.push(group.length === 1 ? { field: `${at}.${group[0]!}`, message: `is required on ${n.type} node ${n.id}` } : { field: at, message: `${n.type} node ${n.id} has neither ${group.join(' nor ')}` });
    }
    problems.push(...liquidProblems(f, `${at}.`));
    return problems;
  });
}

/** What a webhook node's body is rendered with at activation: no variables, an empty person. */
const SAMPLE_SCOPE: TemplateScope = { variables: {}, person: {}, traits: {}, event: {}, trigger: {} };

/** A webhook node needs an http(s) `url`, and a `body` (if any) that is JSON once rendered with an empty sample. */
function webhookNodeProblems(workflow: Workflow): FieldError[] {
  return workflow.nodes.flatMap((n, i): FieldError[] => {
    if (n.type !== 'webhook') return [];
    const at = `workflow_definition.nodes.${i}`;
    const problems: FieldError[] = [];
    if (!n.url?.trim()) problems.push({ field: `${at}.url`, message: `is required on webhook node ${n.id}` });
    else if (!/^https?:\/\//i.test(n.url.trim())) problems.push({ field: `${at}.url`, message: 'must be an http or https URL' });
    const fields = { url: n.url ?? '', body: n.body ?? '' };
    const liquid = liquidProblems(fields, `${at}.`);
    if (liquid.length > 0 || n.body === undefined) return [...problems, ...liquid];
    try {
      const rendered = renderContent(compileFields(fields), SAMPLE_SCOPE).custom_data as Record<string, string>;
      JSON.parse(rendered.body ?? '');
    } catch {
      problems.push({ field: `${at}.body`, message: 'is not JSON once rendered (with no variables and an empty person: give values a default, e.g. {{ traits.plan | default: "none" | json }})' });
    }
    return problems;
  });
}

/** Why email or SMS fields (plain strings) do not parse as Liquid, each field named with `prefix`. */
function liquidProblems(fields: Record<string, string>, prefix: string): FieldError[] {
  try {
    compileFields(fields);
    return [];
  } catch (err) {
    if (!(err instanceof InvalidInput)) throw err;
    return err.fields.map((e) => ({ field: `${prefix}${e.field}`, message: e.message }));
  }
}

/** An email node whose html has no `unsubscribe_url` goes live, with this warning. */
export function workflowWarnings(workflow: Workflow): string[] {
  return workflow.nodes.flatMap((n) =>
    n.type === 'email' && n.html !== undefined && !/\{\{-?\s*unsubscribe_url\b/.test(n.html)
      ? [`email node ${n.id}: its html has no {{ unsubscribe_url }} link (the List-Unsubscribe header is still sent)`]
      : [],
  );
}
