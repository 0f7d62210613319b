// The dashboard's campaign authoring support routes (README, Dashboard) through the real HTTP
// server: the audience preview (count and sample, bounded, one workspace only, refusals naming
// the field), the template preview (each channel rendered as its send renders it, a Liquid error
// naming the field and its line), and a node's test send (outside quiet hours and caps, the
// person's and address checks still applying, recorded with tags ["test"], left out of the
// campaign's stats) on the sandbox providers, with no channel configured.
import t, { type Test } from 'tap';
import pg from 'pg';
import { storeUrl, uniqueUser } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { FORBIDDEN, UUID, sessionError } from '../helpers/assert.js';
import { PushWs, comfortableZone, hhmm, pushToken } from '../helpers/push.js';

const PUBLIC = 'https://herald.example.com';
const s = await sharedServer({ HERALD_PUBLIC_URL: `${PUBLIC}/` });
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

type Json = Record<string, unknown>;

/** A person through identify (email, phone, traits); returns their UUID. */
async function person(w: PushWs, userId: string, fields: Json = {}): Promise<string> {
  const r = await s.req('POST', '/identify', { token: w.keys.all, body: { userId, ...fields } });
  if (r.status !== 200) throw new Error(`identify failed: ${r.status} ${r.text}`);
  return r.body.person.id as string;
}

const preview = (w: PushWs, audience_config: unknown, token = w.ws.token) => s.req('POST', `/workspaces/${w.id}/audiences/preview`, { token, body: { audience_config } });
const render = (w: PushWs, body: unknown, token = w.ws.token) => s.req('POST', `/workspaces/${w.id}/templates/preview`, { token, body });
const testSend = (w: PushWs, campaignId: string, body: unknown, token = w.ws.token) => s.req('POST', `/workspaces/${w.id}/campaigns/${campaignId}/test-send`, { token, body });

async function campaign(t: Test, w: PushWs, nodes: Json[]): Promise<string> {
  const r = await s.req('POST', '/campaigns', { token: w.ws.token, headers: { 'x-workspace-id': w.id }, body: { name: 'Authoring', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes } } });
  t.equal(r.status, 201, r.text);
  return r.body.data.campaign.id as string;
}

t.test('audience preview: count and a sample of dashboard people, this workspace only', async (t) => {
  const w = await PushWs.create(s);
  const other = await PushWs.create(s);
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push(await person(w, `vip-${i}`, { email: `vip${i}@example.com`, traits: { plan: 'pro', n: i } }));
  await person(w, 'free-1', { traits: { plan: 'free' } });
  await person(other, 'elsewhere', { traits: { plan: 'pro' } });

  const pro = await preview(w, { filters: [{ field: 'traits.plan', operator: 'eq', value: 'pro' }] });
  t.equal(pro.status, 200, pro.text);
  t.match(pro.body, { success: true, count: 12, count_capped: false });
  t.equal(pro.body.sample.length, 10, 'at most ten in the sample');
  t.same(pro.body.sample.map((p: { id: string }) => p.id), ids.slice(0, 10), 'oldest first, of this workspace');
  t.match(pro.body.sample[0], { id: UUID, workspace_id: w.id, external_id: 'vip-0', email: 'vip0@example.com', status: 'active' });

  const any = await preview(w, { match: 'any', filters: [{ field: 'traits.n', operator: 'gte', value: 11 }, { field: 'traits.plan', operator: 'eq', value: 'free' }] });
  t.match(any.body, { count: 2, count_capped: false });
  t.same(any.body.sample.map((p: { external_id: string }) => p.external_id).sort(), ['free-1', 'vip-11']);
  t.match((await preview(w, {})).body, { count: 13 }, 'no filters: everyone in the workspace');
  t.match((await preview(w, { filters: [{ field: 'traits.plan', operator: 'eq', value: 'gold' }] })).body, { count: 0, sample: [] });
});

t.test('audience preview: a count past the ceiling says it is capped', async (t) => {
  const w = await PushWs.create(s);
  // 10,001 people straight into the store: the ceiling is 10,000.
  await sql.query(
    `INSERT INTO people (id, workspace_id, external_id, traits) SELECT gen_random_uuid(), $1, 'bulk-' || g, '{"bulk":true}' FROM generate_series(1, 10001) g`,
    [w.id],
  );
  const r = await preview(w, { filters: [{ field: 'traits.bulk', operator: 'eq', value: true }] });
  t.equal(r.status, 200, r.text);
  t.match(r.body, { count: 10_000, count_capped: true });
  t.equal(r.body.sample.length, 10);
});

