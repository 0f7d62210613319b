// The webhook workflow node (docs/channels.md, "The webhook channel") against a real receiver run
// here: one call per person, its body rendered with Liquid, every call verified with the
// `standardwebhooks` package against the workspace's node secret as an integrator's receiver
// would; a 500 retried then recorded failed with its status; a private address refused; the
// campaign's stats; activation's refusals; the builder's preview and test send.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { FORBIDDEN, NO_LIMITS, sessionError } from '../helpers/assert.js';
import { startServer, triggerWebhookCampaign, uniqueUser, workspaceWithKeys } from '../helpers/server.js';
import { receiver } from '../helpers/webhook-receiver.js';

const s = await startServer({ ...NO_LIMITS });
t.teardown(() => { if (process.env.SHOW_STDERR) console.error(s.stderr().slice(-3000)); return s.stop(); });

type Ws = { id: string; token: string };
type Message = Record<string, unknown> & { to?: string; status: string; external_id: string };

const nodeSecretOf = async (ws: Ws) => {
  const r = await s.req('GET', `/workspaces/${ws.id}/webhooks/node-secret`, { token: ws.token });
  if (r.status !== 200) throw new Error(`node-secret: ${r.status} ${r.text}`);
  return r.body.data.secret as string;
};

/** The dashboard's id of the person with this userId. */
async function personUuid(ws: Ws, userId: string): Promise<string> {
  return until(async () => {
    const r = await s.req('GET', `/workspaces/${ws.id}/people`, { token: ws.token });
    return (r.body.people as { id: string; external_id: string }[]).find((x) => x.external_id === userId)?.id;
  });
}

