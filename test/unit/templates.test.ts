// Push content templates (src/domain/templates.ts): Liquid over the variables, `person` and
// `traits`; parse errors and render errors are InvalidInput naming the field; no file is ever read.
import t, { type Test } from 'tap';
import { Liquid } from 'liquidjs';
import { InvalidInput } from '../../src/domain/errors.js';
import { compileContent, renderAll, renderContent, type PushContent, type RenderOutcome, type TemplateScope } from '../../src/domain/templates.js';

const SCOPE: TemplateScope = {
  variables: { first_name: 'Ann', order: { id: 'A-17', total: 42.5 }, items: ['tea', 'cake'] },
  person: { external_id: 'user-1', email: 'ann@example.com', timezone: 'Europe/Paris' },
  traits: { plan: 'pro', vip: true, city: 'Lyon' },
};

const render = (c: PushContent, scope: TemplateScope = SCOPE) => renderContent(compileContent(c), scope);

/** The InvalidInput `f` throws: its fields, and its message. */
function refused(t: Test, f: () => unknown): { fields: string[]; messages: string[]; message: string } {
  try {
    f();
  } catch (err) {
    t.ok(err instanceof InvalidInput, 'InvalidInput');
    const e = err as InvalidInput;
    t.equal(e.code, 'VALIDATION_ERROR');
    return { fields: e.fields.map((p) => p.field), messages: e.fields.map((p) => p.message), message: e.message };
  }
  t.fail('did not throw');
  return { fields: [], messages: [], message: '' };
}

t.test('variables, person and traits render into title, body, URLs and custom_data', async (t) => {
  const out = render({
    title: 'Hi {{ first_name }}',
    body: 'Order {{ order.id }}: {{ order.total }} € for {{ person.email }}{% if traits.vip %} (VIP){% endif %}',
    image_url: 'https://img.example.com/{{ traits.plan }}.png',
    action_url: 'app://orders/{{ order.id | url_encode }}',
    custom_data: { deep_link: 'app://city/{{ traits.city | downcase }}', items: '{{ items | join: ", " }}' },
  });
  t.same(out, {
    title: 'Hi Ann',
    body: 'Order A-17: 42.5 € for ann@example.com (VIP)',
    image_url: 'https://img.example.com/pro.png',
    action_url: 'app://orders/A-17',
    custom_data: { deep_link: 'app://city/lyon', items: 'tea, cake' },
  });
});

t.test('absent fields stay absent; text without Liquid is kept as it is', async (t) => {
  t.same(render({ body: 'Plain text, braces { } and a lone {' }), { body: 'Plain text, braces { } and a lone {' });
  t.same(render({}), {});
  t.same(render({ title: '' }), { title: '' });
});

t.test('unknown variables render empty', async (t) => {
  t.same(render({ title: 'Hi {{ nickname }}!', body: '{{ person.nothing.deeper }}|{{ traits.none }}' }), { title: 'Hi !', body: '|' });
  t.same(render({ title: 'Hi {{ first_name }}' }, { variables: {}, person: {}, traits: {} }), { title: 'Hi ' });
});

t.test('person and traits win over variables of those names', async (t) => {
  const scope: TemplateScope = { variables: { person: { email: 'forged@example.com' }, traits: { plan: 'free' }, plan: 'variable' }, person: SCOPE.person, traits: SCOPE.traits };
  t.same(render({ title: '{{ person.email }} {{ traits.plan }} {{ plan }}' }, scope), { title: 'ann@example.com pro variable' });
});

t.test('a campaign send: event (the triggering event parameters) and trigger (webhook trigger_data)', async (t) => {
  const scope: TemplateScope = { ...SCOPE, variables: { event: 'a variable', trigger: 'a variable' }, event: { amount: 42, items: [{ sku: 'A1' }] }, trigger: { coupon: 'SPRING' } };
  t.same(render({ title: '{{ event.amount }} {{ event.items[0].sku }}', body: 'Code {{ trigger.coupon }}' }, scope), { title: '42 A1', body: 'Code SPRING' }, 'they win over variables of those names');
  t.same(render({ title: '{{ event }}/{{ trigger }}' }, { ...SCOPE, variables: { event: 'e', trigger: 't' } }), { title: 'e/t' }, 'absent, variables of those names are seen');
});

t.test('prototype properties are not reachable', async (t) => {
  t.same(render({ title: '[{{ person.constructor }}][{{ traits.__proto__ }}][{{ first_name.toUpperCase }}][{{ items.push }}][{{ toString }}]' }), { title: '[][][][][]' });
});

t.test('custom_data: strings at any depth are templates, other values are untouched', async (t) => {
  const custom_data = {
    count: 3,
    ratio: 0.5,
    flag: false,
    none: null,
    nested: { greeting: 'Hi {{ first_name }}', n: 1, list: ['{{ traits.plan }}', 2, { at: '{{ person.external_id }}' }] },
    literal: { a: 'no template', b: [1, 2] },
  };
  const out = render({ custom_data });
  t.same(out.custom_data, {
    count: 3,
    ratio: 0.5,
    flag: false,
    none: null,
    nested: { greeting: 'Hi Ann', n: 1, list: ['pro', 2, { at: 'user-1' }] },
    literal: { a: 'no template', b: [1, 2] },
  });
  t.equal(typeof out.custom_data!.count, 'number');
  t.same(custom_data.nested.greeting, 'Hi {{ first_name }}', 'the input is not changed');
});

