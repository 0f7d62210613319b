// Batch push sends through the real HTTP server (docs/channels.md; README, Routes): results in
// request order, the summary, per-recipient variables, the device_token and platform selectors,
// the send policy per recipient, per-recipient failures inside a 200, and whole-request refusals.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { ISO_MS, UUID, badRequest, keyError } from '../helpers/assert.js';
import { PushWs, comfortableZone, fcmSends, invalidField, isPolicySuppressed, isSent, isSkipped, pushToken, startPushServer } from '../helpers/push.js';

const { s, fakes } = await startPushServer(t);

type Result = Record<string, unknown> & { user_id: string; status: string; message_id: string };
const masked = (token: string) => `${token.slice(0, 4)}***${token.slice(-4)}`;

/** The message's deliveries, as masked tokens. */
async function deliveredTo(w: PushWs, messageId: string): Promise<string[]> {
  const r = await w.status(messageId);
  return r.body.message.deliveries.map((d: { device_token: string }) => d.device_token).sort();
}

t.test('results in request order, per-recipient failures inside a 200, the summary', async (t) => {
  const w = await PushWs.create(s);
  const a = await w.personWith('a', [[pushToken(), 'android']]);
  const b = await w.personWith('b', [[pushToken(), 'android']]);
  await w.consent(b, 'unsubscribed');
  const c = await w.personWith('c', [[pushToken('fail-'), 'ios']]);
  const d = await w.person('d');
  const unknown = randomUUID();
  const recipients = [a, 'not-a-uuid', b, unknown, c, d, a].map((user_id) => ({ user_id }));

  const r = await w.batch({ title: 'Batch', body: 'x', recipients });
  t.equal(r.status, 200, r.text.slice(0, 500));
  t.equal(r.body.success, true);
  const results = r.body.results as Result[];
  t.same(results.map((x) => x.user_id), recipients.map((x) => x.user_id), 'one result per recipient, in request order');
  t.same(results.map((x) => x.status), ['sent', 'failed', 'skipped', 'failed', 'failed', 'skipped', 'sent']);

  isSent(t, results[0]!);
  isSent(t, results[6]!);
  t.not(results[0]!.message_id, results[6]!.message_id, 'one record per recipient entry');
  for (const i of [1, 3, 4]) t.type(results[i]!.error, 'string', `failed result ${i} says why`);
  await isSkipped(t, w, results[2]!, 'person_unsubscribed');
  await isSkipped(t, w, results[5]!, 'no_active_device_tokens');
  // The recipient whose only device refused is stored as failed.
  t.match(results[4]!.message_id, UUID);
  t.equal((await w.status(results[4]!.message_id)).body.message.status, 'failed');

  const sum = r.body.summary;
  t.same(Object.keys(sum).sort(), ['failed', 'policy_suppressed', 'processed', 'sent', 'skipped', 'total']);
  t.same({ ...sum, processed: undefined }, { total: 7, sent: 2, failed: 3, skipped: 2, policy_suppressed: 0, processed: undefined });
  t.match(sum.processed, ISO_MS, 'processed is a timestamp');
  t.equal((await w.history(a)).body.total, 2);
});

t.test('variables: recipient values win over top-level; person and traits per recipient', async (t) => {
  const w = await PushWs.create(s);
  const ann = await w.personWith('ann', [[pushToken(), 'android']], { plan: 'pro' });
  const bob = await w.personWith('bob', [[pushToken(), 'android']], { plan: 'free' });
  const r = await w.batch({
    title: 'Hi {{ name }}',
    body: '{{ traits.plan }} {{ shared }}',
    variables: { name: 'everyone', shared: 'S' },
    recipients: [{ user_id: ann, variables: { name: 'Ann' } }, { user_id: bob }],
  });
  t.equal(r.status, 200, r.text);
  const [ra, rb] = r.body.results as Result[];
  const ma = (await w.status(ra!.message_id)).body.message;
  const mb = (await w.status(rb!.message_id)).body.message;
  t.equal(ma.title, 'Hi Ann', 'recipient variable wins');
  t.equal(ma.body, 'pro S', 'top-level variable still there, traits of the recipient');
  t.equal(mb.title, 'Hi everyone');
  t.equal(mb.body, 'free S');
});

