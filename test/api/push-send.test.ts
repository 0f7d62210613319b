// Single push sends through the real HTTP server, on the sandbox provider (docs/channels.md) unless a
// test configures the fakes: the documented send result, every skip reason and its order
// (docs/channels.md), dead-token feedback, templates, bad input, scheduled sends (docs/channels.md), the
// status object and the message history (docs/channels.md; README, Request bodies), and permissions (README, Permissions).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { FORBIDDEN, ISO_MS, UUID, badRequest, keyError, sessionError } from '../helpers/assert.js';
import { eventually, type Res } from '../helpers/server.js';
import {
  PushWs, comfortableZone, fcmSends, invalidField, isPolicySuppressed, isProviderError, isSent, isSkipped, pushToken, startPushServer,
} from '../helpers/push.js';

const { s, fakes } = await startPushServer(t);

const SEND_RESULT_FIELDS = ['error', 'message_id', 'provider', 'provider_id', 'sent_at', 'skip_reason', 'status', 'success'];
const masked = (token: string) => `${token.slice(0, 4)}***${token.slice(-4)}`;

/** Polls the status route until the message leaves `scheduled` (at most 20 s); returns the last status object. */
async function settled(w: PushWs, messageId: string): Promise<Record<string, unknown> | undefined> {
  const last = await eventually(async () => {
    const r = await w.status(messageId);
    return r.body?.message?.status !== 'scheduled' ? r : undefined;
  }, 20_000);
  return last?.body?.message;
}

t.test('a send reaches every active device: 200 sent; the status object; the history', async (t) => {
  const w = await PushWs.create(s);
  const a = pushToken('and-');
  const i = pushToken('ios-');
  const personId = await w.personWith('alice', [[a, 'android'], [i, 'ios']], { email: 'alice@example.com' });
  const ids = await w.devices('alice');

  const r = await w.send({
    external_id: 'alice', title: 'Hello', body: 'World', image_url: 'https://example.com/i.png', action_url: 'https://example.com/a',
    custom_data: { k: 'v' }, campaign_id: 'camp-1', event_id: 'evt-1', tags: ['welcome'],
  });
  isSent(t, r);
  for (const k of Object.keys(r.body)) t.ok(SEND_RESULT_FIELDS.includes(k), `result field ${k} is a documented one`);
  t.ok(Math.abs(Date.parse(r.body.sent_at) - Date.now()) < 60_000, 'sent_at is now');

  const st = await w.status(r.body.message_id);
  t.equal(st.status, 200, st.text);
  t.equal(st.body.success, true);
  const m = st.body.message;
  t.equal(m.message_id, r.body.message_id);
  t.equal(m.status, 'sent');
  t.equal(m.external_id, 'alice');
  t.equal(m.provider, 'sandbox');
  t.equal(m.title, 'Hello', 'title');
  t.equal(m.body, 'World', 'body');
  t.equal(m.campaign_id, 'camp-1');
  t.equal(m.event_id, 'evt-1');
  t.match(m.created_at, ISO_MS);
  t.match(m.sent_at, ISO_MS);
  t.notOk('skip_reason' in m && m.skip_reason !== null, 'no skip_reason');
  t.equal(m.deliveries.length, 2, 'one delivery per device');
  const byToken = new Map(m.deliveries.map((d: { device_token: string }) => [d.device_token, d]));
  for (const [token, platform] of [[a, 'android'], [i, 'ios']] as const) {
    const d = byToken.get(masked(token)) as Record<string, unknown> | undefined;
    t.ok(d, `a delivery for ${platform}, token masked as first 4 + *** + last 4`);
    t.equal(d?.device_id, ids.get(token)!.id, 'device_id');
    t.equal(d?.platform, platform);
    t.equal(d?.status, 'sent');
    t.type(d?.provider_id, 'string', 'provider_id of the device');
  }
  t.notOk(st.text.includes(a) || st.text.includes(i), 'no raw token in the status answer');

  const h = await w.history(personId);
  t.equal(h.status, 200, h.text);
  t.equal(h.body.success, true);
  t.equal(h.body.total, 1);
  t.same(h.body.messages, [m], 'the history holds the same status object');
});

t.test('only title or only body is enough; neither is a 400', async (t) => {
  const w = await PushWs.create(s);
  await w.personWith('solo', [[pushToken(), 'android']]);
  isSent(t, await w.send({ external_id: 'solo', title: 'Only a title' }));
  isSent(t, await w.send({ external_id: 'solo', body: 'Only a body' }));
});