/** Polls `f` until it answers something (or fails after `ms`). */
async function until<T>(f: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A workspace with these people, and a webhook campaign of `nodes` triggered for them; done when each person has a message. */
async function run(nodes: object[], people: { userId: string; traits?: Record<string, unknown> }[], beforeTrigger: (ws: Ws) => Promise<void> = async () => {}) {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  const r = await s.req('POST', '/people/batch', { token: k.write, body: { identify: people } });
  if (r.status !== 200) throw new Error(`people: ${r.status} ${r.text}`);
  await beforeTrigger(k.ws);
  const campaignId = await triggerWebhookCampaign(s, k.ws, k.trigger, nodes, { plan: 'Pro' });
  const messages = await until(async () => {
    const m = await s.req('GET', `/workspaces/${k.ws.id}/campaigns/${campaignId}/messages`, { token: k.ws.token });
    const list = (m.body.messages ?? []) as Message[];
    return list.length >= people.length * nodes.length ? list : undefined;
  }, 30_000);
  return { ws: k.ws, campaignId, byPerson: new Map(messages.map((m) => [m.external_id, m])) };
}

t.test('one signed call per person, the body rendered with Liquid; recorded on channel webhook, counted in the stats', async (t) => {
  const rec = await receiver(t);
  const node = { id: 'crm', type: 'webhook', url: `${rec.url}?who={{ person.external_id }}`, headers: { 'x-source': 'herald' }, body: '{"user": "{{ person.external_id }}", "plan": "{{ trigger.plan }}", "tier": "{{ traits.tier }}"}' };
  let secret = '';
  const { ws, campaignId, byPerson } = await run([node], [{ userId: 'ann', traits: { tier: 'gold' } }, { userId: 'bob', traits: { tier: 'silver' } }], async (ws) => {
    secret = await nodeSecretOf(ws);
    rec.secrets.push(secret);
  });
  t.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  t.equal(await nodeSecretOf(ws), secret, 'the same secret on every read');
  t.equal(rec.deliveries.length, 2, 'one call per person');
  for (const who of ['ann', 'bob']) {
    const d = rec.deliveries.find((x) => JSON.parse(x.body).user === who);
    t.ok(d, `${who} was called for`);
    t.same(d!.verifiedBy, [secret], `${who}'s call verifies with the node secret (standardwebhooks)`);
    t.same(JSON.parse(d!.body), { user: who, plan: 'Pro', tier: who === 'ann' ? 'gold' : 'silver' });
    const m = byPerson.get(who)!;
    t.match(m, { channel: 'webhook', status: 'sent', provider: 'http', provider_id: '204', title: 'POST', to: `${rec.url}?who=${who}`, body: d!.body });
    t.equal(d!.id, `msg_${m.message_id as string}`, 'the webhook-id names the message');
  }
  const got = await s.req('GET', `/campaigns/${campaignId}`, { token: ws.token, headers: { 'x-workspace-id': ws.id } });
  t.match(got.body.data.stats, { sent: 2, failed: 0, by_channel: { webhook: { sent: 2, failed: 0 }, push: { sent: 0 } } }, 'stats count the webhook channel');
});

t.test('a 500 is retried, then recorded failed with its status; a private address is refused; an unsubscribed person is skipped', async (t) => {
  const rec = await receiver(t);
  rec.answer = () => 500;
  const failing = { id: 'down', type: 'webhook', url: rec.url, body: '{"user": "{{ person.external_id }}"}' };
  const { byPerson } = await run([failing], [{ userId: 'cy' }], async (ws) => {
    rec.secrets.push(await nodeSecretOf(ws));
  });
  t.match(byPerson.get('cy'), { status: 'failed', provider_id: '500', error: /^HTTP 500/ });
  t.equal(rec.deliveries.length, 3, 'three attempts (the one retry rule)');
  t.equal(new Set(rec.deliveries.map((d) => d.id)).size, 1, 'each with the same webhook-id');
  t.ok(rec.deliveries.every((d) => d.verifiedBy.length === 1), 'each signed');

  const privateNode = { id: 'lan', type: 'webhook', url: 'http://10.1.2.3:8080/hook', method: 'PUT' };
  const refused = await run([privateNode], [{ userId: 'dee' }]);
  t.match(refused.byPerson.get('dee'), { status: 'failed', title: 'PUT', error: /refused: .*HERALD_ALLOWED_PRIVATE_HOSTS/, body: '{}' });

  const rec2 = await receiver(t);
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  await s.req('POST', '/people/batch', { token: k.write, body: { identify: [{ userId: 'eve' }] } });
  const eve = await personUuid(k.ws, 'eve');
  const unsub = await s.req('PATCH', `/workspaces/${k.ws.id}/people/${eve}`, { token: k.ws.token, body: { status: 'unsubscribed' } });
  t.equal(unsub.status, 200, unsub.text);
  const id = await triggerWebhookCampaign(s, k.ws, k.trigger, [{ id: 'w', type: 'webhook', url: rec2.url }]);
  const list = await until(async () => {
    const m = await s.req('GET', `/workspaces/${k.ws.id}/campaigns/${id}/messages`, { token: k.ws.token });
    return (m.body.messages ?? []).length > 0 ? (m.body.messages as Message[]) : undefined;
  }, 30_000);
  t.match(list[0], { channel: 'webhook', status: 'skipped', skip_reason: 'person_unsubscribed' });
  t.equal(rec2.deliveries.length, 0, 'nobody called');
});

t.test('a 4xx is final (one call); the record keeps the first 1 kB of the answer', async (t) => {
  let calls = 0;
  const server = http.createServer((req, res) => {
    calls++;
    req.resume();
    req.on('end', () => res.writeHead(422, { 'content-type': 'text/plain' }).end('x'.repeat(1000) + 'y'.repeat(2000)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const { byPerson } = await run([{ id: 'w', type: 'webhook', url, body: '{}' }], [{ userId: 'gus' }]);
  t.equal(calls, 1, 'not retried');
  t.match(byPerson.get('gus'), { status: 'failed', provider_id: '422', error: `HTTP 422: ${'x'.repeat(1000)}${'y'.repeat(24)}` });
  t.equal((byPerson.get('gus')!.error as string).length, 'HTTP 422: '.length + 1024, 'cut at 1 kB');
});

t.test("a node's topic: only its subscribers are called for", async (t) => {
  const rec = await receiver(t);
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  const topic = await s.req('POST', `/workspaces/${k.ws.id}/topics`, { token: k.ws.token, body: { name: 'Ops', default: 'opted_out' } });
  t.equal(topic.status, 201, topic.text);
  await s.req('POST', '/people/batch', { token: k.write, body: { identify: [{ userId: 'hal' }, { userId: 'ida' }] } });
  const ida = await personUuid(k.ws, 'ida');
  await personUuid(k.ws, 'hal');
  const sub = await s.req('PUT', `/workspaces/${k.ws.id}/people/${ida}/subscriptions`, { token: k.ws.token, body: { subscriptions: { [topic.body.data.topic.id]: true } } });
  t.equal(sub.status, 200, sub.text);
  const id = await triggerWebhookCampaign(s, k.ws, k.trigger, [{ id: 'w', type: 'webhook', url: rec.url, topic_id: topic.body.data.topic.id, body: '{"who": "{{ person.external_id }}"}' }]);
  const list = await until(async () => {
    const m = await s.req('GET', `/workspaces/${k.ws.id}/campaigns/${id}/messages`, { token: k.ws.token });
    return (m.body.messages ?? []).length === 2 ? (m.body.messages as Message[]) : undefined;
  });
  const by = new Map(list.map((m) => [m.external_id, m]));
  t.match(by.get('hal'), { status: 'skipped', skip_reason: 'topic_unsubscribed' });
  t.match(by.get('ida'), { status: 'sent' });
  t.same(rec.deliveries.map((d) => JSON.parse(d.body)), [{ who: 'ida' }], 'only the subscriber was called for');
});

t.test('activation refuses a node without url, or with a body that is not JSON once rendered', async (t) => {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'] });
  const hdr = { token: k.ws.token, headers: { 'x-workspace-id': k.ws.id } };
  const nodes = [
    { id: 'a', type: 'webhook', body: '{}' },
    { id: 'b', type: 'webhook', url: 'https://example.com/x', body: '{"n": {{ traits.count }}}' },
    { id: 'c', type: 'webhook', url: 'ftp://example.com/x' },
    { id: 'd', type: 'webhook', url: 'https://example.com/x', body: '{"n": {{ traits.count | default: 0 }}}' },
  ];
  const c = await s.req('POST', '/campaigns', { ...hdr, body: { name: 'Hooks', trigger_type: 'webhook', trigger_config: {}, audience_config: {}, workflow_definition: { nodes } } });
  t.equal(c.status, 201, c.text);
  const a = await s.req('PUT', `/campaigns/${c.body.data.campaign.id}`, { ...hdr, body: { status: 'active' } });
  sessionError(t, a, 400, 'ACTIVATION_FAILED');
  const fields = (a.body.error.details as { field: string }[]).map((d) => d.field).sort();
  t.same(fields, ['workflow_definition.nodes.0.url', 'workflow_definition.nodes.1.body', 'workflow_definition.nodes.2.url'], a.text);
  const bad = await s.req('POST', '/campaigns', { ...hdr, body: { name: 'Bad', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'x', type: 'webhook', url: 'https://example.com', method: 'DELETE' }] } } });
  t.equal(bad.status, 400, 'a method other than POST, PUT, PATCH is refused');
});

t.test('the builder: preview renders url and body; a test send calls once; the node secret is for owners and admins', async (t) => {
  const rec = await receiver(t);
  const k = await workspaceWithKeys(s, { write: ['people:write'] });
  rec.secrets.push(await nodeSecretOf(k.ws));
  const preview = await s.req('POST', `/workspaces/${k.ws.id}/templates/preview`, { token: k.ws.token, body: { channel: 'webhook', content: { url: 'https://example.com/{{ a }}', body: '{"a": "{{ a }}"}' }, variables: { a: 'x' } } });
  t.equal(preview.status, 200, preview.text);
  t.same(preview.body.rendered, { url: 'https://example.com/x', body: '{"a": "x"}' });

  await s.req('POST', '/people/batch', { token: k.write, body: { identify: [{ userId: 'fay' }] } });
  const personId = await personUuid(k.ws, 'fay');
  const hdr = { token: k.ws.token, headers: { 'x-workspace-id': k.ws.id } };
  const c = await s.req('POST', '/campaigns', { ...hdr, body: { name: 'T', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'w', type: 'webhook', url: rec.url, body: '{"who": "{{ person.external_id }}"}' }] } } });
  t.equal(c.status, 201, c.text);
  const sent = await s.req('POST', `/workspaces/${k.ws.id}/campaigns/${c.body.data.campaign.id}/test-send`, { token: k.ws.token, body: { node_id: 'w', person_id: personId } });
  t.equal(sent.status, 200, sent.text);
  t.match(sent.body.data, { channel: 'webhook', status: 'sent', provider: 'http', provider_id: '204', address: rec.url });
  t.equal(rec.deliveries.length, 1);
  t.same(JSON.parse(rec.deliveries[0]!.body), { who: 'fay' });
  t.equal(rec.deliveries[0]!.verifiedBy.length, 1, 'signed with the node secret');

  const member = uniqueUser('member');
  t.equal((await s.req('POST', `/workspaces/${k.ws.id}/members`, { token: k.ws.token, body: { user_id: member, role: 'member' } })).status, 201);
  const refused = await s.req('GET', `/workspaces/${k.ws.id}/webhooks/node-secret`, { token: await s.session(member) });
  t.equal(refused.status, 403, 'a member cannot read the node secret');
  t.same(refused.body, FORBIDDEN);
});