t.test('a recipient whose template cannot be rendered (a limit reached) fails alone; a single send is a 400', async (t) => {
  const w = await PushWs.create(s);
  const small = await w.personWith('small', [[pushToken(), 'android']]);
  const huge = await w.personWith('huge', [[pushToken(), 'android']]);
  const title = '{% for i in (1..n) %}xxxxxxxxxx{% endfor %}';
  const r = await w.batch({ title, variables: { n: 2 }, recipients: [{ user_id: small }, { user_id: huge, variables: { n: 100_000_000 } }] });
  t.equal(r.status, 200, r.text.slice(0, 300));
  t.same(r.body.results.map((x: Result) => x.status), ['sent', 'failed']);
  t.type(r.body.results[1].error, 'string', 'the failed recipient says why');
  t.equal((await w.status(r.body.results[0].message_id)).body.message.title, 'x'.repeat(20));
  const before = (await w.history(huge)).body.total;
  invalidField(t, await w.send({ external_id: 'huge', title, variables: { n: 100_000_000 } }), 'title');
  t.equal((await w.history(huge)).body.total, before, 'the single send stored nothing');
});

t.test('device_token selector: only that device; a token not among the active devices is skipped', async (t) => {
  const w = await PushWs.create(s);
  const t1 = pushToken('one-');
  const t2 = pushToken('two-');
  const t3 = pushToken('three-');
  const mine = await w.personWith('sel', [[t1, 'android'], [t2, 'ios'], [t3, 'web']]);
  await w.unregister('sel', t3);
  const theirs = pushToken('theirs-');
  await w.personWith('other', [[theirs, 'android']]);

  const r = await w.batch({
    title: 'x',
    recipients: [
      { user_id: mine, device_token: t2 },
      { user_id: mine, device_token: pushToken('never-') },
      { user_id: mine, device_token: t3 },
      { user_id: mine, device_token: theirs },
      { user_id: mine },
    ],
  });
  t.equal(r.status, 200, r.text);
  const res = r.body.results as Result[];
  isSent(t, res[0]!);
  t.same(await deliveredTo(w, res[0]!.message_id), [masked(t2)], 'sent to the selected device only');
  await isSkipped(t, w, res[1]!, 'requested_device_not_active');
  await isSkipped(t, w, res[2]!, 'requested_device_not_active');
  await isSkipped(t, w, res[3]!, 'requested_device_not_active');
  isSent(t, res[4]!);
  t.same(await deliveredTo(w, res[4]!.message_id), [masked(t1), masked(t2)].sort(), 'no selector: every active device');
  t.same({ ...r.body.summary, processed: 0 }, { total: 5, sent: 2, failed: 0, skipped: 3, policy_suppressed: 0, processed: 0 });

  // A selected token that is suppressed.
  t.equal((await w.suppress(t1, 'android')).status, 201);
  const again = await w.batch({ title: 'x', recipients: [{ user_id: mine, device_token: t1 }] });
  await isSkipped(t, w, again.body.results[0], 'device_token_suppressed');
});

t.test('platform selector: only that platform\'s devices', async (t) => {
  const w = await PushWs.create(s);
  const a = pushToken('and-');
  const i = pushToken('ios-');
  const p = await w.personWith('plat', [[a, 'android'], [i, 'ios']]);
  const r = await w.batch({ title: 'x', recipients: [{ user_id: p, platform: 'ios' }, { user_id: p, platform: 'android' }, { user_id: p, platform: 'web' }] });
  t.equal(r.status, 200, r.text);
  const res = r.body.results as Result[];
  isSent(t, res[0]!);
  t.same(await deliveredTo(w, res[0]!.message_id), [masked(i)]);
  isSent(t, res[1]!);
  t.same(await deliveredTo(w, res[1]!.message_id), [masked(a)]);
  await isSkipped(t, w, res[2]!, 'no_active_device_tokens');
  badRequest(t, await w.batch({ title: 'x', recipients: [{ user_id: p, platform: 'windows' }] }), 'recipients.0.platform');
});