t.test('skip: person unsubscribed or suppressed; bounced does not block; nothing stored', async (t) => {
  const w = await PushWs.create(s);
  const id = await w.personWith('consent', [[pushToken(), 'android']]);
  await w.consent(id, 'unsubscribed');
  await isSkipped(t, w, await w.send({ external_id: 'consent', title: 'x' }), 'person_unsubscribed');
  await w.consent(id, 'suppressed');
  await isSkipped(t, w, await w.send({ external_id: 'consent', title: 'x' }), 'person_suppressed');
  t.equal((await w.history(id)).body.total, 0, 'skipped sends store nothing');
  await w.consent(id, 'bounced');
  isSent(t, await w.send({ external_id: 'consent', title: 'x' }));
  await w.consent(id, 'active');
  isSent(t, await w.send({ external_id: 'consent', title: 'x' }));
  t.equal((await w.history(id)).body.total, 2, 'only the two sends are stored');
});

t.test('skip: no_active_device_tokens with no device, or only an unregistered one', async (t) => {
  const w = await PushWs.create(s);
  const none = await w.person('nodevice');
  await isSkipped(t, w, await w.send({ external_id: 'nodevice', title: 'x' }), 'no_active_device_tokens');
  const token = pushToken();
  const gone = await w.personWith('gone', [[token, 'ios']]);
  await w.unregister('gone', token);
  await isSkipped(t, w, await w.send({ external_id: 'gone', title: 'x' }), 'no_active_device_tokens');
  t.equal((await w.history(none)).body.total, 0);
  t.equal((await w.history(gone)).body.total, 0);
});

t.test('skip: device_token_suppressed when every token is suppressed; one of two suppressed is left out', async (t) => {
  const w = await PushWs.create(s);
  const a = pushToken('a-');
  const b = pushToken('b-');
  const id = await w.personWith('supp', [[a, 'android'], [b, 'web']]);
  const devices = await w.devices('supp');
  const sup = await w.suppress(a, 'android');
  t.equal(sup.status, 201, sup.text);

  const r = await w.send({ external_id: 'supp', title: 'x' });
  isSent(t, r);
  const st = await w.status(r.body.message_id);
  t.same(st.body.message.deliveries.map((d: { device_id: string }) => d.device_id), [devices.get(b)!.id], 'sent to the unsuppressed device only');

  t.equal((await w.suppress(b, 'web', 'disabled')).status, 201);
  await isSkipped(t, w, await w.send({ external_id: 'supp', title: 'x' }), 'device_token_suppressed');
  t.equal((await w.history(id)).body.total, 1);

  // Suppressions are the workspace's own: the same token in another workspace is sent to.
  const other = await PushWs.create(s);
  await other.personWith('supp', [[a, 'android']]);
  isSent(t, await other.send({ external_id: 'supp', title: 'x' }));
});

t.test('skip order: person status, then devices, then token suppression', async (t) => {
  const w = await PushWs.create(s);
  const lonely = await w.person('lonely');
  await w.consent(lonely, 'unsubscribed');
  await isSkipped(t, w, await w.send({ external_id: 'lonely', title: 'x' }), 'person_unsubscribed');

  const tok = pushToken();
  const quiet = await w.personWith('quiet', [[tok, 'android']]);
  t.equal((await w.suppress(tok, 'android')).status, 201);
  await w.consent(quiet, 'suppressed');
  await isSkipped(t, w, await w.send({ external_id: 'quiet', title: 'x' }), 'person_suppressed');

  // An inactive device whose token is also suppressed: the device check comes first.
  const old = pushToken();
  await w.personWith('inactive', [[old, 'ios']]);
  await w.unregister('inactive', old);
  t.equal((await w.suppress(old, 'ios')).status, 201);
  await isSkipped(t, w, await w.send({ external_id: 'inactive', title: 'x' }), 'no_active_device_tokens');
});

