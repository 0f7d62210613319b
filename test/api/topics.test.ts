// Topics and the preference center through the real HTTP server (docs/audiences.md): topics CRUD;
// a person's subscriptions (their choice, else the topic's default) read and changed on the
// person routes; an email node naming a topic skips those not subscribed (`topic_unsubscribed`);
// `{{ preferences_url }}` opens /p/{token}, whose GET changes nothing and whose POST saves the
// toggles or unsubscribes from everything; a topic's unsubscribe link leaves that topic only.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { eventually, triggerWebhookCampaign, workspaceWithKeys } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { ISO_MS, UUID, sessionError, type Ws } from '../helpers/assert.js';

const s = await sharedServer();

const topics = (ws: Ws, rest = '') => `/workspaces/${ws.id}/topics${rest}`;
const subs = (ws: Ws, personId: string) => `/workspaces/${ws.id}/people/${personId}/subscriptions`;

async function newTopic(ws: Ws, name: string, dflt: 'opted_in' | 'opted_out'): Promise<string> {
  const r = await s.req('POST', topics(ws), { token: ws.token, body: { name, default: dflt, description: `${name} news` } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data.topic.id;
}

async function personId(ws: Ws, externalId: string): Promise<string> {
  return eventually(async () => {
    const r = await s.req('GET', `/workspaces/${ws.id}/people?limit=100`, { token: ws.token });
    return r.body.people.find((p: { external_id: string }) => p.external_id === externalId)?.id;
  });
}

t.test('topics: create, list, get, change, delete', async (t) => {
  const { ws } = await workspaceWithKeys(s, {});
  const r = await s.req('POST', topics(ws), { token: ws.token, body: { name: 'Product news', default: 'opted_in' } });
  t.equal(r.status, 201, r.text);
  t.match(r.body.data.topic, { id: UUID, workspace_id: ws.id, name: 'Product news', description: null, default: 'opted_in', created_at: ISO_MS });
  const id = r.body.data.topic.id;
  const u = await s.req('PUT', topics(ws, `/${id}`), { token: ws.token, body: { default: 'opted_out', description: 'Monthly' } });
  t.match(u.body.data.topic, { name: 'Product news', description: 'Monthly', default: 'opted_out' });
  t.equal((await s.req('GET', topics(ws), { token: ws.token })).body.total, 1);
  sessionError(t, await s.req('POST', topics(ws), { token: ws.token, body: { name: 'x', default: 'maybe' } }), 400, 'VALIDATION_ERROR', 'default');
  sessionError(t, await s.req('POST', topics(ws), { token: ws.token, body: { name: 'x' } }), 400, 'VALIDATION_ERROR', 'default');
  sessionError(t, await s.req('GET', topics(ws, `/${randomUUID()}`), { token: ws.token }), 404, 'NOT_FOUND');
  t.equal((await s.req('DELETE', topics(ws, `/${id}`), { token: ws.token })).status, 200);
  t.equal((await s.req('GET', topics(ws, `/${id}`), { token: ws.token })).status, 404);
});

t.test('a topic opt-out is honoured by a campaign; the preference page and the topic unsubscribe link', async (t) => {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  const ws = k.ws;
  const news = await newTopic(ws, 'News', 'opted_in');
  const offers = await newTopic(ws, 'Offers', 'opted_out');
  const people = ['out', 'in', 'leaver'].map((userId) => ({ userId, email: `${userId}@example.com` }));
  t.equal((await s.req('POST', '/people/batch', { token: k.write, body: { identify: people } })).status, 200);
  const out = await personId(ws, 'out');
  const inn = await personId(ws, 'in');
  const leaver = await personId(ws, 'leaver');

  // Subscriptions: the defaults, then a choice.
  const before = await s.req('GET', subs(ws, out), { token: ws.token });
  t.equal(before.status, 200, before.text);
  t.same(before.body.subscriptions, { [news]: true, [offers]: false });
  const set = await s.req('PUT', subs(ws, out), { token: ws.token, body: { subscriptions: { [news]: false } } });
  t.same(set.body.subscriptions, { [news]: false, [offers]: false });
  sessionError(t, await s.req('PUT', subs(ws, out), { token: ws.token, body: { subscriptions: { [randomUUID()]: true } } }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('GET', subs(ws, randomUUID()), { token: ws.token }), 404, 'PERSON_NOT_FOUND');

  const node = { id: 'mail', type: 'email', topic_id: news, subject: 'News', html: '<p>Hi</p>', text: 'Prefs: {{ preferences_url }} Stop: {{ unsubscribe_url }}' };
  const campaignId = await triggerWebhookCampaign(s, ws, k.trigger, node);
  const messages = await eventually(async () => {
    const r = await s.req('GET', `/workspaces/${ws.id}/campaigns/${campaignId}/messages`, { token: ws.token });
    return r.body.messages?.length === 3 ? r.body.messages : null;
  }, 20_000);
  t.ok(messages, 'every person recorded');
  const byPerson = new Map(messages.map((m: { external_id: string }) => [m.external_id, m]));
  t.match(byPerson.get('out'), { status: 'skipped', skip_reason: 'topic_unsubscribed' });
  t.match(byPerson.get('in'), { status: /^(sent|delivered)$/ });
  const body = (byPerson.get('in') as { body: string }).body;
  const prefs = /\/p\/[A-Za-z0-9_-]{86}/.exec(body)?.[0];
  const stop = /\/u\/[A-Za-z0-9_-]{86}/.exec(body)?.[0];
  t.ok(prefs && stop, `the links are in the email: ${body}`);

  // The preference page: GET changes nothing, with the unsubscribe page's headers.
  const page = await fetch(`${s.base}${prefs}`);
  t.equal(page.status, 200);
  const html = await page.text();
  t.match(page.headers.get('content-security-policy'), /default-src 'none'.*frame-ancestors 'none'/);
  t.equal(page.headers.get('referrer-policy'), 'no-referrer');
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  t.match(html, new RegExp(`value="${news}" checked`));
  t.match(html, new RegExp(`value="${offers}">`), 'offers unticked (its default)');
  t.match(html, /Unsubscribe from everything/);
  t.same((await s.req('GET', subs(ws, inn), { token: ws.token })).body.subscriptions, { [news]: true, [offers]: false }, 'GET changed nothing');
  const form = (fields: string) => fetch(`${s.base}${prefs}`, { method: 'POST', body: fields, headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
  const saved = await form(`action=save&topic=${offers}`);
  t.equal(saved.status, 200);
  t.same((await s.req('GET', subs(ws, inn), { token: ws.token })).body.subscriptions, { [news]: false, [offers]: true }, 'the toggles saved');
  const tampered = prefs!.slice(0, -2) + (prefs!.endsWith('AA') ? 'Ag' : 'AA');
  t.equal((await fetch(`${s.base}${tampered}`)).status, 404);
  t.equal((await fetch(`${s.base}${stop!.replace('/u/', '/p/')}`)).status, 404, 'a topic link is not a preference link');

  // The topic's unsubscribe link (List-Unsubscribe one-click) leaves that topic only.
  const leaverMail = byPerson.get('leaver') as { body: string };
  const leaverStop = /\/u\/[A-Za-z0-9_-]{86}/.exec(leaverMail.body)![0];
  const shown = await fetch(`${s.base}${leaverStop}`);
  t.match(await shown.text(), /Unsubscribe from News/);
  const one = await fetch(`${s.base}${leaverStop}`, { method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
  t.equal(one.status, 200);
  t.same((await s.req('GET', subs(ws, leaver), { token: ws.token })).body.subscriptions, { [news]: false, [offers]: false });
  const person = await s.req('GET', `/workspaces/${ws.id}/people/${leaver}`, { token: ws.token });
  t.equal(person.body.data.person.status, 'active', 'still subscribed to everything else');
  // Unsubscribe from everything, from the preference page.
  const leaverPrefs = /\/p\/[A-Za-z0-9_-]{86}/.exec(leaverMail.body)![0];
  t.equal((await fetch(`${s.base}${leaverPrefs}`, { method: 'POST', body: 'action=unsubscribe_all', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status, 200);
  const gone = await s.req('GET', `/workspaces/${ws.id}/people/${leaver}`, { token: ws.token });
  t.equal(gone.body.data.person.status, 'unsubscribed');
});

t.test('a push node naming a topic skips those not subscribed, and sends to the others', async (t) => {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write', 'devices:register'] });
  const ws = k.ws;
  const offers = await newTopic(ws, 'Offers', 'opted_out');
  for (const userId of ['keen', 'quiet']) {
    const d = await s.req('POST', `/people/${userId}/devices`, { token: k.write, body: { token: `tok-${userId}-${randomUUID()}`, platform: 'android' } });
    t.equal(d.status, 201, d.text);
  }
  const keen = await personId(ws, 'keen');
  const up = await s.req('PUT', subs(ws, keen), { token: ws.token, body: { subscriptions: { [offers.toUpperCase()]: true } } });
  t.equal(up.status, 200, up.text);
  const unknown = await s.req('POST', '/campaigns', { token: ws.token, headers: { 'x-workspace-id': ws.id }, body: { name: 'x', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'p', type: 'push', topic_id: randomUUID(), title: 'x' }] } } });
  sessionError(t, unknown, 400, 'VALIDATION_ERROR', 'workflow_definition.nodes[0].topic_id');
  const campaignId = await triggerWebhookCampaign(s, ws, k.trigger, { id: 'p', type: 'push', topic_id: offers, title: 'Sale', body: 'Now' });
  const messages = await eventually(async () => {
    const r = await s.req('GET', `/workspaces/${ws.id}/campaigns/${campaignId}/messages`, { token: ws.token });
    return r.body.messages?.length === 2 ? r.body.messages : null;
  }, 20_000);
  t.ok(messages, 'both recorded');
  const byPerson = new Map(messages.map((m: { external_id: string }) => [m.external_id, m]));
  t.match(byPerson.get('keen'), { status: /^(sent|delivered)$/ });
  t.match(byPerson.get('quiet'), { status: 'skipped', skip_reason: 'topic_unsubscribed' }, 'opted out by the default');
});