t.test('audience preview: refusals name the field; members only, sessions only', async (t) => {
  const w = await PushWs.create(s);
  sessionError(t, await preview(w, { filters: [{ field: 'traits.plan', operator: 'almost', value: 1 }] }), 400, 'VALIDATION_ERROR', 'audience_config.filters.0.operator');
  sessionError(t, await preview(w, { filters: [{ field: 'parameters.x', operator: 'eq', value: 1 }] }), 400, 'VALIDATION_ERROR', 'audience_config.filters.0.field');
  sessionError(t, await preview(w, { match: 'some' }), 400, 'VALIDATION_ERROR', 'audience_config.match');
  sessionError(t, await preview(w, { filters: [{ field: 'bought', operator: 'performed_count_gte', value: { count: 1e30 } }] }), 400, 'VALIDATION_ERROR', 'audience_config.filters.0.value');
  sessionError(t, await s.req('POST', `/workspaces/${w.id}/audiences/preview`, { token: w.ws.token, body: {} }), 400, 'VALIDATION_ERROR', 'audience_config');
  const stranger = await preview(w, {}, await s.session(uniqueUser('stranger')));
  t.equal(stranger.status, 403);
  t.same(stranger.body, FORBIDDEN);
  t.equal((await preview(w, {}, w.keys.all)).status, 403, 'an API key: sessions only');
});

