// Push content as Liquid templates (docs/channels.md; README, Routes): `title`, `body`,
// `image_url`, `action_url` and every string inside `custom_data` (nested objects and arrays
// too) render over the send's variables and the person. URLs are templated as OneSignal and
// Braze personalise them. Parse once, render per recipient: a send compiles its content
// (parsed templates shared through a cache keyed by source text), then renders it for each
// recipient synchronously (no I/O can happen in a template, so nothing needs awaiting).
// Rendering is tenant-controlled CPU: it runs in the render pool (src/render/pool.ts), never
// on an actor thread, within a time budget per recipient and per send (renderAll below).
//
// The engine is closed to the outside: templates cannot name other templates (`include`,
// `render` and `layout` are refused when parsed, and the engine's template lookup is an empty
// in-memory map, never the filesystem), see no prototype properties, and are bounded (limits
// below). An unknown filter or tag is a parse error; an unknown variable renders empty.
import { Liquid, type Template } from 'liquidjs';
import { LRUCache } from 'lru-cache';
import { InvalidInput, type FieldError } from './errors.js';

export interface PushContent {
  title?: string;
  body?: string;
  image_url?: string;
  action_url?: string;
  custom_data?: Record<string, unknown>;
}

/**
 * What templates see (docs/campaigns-runtime.md): the variables' keys at top level, then `person` and
 * `traits`, and for a campaign send `event` (the triggering event's parameters) and `trigger`
 * (a webhook's trigger_data), which win over variables of those names when present.
 */
export interface TemplateScope {
  variables: Record<string, unknown>;
  person: Record<string, unknown>;
  traits: Record<string, unknown>;
  event?: Record<string, unknown>;
  trigger?: Record<string, unknown>;
}

/** What templates may read of a person (`person.*`): the key-surface fields, no internal ones. */
const PERSON_SCOPE_FIELDS = ['id', 'external_id', 'email', 'phone', 'first_name', 'last_name', 'avatar_url', 'timezone', 'locale', 'status'] as const;

/** The person as templates see them (every send and the dashboard's preview). */
export function personScope(p: { readonly [K in (typeof PERSON_SCOPE_FIELDS)[number]]: unknown }): Record<string, unknown> {
  return Object.fromEntries(PERSON_SCOPE_FIELDS.map((k) => [k, p[k]]));
}

/** A value of the content with its templates parsed. */
type Part =
  | { kind: 'value'; value: unknown } // holds no template: kept as it is
  | { kind: 'liquid'; field: string; template: Template[] }
  | { kind: 'object'; entries: [string, Part][] }
  | { kind: 'array'; items: Part[] };

/** Content compiled by compileContent() or compileFields(), for renderContent(). */
export interface CompiledContent {
  /** What it was compiled from, and how: what crosses to a render thread (parsed templates cannot). */
  readonly source: PushContent;
  /** Compiled by compileFields: errors name its `custom_data` keys as themselves. */
  readonly fields: boolean;
  readonly parts: Readonly<Partial<Record<keyof PushContent, Part>>>;
}

/** Template limits, per field: liquidjs's DoS guards. */
const LIMITS = {
  /** Characters of one template (a push payload is at most 4 KB anyway). */
  parseLimit: 100_000,
  /**
   * Milliseconds one field's render may take at most. The budget that counts is the caller's
   * (renderAll: per recipient across all fields, and per send), passed to each field's render
   * as what is left of it; this is the ceiling when no budget is given.
   */
  renderLimit: 1_000,
  /** Allocations one render may make (string and array growth: `append`, ranges, `join`…). */
  memoryLimit: 1_000_000,
};

const liquid = new Liquid({
  ...LIMITS,
  strictFilters: true,
  strictVariables: false,
  ownPropertyOnly: true,
  templates: {},
  // `date` answers the same on every server.
  timezoneOffset: 0,
  locale: 'en-US',
});
for (const tag of ['include', 'render', 'layout']) {
  liquid.registerTag(tag, {
    parse() {
      throw new Error(`{% ${tag} %} is not available: a template cannot load other templates`);
    },
    render() {},
  });
}

// Sources are request text: bounded in entries and in characters held.
const parsed = new LRUCache<string, Template[]>({ max: 2000, maxSize: 1_000_000, sizeCalculation: (_t, source) => source.length });

