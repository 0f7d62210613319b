// What the dashboard's campaign list, builder and live progress read (README, Dashboard): the
// campaign list filtered by status, trigger type and a name search, each with its stats at a
// glance; a campaign's messages newest first, paging back with `before` and `before_id`; the event names the
// workspace has seen, with when each was last seen.
import t from 'tap';
import { eventually, uniqueUser } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { FORBIDDEN, ISO_MS, UUID, sessionError } from '../helpers/assert.js';
import { PushWs, pushToken } from '../helpers/push.js';

const s = await sharedServer();

const hdr = (w: PushWs) => ({ token: w.ws.token, headers: { 'x-workspace-id': w.id } });
const list = (w: PushWs, query = '') => s.req('GET', `/campaigns${query}`, hdr(w));

async function campaign(w: PushWs, name: string, trigger_type: string, trigger_config: Record<string, unknown> = {}): Promise<string> {
  const r = await s.req('POST', '/campaigns', { ...hdr(w), body: { name, trigger_type, trigger_config, workflow_definition: { nodes: [{ id: 'p', type: 'push', title: 'Hi {{ person.external_id }}' }] } } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data.campaign.id;
}

t.test('campaign list: status, trigger type and name filters, stats at a glance; messages newest first', async (t) => {
  const w = await PushWs.create(s);
  const welcome = await campaign(w, 'Welcome Series', 'webhook');
  await campaign(w, 'Win-back', 'event', { event_names: ['churned'] });
  await campaign(w, 'Weekly digest', 'schedule', { cron: '@weekly', timezone: 'UTC' });
  for (const u of ['a', 'b']) await w.personWith(`${u}-${uniqueUser()}`, [[pushToken(), 'android']]);
  t.equal((await s.req('PUT', `/campaigns/${welcome}`, { ...hdr(w), body: { status: 'active' } })).status, 200);
  const fired = await s.req('POST', `/campaigns/${welcome}/trigger`, { token: w.keys.all, body: { workspace_id: w.id } });
  t.equal(fired.status, 202, fired.text);

  let welcomeRow: { stats?: { sent?: number } } = {};
  await eventually(async () => {
    const r = await list(w, '?q=welcome');
    welcomeRow = r.body.campaigns?.[0] ?? {};
    return welcomeRow.stats?.sent === 2;
  }, 20_000);
  t.match(welcomeRow, { id: welcome, name: 'Welcome Series', status: 'active', stats: { enrolled: 2, sent: 2, delivered: 0, failed: 0, last_triggered_at: ISO_MS } }, 'stats at a glance');

  const all = await list(w);
  t.equal(all.body.total, 3);
  t.match(all.body.campaigns.find((c: { name: string }) => c.name === 'Win-back'), { stats: { enrolled: 0, sent: 0, delivered: 0, failed: 0, last_triggered_at: null } });
  t.same((await list(w, '?q=W')).body.campaigns.map((c: { name: string }) => c.name), ['Weekly digest', 'Win-back', 'Welcome Series'], 'name search, any case, newest first');
  t.same((await list(w, '?q=DIGEST')).body.campaigns.map((c: { name: string }) => c.name), ['Weekly digest']);
  t.same((await list(w, '?trigger_type=event')).body.campaigns.map((c: { name: string }) => c.name), ['Win-back']);
  t.same((await list(w, '?status=active&q=series')).body.campaigns.map((c: { name: string }) => c.name), ['Welcome Series']);
  t.equal((await list(w, '?q=nothing-like-it')).body.total, 0);

  // The campaign's messages, newest first, paged with `before`.
  const messages = (query = '') => s.req('GET', `/workspaces/${w.id}/campaigns/${welcome}/messages${query}`, { token: w.ws.token });
  const page = await messages();
  t.equal(page.status, 200, page.text);
  t.match(page.body, { success: true, total: 2, limit: 50 });
  t.match(page.body.messages[0], { message_id: UUID, channel: 'push', status: 'sent', external_id: String, campaign_id: welcome, created_at: ISO_MS });
  const [first, second] = page.body.messages;
  t.ok(first.created_at >= second.created_at, 'newest first');
  const one = await messages('?limit=1');
  t.same(one.body.messages.map((m: { message_id: string }) => m.message_id), [first.message_id]);
  const older = await messages(`?before=${encodeURIComponent(first.created_at)}`);
  t.ok(older.body.messages.every((m: { created_at: string }) => m.created_at < first.created_at), 'before pages back');
  // A page of one, then the next after its message: the second, whether or not the fan-out created both in one millisecond.
  const next = await messages(`?limit=1&before=${encodeURIComponent(first.created_at)}&before_id=${first.message_id}`);
  t.same(next.body.messages.map((m: { message_id: string }) => m.message_id), [second.message_id], 'before_id: the next page starts right after the last message shown');
  t.same((await messages(`?before=${encodeURIComponent(second.created_at)}&before_id=${second.message_id}`)).body.messages, [], 'and ends after the last');
  sessionError(t, await messages(`?before_id=${first.message_id}`), 400, 'VALIDATION_ERROR', 'before_id');

  sessionError(t, await messages('?before=yesterday'), 400, 'VALIDATION_ERROR', 'before');
  const other = await PushWs.create(s);
  sessionError(t, await s.req('GET', `/workspaces/${other.id}/campaigns/${welcome}/messages`, { token: other.ws.token }), 404, 'NOT_FOUND');
  t.equal((await s.req('GET', `/workspaces/${w.id}/campaigns/${welcome}/messages`, { token: w.keys.all })).status, 403, 'an API key: sessions only');
});

t.test('event names: each name the workspace has seen once, with when it was last seen; bounded by limit', async (t) => {
  const w = await PushWs.create(s);
  const other = await PushWs.create(s);
  const user = uniqueUser('namer');
  const track = (ws: PushWs, event: string, timestamp: string) => s.req('POST', '/track', { token: ws.keys.all, body: { event, external_id: user, timestamp } });
  t.equal((await track(w, 'signed_up', '2024-01-01T00:00:00.000Z')).status, 201);
  t.equal((await track(w, 'purchased', '2024-01-02T00:00:00.000Z')).status, 201);
  t.equal((await track(w, 'purchased', '2024-01-03T00:00:00.000Z')).status, 201);
  t.equal((await track(w, 'viewed', '2024-01-04T00:00:00.000Z')).status, 201);
  t.equal((await track(other, 'elsewhere', '2024-01-05T00:00:00.000Z')).status, 201);

  const names = (query = '') => s.req('GET', `/workspaces/${w.id}/event-names${query}`, { token: w.ws.token });
  let r = await names();
  await eventually(async () => (r = await names()).body?.names?.length === 3, 20_000);
  t.same(r.body, {
    success: true,
    names: [
      { name: 'purchased', last_seen_at: '2024-01-03T00:00:00.000Z' },
      { name: 'signed_up', last_seen_at: '2024-01-01T00:00:00.000Z' },
      { name: 'viewed', last_seen_at: '2024-01-04T00:00:00.000Z' },
    ],
    total: 3,
    limit: 100,
  }, 'in name order, this workspace only');
  t.same((await names('?limit=2')).body.names.map((n: { name: string }) => n.name), ['purchased', 'signed_up'], 'limit');
  sessionError(t, await names('?limit=lots'), 400, 'VALIDATION_ERROR', 'limit');
  const stranger = await s.req('GET', `/workspaces/${w.id}/event-names`, { token: await s.session(uniqueUser('stranger')) });
  t.equal(stranger.status, 403);
  t.same(stranger.body, FORBIDDEN);
  t.equal((await s.req('GET', `/workspaces/${w.id}/event-names`, { token: w.keys.all })).status, 403, 'an API key: sessions only');
});
