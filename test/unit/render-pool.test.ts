// The render pool (src/render/pool.ts) with the real render thread (workers/render.ts) and a
// stand-in that never returns (test/fixtures/spin-render.mjs): budgets, the hard stop, the
// round-robin between workspaces, the bounded queue, shutdown.
import t from 'tap';
import { RenderPool, type RenderPoolOptions } from '../../src/render/pool.js';
import { compileContent, type PushContent, type RenderOutcome, type TemplateScope } from '../../src/domain/templates.js';
import { DomainError } from '../../src/domain/errors.js';

const SCOPE: TemplateScope = { variables: { name: 'Ann' }, person: {}, traits: {} };
const LOOP = '{% for i in (1..1000) %}{% for j in (1..1000) %}{% endfor %}{% endfor %}';

function pool(over: Partial<RenderPoolOptions> = {}): RenderPool {
  const p = new RenderPool({ threads: 1, budget: { recipientMs: 1000, sendMs: 100 }, queuePerWorkspace: 16, script: new URL('../../workers/render.ts', import.meta.url), ...over });
  t.teardown(() => p.close());
  return p;
}

const render = (p: RenderPool, ws: string, c: PushContent, n = 1) => p.render(ws, compileContent(c), Array(n).fill(SCOPE));
const errors = (out: RenderOutcome[]) => out.map((o) => ('error' in o ? o.error : 'rendered'));

t.test('renders off the thread; content without templates needs no thread', async (t) => {
  const p = pool();
  t.same(await render(p, 'w', { title: 'Hi {{ name }}' }, 2), Array(2).fill({ content: { title: 'Hi Ann' } }));
  t.same(await render(p, 'w', { title: 'plain' }), [{ content: { title: 'plain' } }]);
});

t.test('a send whose recipients keep overrunning costs its send budget, the rest failed unrendered', async (t) => {
  const p = pool({ budget: { recipientMs: 30, sendMs: 100 } });
  const out = errors(await render(p, 'w', { title: LOOP }, 250));
  t.match(out[0], /^title: template render budget exceeded \(30 ms per recipient\)$/);
  t.equal(out[249], 'title: template render budget exceeded (100 ms per send)');
  t.ok(out.filter((e) => e.includes('per recipient')).length <= 4, 'at most sendMs / recipientMs recipients rendered');
});

t.test('a render that never yields is stopped after two to three send budgets; the thread is replaced', async (t) => {
  const p = pool({ script: new URL('../fixtures/spin-render.mjs', import.meta.url) });
  t.same(errors(await render(p, 'w', { title: 'spin', body: '{{ x }}' }, 3)), Array(3).fill('template render budget exceeded (100 ms per send)'));
  t.same(await render(p, 'w', { title: 'after', body: '{{ x }}' }), [{ content: { title: 'after', body: '{{ x }}' } }], 'the next send renders');
});

t.test("round-robin: a workspace's queue does not hold another workspace's send", async (t) => {
  const p = pool({ script: new URL('../fixtures/spin-render.mjs', import.meta.url) });
  const order: string[] = [];
  const track = (label: string, r: Promise<RenderOutcome[]>) => r.then(() => order.push(label));
  const hostile = [1, 2, 3].map((i) => track(`hostile ${i}`, render(p, 'a', { title: 'spin', body: '{{ x }}' })));
  const other = track('other', render(p, 'b', { title: 'ok', body: '{{ x }}' }));
  await Promise.all([...hostile, other]);
  t.same(order, ['hostile 1', 'other', 'hostile 2', 'hostile 3']);
});

t.test('the queue is bounded per workspace: past it, 503', async (t) => {
  const p = pool({ queuePerWorkspace: 1, script: new URL('../fixtures/spin-render.mjs', import.meta.url) });
  const running = render(p, 'a', { title: 'spin', body: '{{ x }}' });
  const waiting = render(p, 'a', { title: 'spin', body: '{{ x }}' });
  const refused = await render(p, 'a', { title: 'spin', body: '{{ x }}' }).catch((e: unknown) => e);
  t.ok(refused instanceof DomainError && refused.code === 'SERVICE_UNAVAILABLE', String(refused));
  t.same(await render(p, 'b', { title: 'ok', body: '{{ x }}' }), [{ content: { title: 'ok', body: '{{ x }}' } }], 'another workspace still gets in');
  await Promise.all([running, waiting]);
});

t.test('close: sends still waiting are refused, the running one finishes', async (t) => {
  const p = pool({ script: new URL('../fixtures/spin-render.mjs', import.meta.url) });
  const running = render(p, 'a', { title: 'spin', body: '{{ x }}' });
  const waiting = render(p, 'a', { title: 'ok', body: '{{ x }}' }).catch((e: unknown) => e);
  await p.close();
  t.equal((await running).length, 1);
  t.match(String(((await waiting) as Error).message), /shutting down/);
  await t.rejects(render(p, 'a', { title: 'ok', body: '{{ x }}' }), /shutting down/);
});
