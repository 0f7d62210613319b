// Push content as Liquid templates (INTERFACE 4.5, DECISIONS §11): `title`, `body`,
// `image_url`, `action_url` and every string inside `custom_data` (nested objects and arrays
// too) render over the send's variables and the person. URLs are templated as OneSignal and
// Braze personalise them. Parse once, render per recipient: a send compiles its content
// (parsed templates shared through a cache keyed by source text), then renders it for each
// recipient synchronously (no I/O can happen in a template, so nothing needs awaiting).
//
// The engine is closed to the outside: templates cannot name other templates (`include`,
// `render` and `layout` are refused when parsed, and the engine's template lookup is an empty
// in-memory map, never the filesystem), see no prototype properties, and are bounded (limits
// below). An unknown filter or tag is a parse error; an unknown variable renders empty.
import { Liquid, type Template } from 'liquidjs';
import { LRUCache } from 'lru-cache';
import { InvalidInput } from './errors.js';

export interface PushContent {
  title?: string;
  body?: string;
  image_url?: string;
  action_url?: string;
  custom_data?: Record<string, unknown>;
}

/**
 * What templates see (DECISIONS §6): the variables' keys at top level, then `person` and
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

/** A value of the content with its templates parsed. */
type Part =
  | { kind: 'value'; value: unknown } // holds no template: kept as it is
  | { kind: 'liquid'; field: string; template: Template[] }
  | { kind: 'object'; entries: [string, Part][] }
  | { kind: 'array'; items: Part[] };

/** Content compiled by compileContent(), for renderContent(). */
export interface CompiledContent {
  readonly parts: Readonly<Partial<Record<keyof PushContent, Part>>>;
}

/** Template limits, per field: liquidjs's DoS guards. */
const LIMITS = {
  /** Characters of one template (a push payload is at most 4 KB anyway). */
  parseLimit: 100_000,
  /**
   * Milliseconds one render may take. A push template takes microseconds, but liquidjs measures
   * wall-clock time, which a loaded machine or a GC pause stretches: at 50 ms, legitimate renders
   * failed in a 100,000-recipient fan-out on a busy machine. The allocation limit below is what
   * stops the usual runaway templates; this one is the backstop.
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
 * parser's message.
 */
export function compileContent(c: PushContent): CompiledContent {
  const parts: Partial<Record<keyof PushContent, Part>> = {};
  for (const key of ['title', 'body', 'image_url', 'action_url'] as const) {
    if (c[key] !== undefined) parts[key] = compile(c[key], key);
  }
  if (c.custom_data !== undefined) {
    // Always rebuilt, so the caller may strip keys from what renderContent() returns.
    const entries = Object.entries(c.custom_data).map(([k, v]): [string, Part] => [k, compile(v, `custom_data.${k}`)]);
    parts.custom_data = { kind: 'object', entries };
  }
  return { parts };
}

function render(part: Part, scope: object): unknown {
  switch (part.kind) {
    case 'value':
      return part.value;
    case 'liquid':
      try {
        return liquid.renderSync(part.template, scope) as string;
      } catch (err) {
        throw refusal(part.field, 'could not be rendered', err);
      }
    case 'array':
      return part.items.map((p) => render(p, scope));
    case 'object':
      // fromEntries defines keys such as `__proto__` as plain keys, as JSON.parse did.
      return Object.fromEntries(part.entries.map(([k, p]) => [k, render(p, scope)]));
  }
}

/**
 * The content for one recipient. A render error (a limit reached) throws InvalidInput naming
 * the field. Values without templates are returned as they are, shared between renders: treat
 * the result as read-only below `custom_data`'s own keys.
 */
export function renderContent(c: CompiledContent, scope: TemplateScope): PushContent {
  const liquidScope: Record<string, unknown> = { ...scope.variables, person: scope.person, traits: scope.traits };
  if (scope.event) liquidScope.event = scope.event;
  if (scope.trigger) liquidScope.trigger = scope.trigger;
  const out: Record<string, unknown> = {};
  for (const [key, part] of Object.entries(c.parts)) out[key] = render(part, liquidScope);
  return out as PushContent;
}
