// One tenant's slow endpoint does not hold up another's deliveries (docs/webhooks.md): a
// workspace whose receiver drips a byte every 5 s, with hundreds of events waiting, holds at
// most its own share of the dispatcher's calls; another workspace's events on the same actor
// still arrive within 1 s of being committed.
import t from 'tap';
import { NO_LIMITS } from '../helpers/assert.js';
import { startServer, workspaceWithKeys } from '../helpers/server.js';
import { receiver } from '../helpers/webhook-receiver.js';
import { ownDatabase } from '../helpers/database.js';

// One actor: both workspaces are served by the same dispatcher.
const s = await startServer({ ...NO_LIMITS, ...(await ownDatabase(t)), HERALD_ACTORS: '1' });
t.teardown(() => s.stop());

t.test("a slow tenant's endpoint delays another tenant's deliveries by at most 1 s", async (t) => {
  const slow = await workspaceWithKeys(s, { all: ['*'] });
  const fast = await workspaceWithKeys(s, { all: ['*'] });
  const drip = await receiver(t);
  drip.answer = () => 'drip';
  const quick = await receiver(t);
  for (const [w, r] of [[slow, drip], [fast, quick]] as const) {
    const e = await s.req('POST', `/workspaces/${w.ws.id}/webhooks`, { token: w.ws.token, body: { url: r.url, event_types: ['person.created'] } });
    t.equal(e.status, 201, e.text);
    r.secrets.push(e.body.data.secret);
  }
  const batch = await s.req('POST', '/people/batch', { token: slow.all, body: { identify: Array.from({ length: 300 }, (_, i) => ({ userId: `slow-${i}` })) } });
  t.equal(batch.status, 200, batch.text);
  t.ok(await drip.until((ds) => ds.length >= 50, 10_000), `the slow endpoint holds calls open (${drip.deliveries.length})`);

  for (let i = 0; i < 5; i++) {
    const id = `fast-${i}`;
    const r = await s.req('POST', '/identify', { token: fast.all, body: { userId: id } });
    t.equal(r.status, 200, r.text);
    const committed = Date.now();
    t.ok(await quick.until((ds) => ds.some((d) => d.event?.data.external_id === id), 5_000), `${id} arrives`);
    const took = quick.deliveries.find((d) => d.event?.data.external_id === id)!.at - committed;
    t.ok(took <= 1_000, `${id} arrived ${took} ms after its commit (at most 1 s)`);
  }
  t.ok(drip.deliveries.length < 300, 'the slow tenant was still being served meanwhile');
  t.ok(quick.deliveries.every((d) => d.verifiedBy.length === 1), 'verified');
});
