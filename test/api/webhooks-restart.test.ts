// Outbound webhooks across a kill -9 (docs/webhooks.md): deliveries pending or under way when
// Herald dies are all made by the next Herald on the same data dir, each at least once, a repeat
// carrying the same webhook-id, every one verified with the `standardwebhooks` package.
import t from 'tap';
import { NO_LIMITS } from '../helpers/assert.js';
import { serversOnOneDir, workspaceWithKeys } from '../helpers/server.js';
import { receiver } from '../helpers/webhook-receiver.js';
import { ownDatabase } from '../helpers/database.js';

const PEOPLE = 40;

t.test('kill -9 with deliveries waiting and under way loses none', async (t) => {
  const servers = await serversOnOneDir(t, { ...NO_LIMITS, ...(await ownDatabase(t)), HERALD_WEBHOOK_RETRY_SCHEDULE: '1s', HERALD_WEBHOOK_TIMEOUT_MS: '10000' }, 'webhooks-kill');
  const first = servers.first;
  const { ws, all } = await workspaceWithKeys(first, { all: ['*'] });
  const r = await receiver(t);
  // Nothing is answered before the kill: the first page's calls are under way, the rest wait.
  r.answer = () => 'hang';
  const created = await first.req('POST', `/workspaces/${ws.id}/webhooks`, { token: ws.token, body: { url: r.url, event_types: ['person.created'] } });
  t.equal(created.status, 201, created.text);
  r.secrets.push(created.body.data.secret);
  const ids = Array.from({ length: PEOPLE }, (_, i) => `kill-${i}`);
  const batch = await first.req('POST', '/people/batch', { token: all, body: { identify: ids.map((userId) => ({ userId })) } });
  t.equal(batch.status, 200, batch.text);
  t.ok(await r.until((ds) => ds.length >= 1, 10_000), 'calls are under way');
  // How many are under way when Herald is killed, and how many still wait in the outbox, depends
  // on when the dispatcher's claim runs (up to 100 of a workspace at once): both are lost to the
  // kill unless the outbox keeps them, which is what the rest asserts.
  t.comment(`${r.deliveries.length} of ${PEOPLE} under way at the kill`);
  await first.stop('SIGKILL');

  r.answer = () => 200;
  const second = await servers.again();
  t.ok(
    await r.until((ds) => new Set(ds.filter((d) => d.verifiedBy.length === 1).map((d) => d.event?.data.external_id)).size === PEOPLE, 30_000),
    'every person.created arrives after the restart',
  );
  const byPerson = new Map<unknown, Set<string>>();
  for (const d of r.deliveries) byPerson.set(d.event?.data.external_id, (byPerson.get(d.event?.data.external_id) ?? new Set()).add(d.id));
  t.ok([...byPerson.values()].every((webhookIds) => webhookIds.size === 1), 'a repeat of an event carries its webhook-id');
  t.ok(r.deliveries.every((d) => d.verifiedBy.length === 1), 'every delivery verified');
  await second.stop();
});