function parse(source: string, field: string): Template[] {
  let template = parsed.get(source);
  if (template === undefined) {
    try {
      template = liquid.parse(source);
    } catch (err) {
      throw refusal(field, 'is not a valid template', err);
    }
    parsed.set(source, template);
  }
  return template;
}

function refusal(field: string, what: string, err: unknown): InvalidInput {
  const message = `${what}: ${(err as Error).message}`;
  return new InvalidInput(`${field} ${message}`, [{ field, message }]);
}

const isTemplate = (s: string) => s.includes('{{') || s.includes('{%');

function compile(value: unknown, field: string): Part {
  if (typeof value === 'string') return isTemplate(value) ? { kind: 'liquid', field, template: parse(value, field) } : { kind: 'value', value };
  if (Array.isArray(value)) {
    const items = value.map((v, i) => compile(v, `${field}.${i}`));
    return items.every((p) => p.kind === 'value') ? { kind: 'value', value } : { kind: 'array', items };
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]): [string, Part] => [k, compile(v, `${field}.${k}`)]);
    return entries.every(([, p]) => p.kind === 'value') ? { kind: 'value', value } : { kind: 'object', entries };
  }
  return { kind: 'value', value };
}

/**
 * Parses every template field once; throws InvalidInput naming the field (`title`, `body`,
 * `image_url`, `action_url`, `custom_data.<key>`, `custom_data.<key>.<index>`…) with the
 * parser's message. `fields`: see compileFields.
 */
export function compileContent(c: PushContent, fields = false): CompiledContent {
  const parts: Partial<Record<keyof PushContent, Part>> = {};
  for (const key of ['title', 'body', 'image_url', 'action_url'] as const) {
    if (c[key] !== undefined) parts[key] = compile(c[key], key);
  }
  if (c.custom_data !== undefined) {
    // Always rebuilt, so the caller may strip keys from what renderContent() returns.
    const entries = Object.entries(c.custom_data).map(([k, v]): [string, Part] => [k, compile(v, fields ? k : `custom_data.${k}`)]);
    parts.custom_data = { kind: 'object', entries };
  }
  return { source: c, fields, parts };
}

/**
 * The Liquid fields of an email or SMS message (`subject`, `html`… plain strings), compiled as
 * one content: rendered as its `custom_data`, and named in errors as themselves (`subject`, not
 * `custom_data.subject`), as the dashboard shows them.
 */
export const compileFields = (fields: Record<string, string>): CompiledContent => compileContent({ custom_data: fields }, true);

/** False when no field holds a template: rendering is then a copy, not worth a thread hop. */
export function hasTemplates(c: CompiledContent): boolean {
  return Object.values(c.parts).some(function templated(p: Part): boolean {
    return p.kind === 'liquid' || (p.kind === 'array' && p.items.some(templated)) || (p.kind === 'object' && p.entries.some(([, e]) => templated(e)));
  });
}

/** Until when a render may run on the clock `now` (milliseconds), and how the budget is named when it runs out. */
interface Deadline {
  at: number;
  budget: string;
  now: () => number;
}

const monotonic = () => performance.now();

/**
 * Characters one recipient's templates may render, all fields together. A push payload is at
 * most 4 KB; without a cap, a send's rendered content (up to the allocation limit per field)
 * would be copied back to the actor thread and held there, recipient after recipient.
 */
const MAX_RENDERED_CHARS = 65_536;

/** The error of a render past its budget: InvalidInput, so it fails the recipient (or is the 400) like any render error. */
const RENDER_BUDGET_EXCEEDED = 'template render budget exceeded';

class OverBudget extends InvalidInput {}

function overBudget(field: string | undefined, budget: string): OverBudget {
  const message = `${RENDER_BUDGET_EXCEEDED} (${budget})`;
  return new OverBudget(field ? `${field}: ${message}` : message, field ? [{ field, message }] : []);
}

/** One recipient's render in progress: its deadline and the characters its fields rendered so far. */
interface Run extends Deadline {
  chars: number;
}