t.test('template preview: each channel rendered for a person, as its send renders it', async (t) => {
  const w = await PushWs.create(s);
  const ada = await person(w, 'ada', { email: 'ada@example.com', phone: '+14155550100', traits: { first_name: 'Ada', plan: 'pro' } });

  const push = await render(w, { channel: 'push', person_id: ada, variables: { code: 'X1' }, content: { title: 'Hi {{ person.first_name }}', body: '{{ traits.plan }} {{ code }}', custom_data: { deep: '{{ person.external_id }}' }, subject: 'ignored' } });
  t.equal(push.status, 200, push.text);
  t.same(push.body, { success: true, rendered: { title: 'Hi Ada', body: 'pro X1', custom_data: { deep: 'ada' } } });

  const email = await render(w, { channel: 'email', person_id: ada, content: { subject: 'For {{ person.email }}', html: '<p>Hello <b>{{ traits.first_name }}</b> <a href="{{ unsubscribe_url }}">unsubscribe</a></p>', preheader: 'Psst {{ traits.plan }}' } });
  t.equal(email.status, 200, email.text);
  const e = email.body.rendered;
  t.equal(e.subject, 'For ada@example.com');
  t.equal(e.preheader, 'Psst pro', 'the preheader is Liquid too');
  t.match(e.html, /^<div style="display:none[^>]*>Psst pro<\/div><p>Hello <b>Ada<\/b>/, 'the html as sent: the preheader first, hidden');
  t.ok(e.html.includes(`href="${PUBLIC}/u/preview"`), 'unsubscribe_url: a preview link that unsubscribes nobody');
  t.match(e.text, /^Hello Ada unsubscribe \[https:\/\/herald\.example\.com\/u\/preview\]/, 'the text part derived from the html, as sending derives it');
  const own = await render(w, { channel: 'email', content: { subject: 's', html: '<p>h</p>', text: 'Own {{ missing }}text' } });
  t.same(own.body.rendered, { subject: 's', html: '<p>h</p>', text: 'Own text', preheader: null }, 'an own text part is kept; no person: empty scope');

  const sms = await render(w, { channel: 'sms', person_id: ada, content: { body: 'Code for {{ person.phone }}', title: 'ignored' } });
  t.same(sms.body, { success: true, rendered: { body: 'Code for +14155550100' } });
});

t.test('template preview: a Liquid error names the field and its line; an unknown person is a 404', async (t) => {
  const w = await PushWs.create(s);
  const parse = await render(w, { channel: 'email', content: { subject: 'ok', html: '<p>\nline two\n{{ x | nope }}</p>' } });
  sessionError(t, parse, 400, 'VALIDATION_ERROR', 'content.html');
  t.match(parse.body.error.details[0].message, /line:3/, 'the line of the error');
  const unclosed = await render(w, { channel: 'push', content: { title: 'a', body: '{% if x %}' } });
  sessionError(t, unclosed, 400, 'VALIDATION_ERROR', 'content.body');
  t.match(unclosed.body.error.details[0].message, /line:1/);
  sessionError(t, await render(w, { channel: 'sms', content: { body: '{{ "a" | divided_by: 0 | nope2 }}' } }), 400, 'VALIDATION_ERROR', 'content.body');
  sessionError(t, await render(w, { channel: 'fax', content: {} }), 400, 'VALIDATION_ERROR', 'channel');
  const unknown = await render(w, { channel: 'sms', person_id: '00000000-0000-4000-8000-000000000000', content: { body: 'x' } });
  sessionError(t, unknown, 404, 'PERSON_NOT_FOUND');
  const other = await PushWs.create(s);
  const theirs = await person(other, 'theirs');
  sessionError(t, await render(w, { channel: 'sms', person_id: theirs, content: { body: 'x' } }), 404, 'PERSON_NOT_FOUND', undefined);
  t.equal((await render(w, { channel: 'sms', content: { body: 'x' } }, w.keys.all)).status, 403, 'an API key: sessions only');
});

t.test('test send: each node type on the sandbox, outside quiet hours and caps, tagged test, not in the stats', async (t) => {
  const w = await PushWs.create(s);
  const ada = await person(w, 'ada', { email: 'ada@example.com', phone: '+14155550100', traits: { first_name: 'Ada' } });
  await w.device('ada', pushToken(), 'android');
  // Quiet hours holding now, and a daily cap of one push already reached: neither applies to a test send.
  const { zone, now } = comfortableZone();
  await w.policy({ timezone: zone, quiet_hours: { start: hhmm(now - 60), end: hhmm(now + 60) }, max_pushes_per_day: 1 });
  const id = await campaign(t, w, [
    { id: 'p', type: 'push', title: 'Hi {{ person.first_name }}', body: 'Welcome' },
    { id: 'wait', type: 'delay', minutes: 5 },
    { id: 'e', type: 'email', subject: 'Hello {{ person.first_name }}', html: '<p>Hi <a href="{{ unsubscribe_url }}">stop</a></p>' },
    { id: 's', type: 'sms', body: 'Hi {{ person.first_name }}' },
  ]);

  for (const round of [1, 2]) {
    const p = await testSend(w, id, { node_id: 'p', person_id: ada });
    t.equal(p.status, 200, p.text);
    t.match(p.body, { success: true, data: { message_id: UUID, node_id: 'p', channel: 'push', status: 'sent', provider: 'sandbox', address: null, skip_reason: null, error: null } }, `push, round ${round}: quiet hours and the cap do not apply`);
  }
  const e = await testSend(w, id, { node_id: 'e', person_id: ada });
  t.match(e.body, { success: true, data: { node_id: 'e', channel: 'email', status: 'delivered', provider: 'sandbox', address: 'ada@example.com', skip_reason: null, error: null } });
  const sms = await testSend(w, id, { node_id: 's', person_id: ada });
  t.match(sms.body, { success: true, data: { node_id: 's', channel: 'sms', status: 'delivered', provider: 'sandbox', address: '+14155550100' } }, 'sms: quiet hours do not apply');

  const rows = await sql.query(`SELECT id::text, channel, title, body, tags, campaign_id FROM messages WHERE workspace_id = $1 ORDER BY created_at`, [w.id]);
  t.equal(rows.rowCount, 4);
  for (const r of rows.rows) t.match(r, { tags: ['test'], campaign_id: id }, `${r.channel}: recorded with tags ["test"]`);
  t.equal(rows.rows.find((r) => r.channel === 'email')!.title, 'Hello Ada', 'rendered as sent');
  t.equal(rows.rows.find((r) => r.id === e.body.data.message_id)?.channel, 'email', 'message_id names the record');
  const history = await w.history(ada);
  t.equal(history.body.messages.length, 4, "in the person's message history");

  const stats = await s.req('GET', `/campaigns/${id}`, { token: w.ws.token, headers: { 'x-workspace-id': w.id } });
  t.match(stats.body.data.stats, { enrolled: 0, sent: 0, failed: 0, delivered: 0 }, "test sends are not the campaign's stats");
});

t.test("test send: the person's and address checks still answer their skip", async (t) => {
  const w = await PushWs.create(s);
  const id = await campaign(t, w, [
    { id: 'p', type: 'push', title: 'Hi' },
    { id: 'e', type: 'email', subject: 'Hi', text: 'Hi' },
    { id: 's', type: 'sms', body: 'Hi' },
    { id: 'wait', type: 'delay', minutes: 1 },
  ]);
  const bare = await person(w, 'bare');
  const skip = async (node: string, personId: string, reason: string) => {
    const r = await testSend(w, id, { node_id: node, person_id: personId });
    t.equal(r.status, 200, r.text);
    t.match(r.body.data, { node_id: node, status: 'skipped', skip_reason: reason, error: String }, `${node}: ${reason}`);
  };
  await skip('p', bare, 'no_active_device_tokens');
  await skip('e', bare, 'no_email_address');
  await skip('s', bare, 'no_phone_number');
  const gone = await person(w, 'gone', { email: 'gone@example.com', phone: '+14155550101' });
  await w.device('gone', pushToken(), 'ios');
  await w.consent(gone, 'unsubscribed');
  await skip('p', gone, 'person_unsubscribed');
  await skip('e', gone, 'person_unsubscribed');
  await skip('s', gone, 'person_unsubscribed');
  const listed = await person(w, 'listed', { email: 'listed@example.com' });
  t.equal((await s.req('POST', `/workspaces/${w.id}/suppressions`, { token: w.ws.token, body: { channel: 'email', address: 'listed@example.com', suppression_type: 'manual' } })).status, 201);
  await skip('e', listed, 'address_suppressed');
  const skips = await sql.query(`SELECT count(*)::int AS n FROM messages WHERE workspace_id = $1 AND status = 'skipped' AND tags @> '["test"]'`, [w.id]);
  t.equal(skips.rows[0].n, 7, 'skips are recorded too');

  sessionError(t, await testSend(w, id, { node_id: 'wait', person_id: bare }), 400, 'VALIDATION_ERROR', 'node_id');
  sessionError(t, await testSend(w, id, { node_id: 'nope', person_id: bare }), 404, 'NOT_FOUND');
  sessionError(t, await testSend(w, id, { node_id: 'p', person_id: '00000000-0000-4000-8000-000000000000' }), 404, 'PERSON_NOT_FOUND');
  sessionError(t, await testSend(w, id, { node_id: 'p' }), 400, 'VALIDATION_ERROR', 'person_id');
  const other = await PushWs.create(s);
  sessionError(t, await testSend(other, id, { node_id: 'p', person_id: bare }), 404, 'NOT_FOUND');
  t.equal((await testSend(w, id, { node_id: 'p', person_id: bare }, w.keys.all)).status, 403, 'an API key: sessions only');
});

t.test('test send: an email whose Liquid fails to render says which field, as the dashboard names it', async (t) => {
  const w = await PushWs.create(s);
  const ada = await person(w, 'ada', { email: 'ada@example.com' });
  // Parses, then renders past the characters one recipient's fields may take.
  const id = await campaign(t, w, [{ id: 'e', type: 'email', subject: '{% for i in (1..10000) %}0123456789{% endfor %}', html: '<p>Hi</p>' }]);
  const r = await testSend(w, id, { node_id: 'e', person_id: ada });
  t.equal(r.status, 200, r.text);
  t.match(r.body.data, { status: 'failed', error: /^Template render failed: subject: rendered content is over/ });
  t.match((await w.history(ada)).body.messages, [{ status: 'failed', error: /^Template render failed: subject: / }], 'recorded so');
});

t.test('test send: a node without what activation needs names the field', async (t) => {
  const w = await PushWs.create(s);
  const ada = await person(w, 'ada', { email: 'ada@example.com' });
  const id = await campaign(t, w, [{ id: 'p', type: 'push', image_url: 'https://example.com/x.png' }, { id: 'e', type: 'email', html: '<p>no subject</p>' }]);
  sessionError(t, await testSend(w, id, { node_id: 'p', person_id: ada }), 400, 'VALIDATION_ERROR', 'workflow_definition.nodes.0');
  sessionError(t, await testSend(w, id, { node_id: 'e', person_id: ada }), 400, 'VALIDATION_ERROR', 'workflow_definition.nodes.1.subject');
});
