// util/heap-growth.ts: the bound set on a running process (as `herald start` does, before its
// actors start) holds for a worker thread started after it. Counted in full GCs, not timed: a
// worker keeps ~40 MB live and churns objects that live 30 batches; under the bound its heap
// may grow less past the live size before each full GC, so it needs several times as many.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ConfigError, loadConfig } from '../../src/config.js';

const MODULE = new URL('../../dist/src/util/heap-growth.js', import.meta.url).href;

const script = (percent: number) => `
import { Worker } from 'node:worker_threads';
const { boundHeapGrowth } = await import(${JSON.stringify(MODULE)});
boundHeapGrowth(${percent});
const worker = new Worker(\`
  import { parentPort } from 'node:worker_threads';
  import { PerformanceObserver, constants } from 'node:perf_hooks';
  let fullGcs = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullGcs++;
  }).observe({ entryTypes: ['gc'] });
  const live = [];
  for (let i = 0; i < 200000; i++) live.push({ a: 'x'.repeat(100) + i, b: [i, i + 1] });
  const inFlight = [];
  let round = 0;
  const step = () => {
    const batch = [];
    for (let i = 0; i < 5000; i++) batch.push({ id: 'e' + i + ':' + round, p: { k: 'v' + i, n: i } });
    inFlight.push(batch);
    if (inFlight.length > 30) inFlight.shift();
    // The observer is told of a GC after it; let the last ones arrive.
    if (++round < 600) setImmediate(step);
    else setTimeout(() => parentPort.postMessage(fullGcs), 50);
  };
  step();
\`, { eval: true });
worker.once('message', (n) => { console.log(n); worker.terminate(); });
`;

async function fullGcs(percent: number): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script(percent)]);
  return Number(stdout.trim());
}

t.test("a bound set after start-up holds for a worker thread started later; 0 leaves V8's factor", async (t) => {
  const [v8Own, bound] = await Promise.all([fullGcs(0), fullGcs(20)]);
  t.ok(v8Own > 0, `${v8Own} full GCs with V8's own factor`);
  t.ok(bound >= 2 * v8Own, `${bound} full GCs with the bound at 20%, ${v8Own} with V8's own factor`);
});

t.test('HERALD_HEAP_GROWTH_PERCENT: 20 by default, 0 for V8\'s own factor, never negative', async (t) => {
  t.equal(loadConfig({}).heapGrowthPercent, 20);
  t.equal(loadConfig({ HERALD_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent, 0);
  t.equal(loadConfig({ HERALD_HEAP_GROWTH_PERCENT: '100' }).heapGrowthPercent, 100);
  t.throws(() => loadConfig({ HERALD_HEAP_GROWTH_PERCENT: '-1' }), new ConfigError("HERALD_HEAP_GROWTH_PERCENT must be an integer >= 0, got '-1'"));
  t.throws(() => loadConfig({ HERALD_HEAP_GROWTH_PERCENT: '1.5' }), new ConfigError("HERALD_HEAP_GROWTH_PERCENT must be an integer >= 0, got '1.5'"));
});