t.test('custom_data: a `__proto__` key stays a plain key', async (t) => {
  const custom_data = JSON.parse('{"__proto__": "{{ first_name }}", "x": "{{ traits.plan }}"}') as Record<string, unknown>;
  const out = render({ custom_data }).custom_data!;
  t.same(Object.keys(out), ['__proto__', 'x']);
  t.equal(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, 'Ann');
  t.equal(Object.getPrototypeOf(out), Object.prototype);
});

t.test('custom_data of the result is a fresh object each time', async (t) => {
  const compiled = compileContent({ custom_data: { aps: 'x', keep: 'y' } });
  const first = renderContent(compiled, SCOPE).custom_data!;
  delete first.aps;
  t.same(renderContent(compiled, SCOPE).custom_data, { aps: 'x', keep: 'y' });
});

t.test('one compile renders per recipient', async (t) => {
  const compiled = compileContent({ title: 'Hi {{ first_name }}', body: '{{ person.external_id }}' });
  t.same(renderContent(compiled, { variables: { first_name: 'Bo' }, person: { external_id: 'b' }, traits: {} }), { title: 'Hi Bo', body: 'b' });
  t.same(renderContent(compiled, { variables: { first_name: 'Cy' }, person: { external_id: 'c' }, traits: {} }), { title: 'Hi Cy', body: 'c' });
});

t.test('a syntax error names the field, with the parser message', async (t) => {
  const title = refused(t, () => compileContent({ title: 'Hi {{ first_name ', body: 'fine' }));
  t.same(title.fields, ['title']);
  t.match(title.messages[0], /^is not a valid template: .*not closed/);
  t.match(title.message, /^title is not a valid template: /);

  t.same(refused(t, () => compileContent({ title: 'ok', body: '{% if traits.vip %}VIP' })).fields, ['body']);
  t.same(refused(t, () => compileContent({ custom_data: { ok: '{{ a }}', deep_link: 'app://{{ x }' } })).fields, ['custom_data.deep_link']);
  t.same(refused(t, () => compileContent({ custom_data: { a: { b: ['fine', '{% for %}'] } } })).fields, ['custom_data.a.b.1']);
  t.same(refused(t, () => compileContent({ action_url: 'https://x/{{ id' })).fields, ['action_url']);
  t.same(refused(t, () => compileContent({ image_url: 'https://x/{% nope %}' })).fields, ['image_url']);
});

t.test('an unknown filter or tag is a parse error', async (t) => {
  const filter = refused(t, () => compileContent({ body: 'Hi {{ first_name | shout }}' }));
  t.same(filter.fields, ['body']);
  t.match(filter.messages[0], /undefined filter: shout/);
  const tag = refused(t, () => compileContent({ title: '{% frobnicate %}' }));
  t.same(tag.fields, ['title']);
  t.match(tag.messages[0], /frobnicate/);
});

t.test('templates cannot load other templates or files', async (t) => {
  for (const source of ["{% include 'package.json' %}", "{% include '/etc/passwd' %}", "{% render 'README.md' %}", "{% layout 'x' %}body", '{% include first_name %}']) {
    const r = refused(t, () => compileContent({ body: source }));
    t.same(r.fields, ['body'], source);
    t.match(r.messages[0], /is not available: a template cannot load other templates/, source);
  }
});

t.test('limits: a template over 100,000 characters, a render allocating without bound', async (t) => {
  const long = refused(t, () => compileContent({ title: '{{ a }}' + 'x'.repeat(100_000) }));
  t.same(long.fields, ['title']);
  t.match(long.messages[0], /limit/);
  const compiled = compileContent({ custom_data: { loop: '{% for i in (1..100000000) %}x{% endfor %}' } });
  const r = refused(t, () => renderContent(compiled, SCOPE));
  t.same(r.fields, ['custom_data.loop']);
  t.match(r.messages[0], /^could not be rendered: .*limit/);
  // A long text without Liquid is no template, and no limit applies to it.
  t.equal(render({ body: 'x'.repeat(200_000) }).body!.length, 200_000);
});

t.test('each template source is parsed once', async (t) => {
  const original = Liquid.prototype.parse;
  const sources: string[] = [];
  Liquid.prototype.parse = function (this: Liquid, ...args: Parameters<Liquid['parse']>) {
    sources.push(args[0]);
    return original.apply(this, args);
  };
  t.teardown(() => {
    Liquid.prototype.parse = original;
  });
  const title = 'Cache {{ first_name }} ' + Math.random();
  const a = compileContent({ title, body: 'no liquid here', custom_data: { same: title, other: '{{ traits.plan }} cached' } });
  const b = compileContent({ title, body: title });
  t.same(sources.sort(), [title, '{{ traits.plan }} cached'].sort(), 'one parse per distinct source; text without Liquid is never parsed');
  t.same(renderContent(a, SCOPE), { title: title.replace('{{ first_name }}', 'Ann'), body: 'no liquid here', custom_data: { same: title.replace('{{ first_name }}', 'Ann'), other: 'pro cached' } });
  t.same(renderContent(b, SCOPE).body, title.replace('{{ first_name }}', 'Ann'));
  // A source that failed to parse is not remembered as parsed: it fails again.
  refused(t, () => compileContent({ title: '{{ broken ' }));
  refused(t, () => compileContent({ title: '{{ broken ' }));
});