t.test('dead token (sandbox unregistered-): 500 PROVIDER_ERROR, record failed, device invalidated, suppression recorded, later sends skipped', async (t) => {
  const w = await PushWs.create(s);
  const dead = pushToken('unregistered-');
  const id = await w.personWith('dead', [[dead, 'android']]);
  const failedId = isProviderError(t, await w.send({ external_id: 'dead', title: 'x' }));
  const st = await w.status(failedId);
  t.equal(st.status, 200, 'the failed send is stored');
  t.equal(st.body.message.status, 'failed');
  t.equal(st.body.message.deliveries[0]?.status, 'failed');
  t.type(st.body.message.deliveries[0]?.error, 'string', 'the delivery says why');

  const d = (await w.devices('dead')).get(dead)!;
  t.equal(d.is_valid, false, 'is_valid:false');
  t.equal(d.is_active, false, 'is_active:false');
  const again = await w.suppress(dead, 'android', 'uninstalled');
  t.equal(again.status, 200, `an uninstalled suppression was recorded: ${again.text}`);
  t.equal(again.body.already_suppressed, true);

  await isSkipped(t, w, await w.send({ external_id: 'dead', title: 'x' }), 'no_active_device_tokens');
  t.equal((await w.history(id)).body.total, 1, 'the failed record only');

  // Registering the token again makes the device active, but the suppression stays until lifted.
  await w.device('dead', dead, 'android');
  await isSkipped(t, w, await w.send({ external_id: 'dead', title: 'x' }), 'device_token_suppressed');
  const lift = await s.req('DELETE', `/workspaces/${w.id}/push/tokens/suppress/${again.body.id}`, { token: w.keys.send });
  t.equal(lift.status, 200, lift.text);
  isProviderError(t, await w.send({ external_id: 'dead', title: 'x' }));
});

t.test('provider refusal (sandbox fail-): 500 PROVIDER_ERROR, the device untouched and tried again next time', async (t) => {
  const w = await PushWs.create(s);
  const bad = pushToken('fail-');
  await w.personWith('refused', [[bad, 'ios']]);
  const failedId = isProviderError(t, await w.send({ external_id: 'refused', title: 'x' }));
  t.equal((await w.status(failedId)).body.message.status, 'failed');
  const d = (await w.devices('refused')).get(bad)!;
  t.equal(d.is_valid, true, 'still valid');
  t.equal(d.is_active, true, 'still active');
  isProviderError(t, await w.send({ external_id: 'refused', title: 'x' }));
});

t.test('one good and one dead device: 200 sent, the dead one invalidated; a refused one left alone', async (t) => {
  const w = await PushWs.create(s);
  const good = pushToken('good-');
  const dead = pushToken('unregistered-');
  const refused = pushToken('fail-');
  await w.personWith('mixed', [[good, 'android'], [dead, 'android'], [refused, 'web']]);
  const r = await w.send({ external_id: 'mixed', title: 'x' });
  isSent(t, r);
  const st = (await w.status(r.body.message_id)).body.message;
  const status = Object.fromEntries(st.deliveries.map((d: { device_token: string; status: string }) => [d.device_token, d.status]));
  t.same(status, { [masked(good)]: 'sent', [masked(dead)]: 'failed', [masked(refused)]: 'failed' }, 'per-device outcome');
  const devices = await w.devices('mixed');
  t.same([devices.get(dead)!.is_valid, devices.get(dead)!.is_active], [false, false], 'dead device invalidated');
  t.same([devices.get(refused)!.is_valid, devices.get(refused)!.is_active], [true, true], 'refused device untouched');
  t.same([devices.get(good)!.is_valid, devices.get(good)!.is_active], [true, true]);
});

t.test('templates: variables, person and traits in title and body', async (t) => {
  const w = await PushWs.create(s);
  await w.personWith('tmpl', [[pushToken(), 'android']], { email: 'tmpl@example.com', plan: 'pro' });
  const r = await w.send({
    external_id: 'tmpl',
    title: 'Hi {{ name | upcase }}',
    body: '{{ traits.plan }} plan for {{ person.email }}{% if vip %}, VIP{% endif %}',
    variables: { name: 'ada', vip: true },
  });
  isSent(t, r);
  const m = (await w.status(r.body.message_id)).body.message;
  t.equal(m.title, 'Hi ADA', 'variables rendered (filters work)');
  t.equal(m.body, 'pro plan for tmpl@example.com, VIP', 'traits and person rendered');
});