t.test('the send policy applies per recipient, counting sends earlier in the same batch', async (t) => {
  const w = await PushWs.create(s);
  const p1 = await w.personWith('p1', [[pushToken(), 'android']]);
  const p2 = await w.personWith('p2', [[pushToken(), 'android']]);
  await w.policy({ timezone: comfortableZone().zone, max_pushes_per_day: 1 });
  isSent(t, await w.send({ external_id: 'p1', title: 'earlier' }));
  const r = await w.batch({ title: 'x', recipients: [{ user_id: p1 }, { user_id: p2 }, { user_id: p2 }] });
  t.equal(r.status, 200, r.text);
  const res = r.body.results as Result[];
  await isPolicySuppressed(t, w, res[0]!, 'frequency_cap');
  isSent(t, res[1]!);
  await isPolicySuppressed(t, w, res[2]!, 'frequency_cap');
  t.same({ ...r.body.summary, processed: 0 }, { total: 3, sent: 1, failed: 0, skipped: 0, policy_suppressed: 2, processed: 0 });
});

t.test('a dead token in a batch: that recipient failed, its device invalidated; the others sent', async (t) => {
  const w = await PushWs.create(s);
  const dead = pushToken('unregistered-');
  const gone = await w.personWith('gone', [[dead, 'android']]);
  const fine = await w.personWith('fine', [[pushToken(), 'android']]);
  const r = await w.batch({ title: 'x', recipients: [{ user_id: gone }, { user_id: fine }] });
  t.equal(r.status, 200, r.text);
  t.same(r.body.results.map((x: Result) => x.status), ['failed', 'sent']);
  t.type(r.body.results[0].error, 'string');
  const d = (await w.devices('gone')).get(dead)!;
  t.same([d.is_valid, d.is_active], [false, false], 'device invalidated');
  const next = await w.batch({ title: 'x', recipients: [{ user_id: gone }] });
  await isSkipped(t, w, next.body.results[0], 'no_active_device_tokens');
});

t.test('1,000 recipients are accepted; 1,001 is 400 BATCH_TOO_LARGE before anything is sent', async (t) => {
  const w = await PushWs.create(s);
  await w.useFakes(fakes);
  const token = pushToken();
  const p = await w.personWith('big', [[token, 'android']]);

  const tooMany = await w.batch({ title: 'x', recipients: Array.from({ length: 1001 }, () => ({ user_id: p })) });
  keyError(t, tooMany, 400, 'BATCH_TOO_LARGE');
  t.equal(fcmSends(fakes, token).length, 0, 'nothing sent');
  t.equal((await w.history(p)).body.total, 0, 'nothing stored');

  // Unknown people fail one by one, cheaply: the limit itself is what is checked here.
  const ok = await w.batch({ title: 'x', recipients: Array.from({ length: 1000 }, () => ({ user_id: randomUUID() })) });
  t.equal(ok.status, 200, ok.text.slice(0, 300));
  t.equal(ok.body.results.length, 1000);
  t.same({ ...ok.body.summary, processed: 0 }, { total: 1000, sent: 0, failed: 1000, skipped: 0, policy_suppressed: 0, processed: 0 });
});

t.test('whole-request refusals: 400, nothing sent, nothing stored', async (t) => {
  const w = await PushWs.create(s);
  await w.useFakes(fakes);
  const token = pushToken();
  const p = await w.personWith('refused', [[token, 'android']]);
  const one = [{ user_id: p }];

  badRequest(t, await w.batch({ title: 'x' }), 'recipients');
  badRequest(t, await w.batch({ title: 'x', recipients: [] }), 'recipients');
  badRequest(t, await w.batch({ title: 'x', recipients: [{}] }), 'recipients.0.user_id');
  badRequest(t, await w.batch({ title: 'x', recipients: [{ user_id: p, variables: 'v' }] }), 'recipients.0.variables');
  badRequest(t, await w.batch({ title: 'x', recipients: one, tags: 'tag' }), 'tags');
  const neither = await w.batch({ recipients: one });
  t.equal(neither.status, 400, `neither title nor body: ${neither.text}`);
  invalidField(t, await w.batch({ title: '{{ oops', recipients: one }), 'title');
  invalidField(t, await w.batch({ title: 'x', body: '{% unknown_tag %}', recipients: one }), 'body');
  invalidField(t, await w.batch({ title: 'x', custom_data: { deep: '{{ }}' }, recipients: one }), 'custom_data.deep');

  t.equal(fcmSends(fakes, token).length, 0, 'nothing sent');
  t.equal((await w.history(p)).body.total, 0, 'nothing stored');
});