function render(part: Part, scope: object, run: Run): unknown {
  switch (part.kind) {
    case 'value':
      return part.value;
    case 'liquid': {
      // liquidjs checks its renderLimit between nodes (each loop iteration included): the
      // cooperative stop, set to what is left of the budget so all fields share it.
      const left = run.at - run.now();
      if (left <= 0) throw overBudget(part.field, run.budget);
      let out: string;
      try {
        out = liquid.renderSync(part.template, scope, { renderLimit: Math.min(left, LIMITS.renderLimit) }) as string;
      } catch (err) {
        if (run.now() >= run.at) throw overBudget(part.field, run.budget);
        throw refusal(part.field, 'could not be rendered', err);
      }
      run.chars += out.length;
      if (run.chars > MAX_RENDERED_CHARS) {
        const message = `rendered content is over ${MAX_RENDERED_CHARS} characters`;
        throw new InvalidInput(`${part.field}: ${message}`, [{ field: part.field, message }]);
      }
      return out;
    }
    case 'array':
      return part.items.map((p) => render(p, scope, run));
    case 'object':
      // fromEntries defines keys such as `__proto__` as plain keys, as JSON.parse did.
      return Object.fromEntries(part.entries.map(([k, p]) => [k, render(p, scope, run)]));
  }
}

const UNBOUNDED: Deadline = { at: Infinity, budget: '', now: monotonic };

/**
 * The content for one recipient. A render error (a limit reached, the deadline passed) throws
 * InvalidInput naming the field. Values without templates are returned as they are, shared
 * between renders: treat the result as read-only below `custom_data`'s own keys.
 */
export function renderContent(c: CompiledContent, scope: TemplateScope, deadline: Deadline = UNBOUNDED): PushContent {
  const liquidScope: Record<string, unknown> = { ...scope.variables, person: scope.person, traits: scope.traits };
  if (scope.event) liquidScope.event = scope.event;
  if (scope.trigger) liquidScope.trigger = scope.trigger;
  const out: Record<string, unknown> = {};
  const run = { ...deadline, chars: 0 };
  for (const [key, part] of Object.entries(c.parts)) out[key] = render(part, liquidScope, run);
  return out;
}

/** Milliseconds of rendering allowed: per recipient, across all its fields, and per send (all its recipients). */
export interface RenderBudget {
  recipientMs: number;
  sendMs: number;
}

/** One recipient's render: the content, or why it failed (plain data: it crosses threads). */
export type RenderOutcome = { content: PushContent } | { error: string; fields: FieldError[] };

/** The error an outcome carries, as the InvalidInput the caller answers or records. */
export function outcomeError(o: Extract<RenderOutcome, { error: string }>): InvalidInput {
  return new InvalidInput(o.error, o.fields);
}

/** Fails every recipient of a send whose render was stopped from outside (the hard stop), naming the budget (`1000 ms per send`). */
export function budgetSpent(count: number, budget: string): RenderOutcome[] {
  const err = overBudget(undefined, budget);
  return Array.from({ length: count }, () => ({ error: err.message, fields: err.fields }));
}

/**
 * Renders one content for each recipient of a send, each within `recipientMs` and all within
 * `sendMs` (measured from the call; wall-clock time, see src/render/pool.ts). A recipient past
 * its budget is given one more try, then fails with RENDER_BUDGET_EXCEEDED: a wall clock also
 * counts the time the thread was not running, and a loaded machine stalls a thread for tens of
 * milliseconds, so a legitimate render fails only if that happens twice. Once the send's budget
 * is spent, every recipient left fails without rendering: a send whose recipients keep
 * overrunning costs `sendMs`, not `recipientMs` × recipients. `now` is the clock (tests pass a
 * fake one).
 */
export function renderAll(c: CompiledContent, scopes: readonly TemplateScope[], budget: RenderBudget, now: () => number = monotonic): RenderOutcome[] {
  const sendEnd = now() + budget.sendMs;
  const perRecipient = `${budget.recipientMs} ms per recipient`;
  const perSend = `${budget.sendMs} ms per send`;
  const attempt = (scope: TemplateScope): PushContent => {
    const recipientEnd = now() + budget.recipientMs;
    return renderContent(c, scope, recipientEnd < sendEnd ? { at: recipientEnd, budget: perRecipient, now } : { at: sendEnd, budget: perSend, now });
  };
  return scopes.map((scope) => {
    try {
      try {
        return { content: attempt(scope) };
      } catch (err) {
        if (err instanceof OverBudget && now() < sendEnd) return { content: attempt(scope) };
        throw err;
      }
    } catch (err) {
      if (!(err instanceof InvalidInput)) throw err;
      return { error: err.message, fields: err.fields };
    }
  });
}