t.test('template syntax errors: 400 naming the field, nothing sent or stored', async (t) => {
  const w = await PushWs.create(s);
  await w.useFakes(fakes);
  const token = pushToken();
  const id = await w.personWith('syntax', [[token, 'android']]);
  invalidField(t, await w.send({ external_id: 'syntax', title: 'Hi {{ name', body: 'ok' }), 'title');
  invalidField(t, await w.send({ external_id: 'syntax', title: 'ok', body: '{% if x %}never closed' }), 'body');
  invalidField(t, await w.send({ external_id: 'syntax', title: 'ok', custom_data: { fine: '{{ a }}', link: '{% for %}' } }), 'custom_data.link');
  invalidField(t, await w.send({ external_id: 'syntax', title: 'ok', scheduled_at: new Date(Date.now() + 60_000).toISOString(), body: '{% endif %}' }), 'body');
  t.equal(fcmSends(fakes, token).length, 0, 'the provider received nothing');
  t.equal((await w.history(id)).body.total, 0, 'nothing stored');
});

t.test('bad input: clear 4xx, nothing sent, nothing stored', async (t) => {
  const w = await PushWs.create(s);
  await w.useFakes(fakes);
  const token = pushToken();
  const id = await w.personWith('target', [[token, 'android']]);

  badRequest(t, await w.send({ title: 'x' }), 'external_id');
  badRequest(t, await w.send({ external_id: '', title: 'x' }), 'external_id');
  badRequest(t, await w.send({ external_id: 'x'.repeat(256), title: 'x' }), 'external_id');
  badRequest(t, await w.send({ external_id: 42, title: 'x' }), 'external_id');

  const byUuid = await w.send({ external_id: id, title: 'x' });
  t.equal(byUuid.status, 400, `the person UUID as external_id: ${byUuid.text}`);
  t.ok(byUuid.body?.code === 'VALIDATION_ERROR' || byUuid.body?.code === 400, 'VALIDATION_ERROR');
  t.match(byUuid.text, /external_id/, 'the message names external_id');

  const neither = await w.send({ external_id: 'target' });
  t.equal(neither.status, 400, `neither title nor body: ${neither.text}`);
  t.ok(neither.body?.code === 'VALIDATION_ERROR' || neither.body?.code === 400, 'VALIDATION_ERROR');

  for (const scheduled_at of ['tomorrow', '2030-13-45T00:00:00Z', 1893456000, '2030-01-01']) {
    badRequest(t, await w.send({ external_id: 'target', title: 'x', scheduled_at }), 'scheduled_at');
  }
  badRequest(t, await w.send({ external_id: 'target', title: 'x', custom_data: 'not an object' }), 'custom_data');
  badRequest(t, await w.send({ external_id: 'target', title: 'x', tags: ['ok', 7] }), 'tags.1');
  badRequest(t, await w.send({ external_id: 'target', title: 'x', variables: [1] }), 'variables');
  const malformed = await s.req('POST', `/workspaces/${w.id}/push/send`, { token: w.keys.send, raw: '{"external_id":', headers: { 'content-type': 'application/json' } });
  t.equal(malformed.status, 400, 'malformed JSON is a 400');

  keyError(t, await w.send({ external_id: 'ghost', title: 'x' }), 404, 'PERSON_NOT_FOUND');
  t.equal((await s.req('GET', '/people/ghost', { token: w.keys.all })).status, 404, 'an unknown external_id creates no person');

  t.equal(fcmSends(fakes, token).length, 0, 'the provider received nothing');
  t.equal((await w.history(id)).body.total, 0, 'nothing stored');
});

t.test('scheduled send: 202, status scheduled, then sent when due', async (t) => {
  const w = await PushWs.create(s);
  const id = await w.personWith('later', [[pushToken(), 'android']]);
  const at = new Date(Date.now() + 2000).toISOString();
  const r = await w.send({ external_id: 'later', title: 'Later {{ n }}', variables: { n: 1 }, scheduled_at: at });
  t.equal(r.status, 202, r.text);
  t.same(Object.keys(r.body).sort(), ['message_id', 'scheduled_at', 'status', 'success']);
  t.equal(r.body.success, true);
  t.equal(r.body.status, 'scheduled');
  t.match(r.body.message_id, UUID);
  t.equal(Date.parse(r.body.scheduled_at), Date.parse(at), 'scheduled_at echoed');

  const before = await w.status(r.body.message_id);
  t.equal(before.status, 200, before.text);
  t.equal(before.body.message.status, 'scheduled', 'scheduled until due');
  t.equal(Date.parse(before.body.message.scheduled_at), Date.parse(at));

  const m = await settled(w, r.body.message_id);
  t.equal(m?.status, 'sent', `sent when due: ${JSON.stringify(m)}`);
  t.equal(m?.title, 'Later 1', 'rendered');
  t.ok(Date.parse(String(m?.sent_at)) >= Date.parse(at), 'not sent before scheduled_at');
  t.equal((m?.deliveries as unknown[]).length, 1);
  const h = await w.history(id);
  t.equal(h.body.total, 1, 'one record: the scheduled one, sent');
});