// The render budget (renderAll): per recipient across all fields, and per send.

/** A clock that advances `step` ms each time it is read: a field's render reads it once. */
function steppingClock(step: number): () => number {
  let at = 0;
  return () => (at += step);
}

const errorOf = (o: RenderOutcome) => ('error' in o ? o.error : undefined);

t.test("budget: a recipient's fields share one budget; the field it ran out in is named", async (t) => {
  const c = compileContent({ custom_data: { a: '{{ first_name }}', b: '{{ traits.plan }}', c: '{{ traits.city }}', d: 'plain' } });
  // Read at 10 (send start) and 20 (recipient start: until 45); a at 30, b at 40, c at 50: over
  // (and so again on the second try).
  const [only] = renderAll(c, [SCOPE], { recipientMs: 25, sendMs: 1000 }, steppingClock(10));
  t.equal(errorOf(only!), 'custom_data.c: template render budget exceeded (25 ms per recipient)');
  t.same('fields' in only! && only.fields, [{ field: 'custom_data.c', message: 'template render budget exceeded (25 ms per recipient)' }]);
  const [ok] = renderAll(c, [SCOPE], { recipientMs: 45, sendMs: 1000 }, steppingClock(10));
  t.same(ok, { content: { custom_data: { a: 'Ann', b: 'pro', c: 'Lyon', d: 'plain' } } });
});

/** A clock reading `times` in turn, then counting up from the last. */
function clockOf(...times: number[]): () => number {
  let i = 0;
  return () => times[i++] ?? times[times.length - 1]! + i;
}

t.test('budget: a recipient past its budget is given one more try (a stall of the thread is not the template)', async (t) => {
  const c = compileContent({ title: '{{ first_name }}' });
  const budget = { recipientMs: 25, sendMs: 1000 };
  // Send start 0, recipient start 0 (until 25), the field at 100: over; checked at 100, tried again from 100 (until 125), the field at 101.
  t.same(renderAll(c, [SCOPE], budget, clockOf(0, 0, 100, 100, 100, 101)), [{ content: { title: 'Ann' } }]);
  // Stalled on both tries: failed.
  t.same(renderAll(c, [SCOPE], budget, clockOf(0, 0, 100, 100, 100, 200)).map(errorOf), ['title: template render budget exceeded (25 ms per recipient)']);
  // No second try once the send's budget is spent.
  t.same(renderAll(c, [SCOPE], budget, clockOf(0, 0, 100, 1000, 1000, 1000)).map(errorOf), ['title: template render budget exceeded (25 ms per recipient)']);
});

t.test('budget: once the send has spent its budget, every recipient left fails unrendered', async (t) => {
  const c = compileContent({ title: 'Hi {{ first_name }}' });
  // Send until 110; each recipient reads the clock twice (start, field): the fifth finds nothing left.
  const out = renderAll(c, Array(7).fill(SCOPE), { recipientMs: 1000, sendMs: 100 }, steppingClock(10));
  t.same(out.slice(0, 4), Array(4).fill({ content: { title: 'Hi Ann' } }));
  t.same(out.slice(4).map(errorOf), Array(3).fill('title: template render budget exceeded (100 ms per send)'));
});

t.test('budget: a template that keeps looping is stopped at the budget, not at liquidjs\'s own ceiling', async (t) => {
  const c = compileContent({ custom_data: { a: 'fine', loop: '{% for i in (1..1000) %}{% for j in (1..1000) %}{% endfor %}{% endfor %}' } });
  const [r] = renderAll(c, [SCOPE], { recipientMs: 20, sendMs: 1000 });
  t.equal(errorOf(r!), 'custom_data.loop: template render budget exceeded (20 ms per recipient)');
  // Other render errors keep their own message.
  const [other] = renderAll(compileContent({ body: '{% for i in (1..100000000) %}x{% endfor %}' }), [SCOPE], { recipientMs: 1000, sendMs: 1000 });
  t.match(errorOf(other!), /^body could not be rendered: .*limit/);
});

t.test("budget: a recipient's rendered content is capped at 65,536 characters", async (t) => {
  const c = compileContent({ title: '{% for i in (1..40000) %}x{% endfor %}', body: '{% for i in (1..40000) %}y{% endfor %}' });
  const [r] = renderAll(c, [SCOPE], { recipientMs: 10_000, sendMs: 10_000 });
  t.equal(errorOf(r!), 'body: rendered content is over 65536 characters');
});