t.test('scheduled_at at or before now sends at once (200)', async (t) => {
  const w = await PushWs.create(s);
  await w.personWith('now', [[pushToken(), 'android']]);
  isSent(t, await w.send({ external_id: 'now', title: 'x', scheduled_at: new Date(Date.now() - 60_000).toISOString() }));
  isSent(t, await w.send({ external_id: 'now', title: 'x', scheduled_at: new Date().toISOString() }));
});

t.test('scheduled send skipped at send time keeps its message id and shows skipped with the reason', async (t) => {
  const w = await PushWs.create(s);
  const id = await w.personWith('changed', [[pushToken(), 'android']]);
  const r = await w.send({ external_id: 'changed', title: 'x', scheduled_at: new Date(Date.now() + 2000).toISOString() });
  t.equal(r.status, 202, r.text);
  await w.consent(id, 'unsubscribed');
  const m = await settled(w, r.body.message_id);
  t.equal(m?.message_id, r.body.message_id);
  t.equal(m?.status, 'skipped', `skipped at send time: ${JSON.stringify(m)}`);
  t.equal(m?.skip_reason, 'person_unsubscribed');
});

t.test('scheduled send: the policy and the person are those of send time', async (t) => {
  const w = await PushWs.create(s);
  await w.personWith('busy', [[pushToken(), 'android']], { plan: 'free' });
  await w.policy({ timezone: comfortableZone().zone, max_pushes_per_day: 1 });
  const r = await w.send({ external_id: 'busy', title: 'Plan {{ traits.plan }}', scheduled_at: new Date(Date.now() + 2000).toISOString() });
  t.equal(r.status, 202, r.text);
  await w.person('busy', { plan: 'pro' });
  isSent(t, await w.send({ external_id: 'busy', title: 'now' }));
  const m = await settled(w, r.body.message_id);
  t.equal(m?.status, 'policy_suppressed', `the cap reached meanwhile holds it: ${JSON.stringify(m)}`);
  t.equal(m?.skip_reason, 'frequency_cap');

  await w.policy(null);
  const r2 = await w.send({ external_id: 'busy', title: 'Plan {{ traits.plan }}', scheduled_at: new Date(Date.now() + 1500).toISOString() });
  await w.person('busy', { plan: 'team' });
  const m2 = await settled(w, r2.body.message_id);
  t.equal(m2?.status, 'sent');
  t.equal(m2?.title, 'Plan team', 'rendered with the traits of send time');
});

t.test('scheduled send whose only device is dead: failed when due, device invalidated', async (t) => {
  const w = await PushWs.create(s);
  const dead = pushToken('unregistered-');
  await w.personWith('later-dead', [[dead, 'ios']]);
  const r = await w.send({ external_id: 'later-dead', title: 'x', scheduled_at: new Date(Date.now() + 1500).toISOString() });
  t.equal(r.status, 202, r.text);
  const m = await settled(w, r.body.message_id);
  t.equal(m?.status, 'failed', JSON.stringify(m));
  t.equal((await w.devices('later-dead')).get(dead)!.is_valid, false);
});

t.test('scheduled send for an unknown person: 404 at once', async (t) => {
  const w = await PushWs.create(s);
  keyError(t, await w.send({ external_id: 'nobody', title: 'x', scheduled_at: new Date(Date.now() + 60_000).toISOString() }), 404, 'PERSON_NOT_FOUND');
});

t.test('status: 404 for unknown, non-UUID, skipped-… and another workspace\'s ids', async (t) => {
  const w = await PushWs.create(s);
  const other = await PushWs.create(s);
  await w.personWith('mine', [[pushToken(), 'android']]);
  const sent = await w.send({ external_id: 'mine', title: 'x' });
  isSent(t, sent);
  keyError(t, await other.status(sent.body.message_id), 404, 'NOT_FOUND');
  for (const id of [randomUUID(), 'not-a-uuid', 'skipped-1700000000', sent.body.message_id.replace(/-/g, '')]) {
    keyError(t, await w.status(id), 404, 'NOT_FOUND');
  }
  // The owner's read key still finds it.
  t.equal((await w.status(sent.body.message_id)).status, 200);
});

t.test('a message record carries events, [] until a provider reports one: the status route and the history', async (t) => {
  const w = await PushWs.create(s);
  const id = await w.personWith('quiet', [[pushToken(), 'android']]);
  const r = await w.send({ external_id: 'quiet', title: 'x' });
  isSent(t, r);
  t.same((await w.status(r.body.message_id)).body.message.events, [], 'the status route');
  t.same((await w.history(id)).body.messages.map((m: { events: unknown }) => m.events), [[]], 'the history');
});

t.test('history: newest first, limit and offset, limit over 100 reduced, 404 for unknown people', async (t) => {
  const w = await PushWs.create(s);
  const id = await w.personWith('hist', [[pushToken(), 'android']]);
  const sent: string[] = [];
  for (let n = 0; n < 3; n++) {
    const r = await w.send({ external_id: 'hist', title: `n${n}` });
    isSent(t, r);
    sent.push(r.body.message_id);
  }
  const h = await w.history(id);
  t.equal(h.body.total, 3);
  t.same(h.body.messages.map((m: { message_id: string }) => m.message_id), [...sent].reverse(), 'newest first');
  t.same(h.body.messages.map((m: { title: string }) => m.title), ['n2', 'n1', 'n0']);
  const page = await w.history(id, 'limit=1&offset=1');
  t.equal(page.status, 200, page.text);
  t.same(page.body.messages.map((m: { message_id: string }) => m.message_id), [sent[1]], 'limit 1 offset 1');

  // 98 more through one batch make 101 records; a limit of 500 gives 100.
  const b = await w.batch({ title: 'many', recipients: Array.from({ length: 98 }, () => ({ user_id: id })) });
  t.equal(b.status, 200, b.text.slice(0, 300));
  t.equal(b.body.summary.sent, 98);
  const big = await w.history(id, 'limit=500');
  t.equal(big.status, 200, big.text.slice(0, 300));
  t.equal(big.body.messages.length, 100, 'limit silently reduced to 100');

  sessionError(t, await w.history(randomUUID()), 404, 'PERSON_NOT_FOUND');
  sessionError(t, await w.history('hist'), 404, 'PERSON_NOT_FOUND');
  const other = await PushWs.create(s);
  sessionError(t, await other.history(id), 404, 'PERSON_NOT_FOUND');
  const withKey = await w.history(id, '', w.keys.all);
  t.equal(withKey.status, 403, 'an API key on the session route');
  t.same(withKey.body, FORBIDDEN);
});

t.test('permissions: push:read cannot send, push:send cannot read, another workspace\'s path is 403', async (t) => {
  const w = await PushWs.create(s);
  const other = await PushWs.create(s);
  await w.personWith('perm', [[pushToken(), 'android']]);
  await other.personWith('perm', [[pushToken(), 'android']]);
  const body = { external_id: 'perm', title: 'x' };
  const forbidden = (r: Res, what: string) => {
    t.equal(r.status, 403, `${what}: ${r.text}`);
    t.same(r.body, FORBIDDEN, what);
  };
  forbidden(await w.send(body, w.keys.read), 'push:read sends');
  forbidden(await w.batch({ title: 'x', recipients: [{ user_id: randomUUID() }] }, w.keys.read), 'push:read sends a batch');
  const sent = await w.send(body);
  isSent(t, sent);
  forbidden(await w.status(sent.body.message_id, w.keys.send), 'push:send reads status');
  forbidden(await other.send(body, w.keys.send), 'send in another workspace\'s path');
  forbidden(await other.batch({ title: 'x', recipients: [{ user_id: randomUUID() }] }, w.keys.send), 'batch in another workspace\'s path');
  forbidden(await other.status(sent.body.message_id, w.keys.all), 'status in another workspace\'s path, even with *');
  t.equal((await w.history(await w.person('perm'))).body.total, 1, 'only the permitted send stored');
});

t.test('policy_suppressed from the single route is stored and readable', async (t) => {
  const w = await PushWs.create(s);
  await w.personWith('capped', [[pushToken(), 'android']]);
  await w.policy({ timezone: comfortableZone().zone, max_pushes_per_day: 1 });
  isSent(t, await w.send({ external_id: 'capped', title: 'x' }));
  await isPolicySuppressed(t, w, await w.send({ external_id: 'capped', title: 'x' }), 'frequency_cap');
});
