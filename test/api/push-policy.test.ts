// The workspace send policy through HTTP (docs/channels.md; README, Request bodies): quiet hours across
// midnight in a non-UTC zone, the person's own timezone, the daily and rolling caps, the order of
// the checks, and policy_suppressed records. Windows are built from the current local time of the
// zone, with an hour of margin, so every test is deterministic whatever the time of day.
import t from 'tap';
import { PushWs, comfortableZone, hhmm, isPolicySuppressed, isProviderError, isSent, isSkipped, localMinutes, pushToken, startPushServer } from '../helpers/push.js';

const { s } = await startPushServer(t);

/** A quiet-hours window that wraps midnight (start > end) and contains the zone's current time. */
function wrappingAroundNow(now: number): { start: string; end: string } {
  return { start: hhmm(now - 60), end: '00:30' };
}

/** A policy whose quiet hours hold now, in a comfortable zone. */
function quietNow(): Record<string, unknown> {
  const { zone, now } = comfortableZone();
  return { timezone: zone, quiet_hours: wrappingAroundNow(now) };
}

t.test('quiet hours across midnight in a non-UTC zone: a window holding now suppresses, one leaving it out sends', async (t) => {
  const w = await PushWs.create(s);
  const id = await w.personWith('night', [[pushToken(), 'android']]);
  const { zone, now } = comfortableZone();

  const holding = wrappingAroundNow(now);
  t.ok(holding.start > holding.end, `the window wraps midnight: ${holding.start}-${holding.end} in ${zone}`);
  await w.policy({ timezone: zone, quiet_hours: holding });
  const r = await w.send({ external_id: 'night', title: 'Shh' });
  await isPolicySuppressed(t, w, r, 'quiet_hours');
  const st = (await w.status(r.body.message_id)).body.message;
  t.equal(st.title, 'Shh', 'the suppressed record keeps its content');
  t.equal(st.external_id, 'night');

  // Excludes only the two hours around now in the zone; UTC's now (5.5 or more hours away) is inside it.
  const leaving = { start: hhmm(now + 60), end: hhmm(now - 60) };
  t.ok(leaving.start > leaving.end, `the window wraps midnight: ${leaving.start}-${leaving.end} in ${zone}`);
  await w.policy({ timezone: zone, quiet_hours: leaving });
  isSent(t, await w.send({ external_id: 'night', title: 'Hello' }));

  const h = await w.history(id);
  t.same(h.body.messages.map((m: { status: string }) => m.status), ['sent', 'policy_suppressed'], 'both stored, newest first');
});

t.test("the person's own timezone wins over the policy's; an invalid one falls back to the policy's", async (t) => {
  const w = await PushWs.create(s);
  const policyZone = 'Asia/Kolkata';
  const personZone = 'America/New_York'; // 9.5 to 10.5 hours behind Kolkata
  const local = localMinutes(personZone);
  await w.policy({ timezone: policyZone, quiet_hours: { start: hhmm(local - 60), end: hhmm(local + 60) } });

  await w.personWith('ny', [[pushToken(), 'android']], { timezone: personZone });
  await w.personWith('plain', [[pushToken(), 'android']]);
  await w.personWith('bogus', [[pushToken(), 'android']], { timezone: 'Mars/Olympus_Mons' });
  await isPolicySuppressed(t, w, await w.send({ external_id: 'ny', title: 'x' }), 'quiet_hours');
  isSent(t, await w.send({ external_id: 'plain', title: 'x' }));
  isSent(t, await w.send({ external_id: 'bogus', title: 'x' }));

  // The same through a batch: the policy applies per recipient, each in their own zone.
  const ids = await Promise.all(['ny', 'plain'].map((e) => w.person(e)));
  const b = await w.batch({ title: 'x', recipients: ids.map((user_id) => ({ user_id })) });
  t.equal(b.status, 200, b.text);
  await isPolicySuppressed(t, w, b.body.results[0], 'quiet_hours');
  isSent(t, b.body.results[1]);

  // With no policy zone (UTC) the person's zone still decides.
  await w.policy({ quiet_hours: { start: hhmm(local - 60), end: hhmm(local + 60) } });
  await isPolicySuppressed(t, w, await w.send({ external_id: 'ny', title: 'x' }), 'quiet_hours');
  isSent(t, await w.send({ external_id: 'plain', title: 'x' }));
});

t.test('daily cap: N sent, then frequency_cap, per person', async (t) => {
  const w = await PushWs.create(s);
  const { zone } = comfortableZone();
  await w.policy({ timezone: zone, max_pushes_per_day: 2 });
  await w.personWith('daily', [[pushToken(), 'android'], [pushToken(), 'ios']]);
  await w.personWith('fresh', [[pushToken(), 'android']]);
  isSent(t, await w.send({ external_id: 'daily', title: '1' }));
  isSent(t, await w.send({ external_id: 'daily', title: '2' }));
  await isPolicySuppressed(t, w, await w.send({ external_id: 'daily', title: '3' }), 'frequency_cap');
  await isPolicySuppressed(t, w, await w.send({ external_id: 'daily', title: '4' }), 'frequency_cap');
  isSent(t, await w.send({ external_id: 'fresh', title: '1' }));

  // Lifting the cap applies to the next send.
  await w.policy({ timezone: zone, max_pushes_per_day: 0 });
  isSent(t, await w.send({ external_id: 'daily', title: '5' }));
});

t.test('concurrent sends to one person cannot both take the last slot', async (t) => {
  const w = await PushWs.create(s);
  await w.policy({ timezone: comfortableZone().zone, max_pushes_per_day: 2 });
  const id = await w.personWith('rush', [[pushToken(), 'android']]);
  const rs = await Promise.all(Array.from({ length: 8 }, (_, n) => w.send({ external_id: 'rush', title: `n${n}` })));
  for (const r of rs) t.equal(r.status, 200, r.text);
  const statuses = rs.map((r) => `${r.body.status}:${r.body.skip_reason ?? ''}`).sort();
  t.same(statuses, ['policy_suppressed:frequency_cap', 'policy_suppressed:frequency_cap', 'policy_suppressed:frequency_cap', 'policy_suppressed:frequency_cap', 'policy_suppressed:frequency_cap', 'policy_suppressed:frequency_cap', 'sent:', 'sent:']);
  const b = await w.batch({ title: 'x', recipients: [{ user_id: id }] });
  t.equal(b.body.results[0].status, 'policy_suppressed', 'the batch route shares the counter');
});

t.test('caps count sent pushes only: failed, skipped and suppressed sends do not use the allowance', async (t) => {
  const w = await PushWs.create(s);
  await w.policy({ timezone: comfortableZone().zone, max_pushes_per_day: 1 });

  const id = await w.personWith('flaky', [[pushToken('fail-'), 'android']]);
  isProviderError(t, await w.send({ external_id: 'flaky', title: 'x' }));
  await w.consent(id, 'unsubscribed');
  await isSkipped(t, w, await w.send({ external_id: 'flaky', title: 'x' }), 'person_unsubscribed');
  await w.consent(id, 'active');
  await w.device('flaky', pushToken(), 'ios');
  isSent(t, await w.send({ external_id: 'flaky', title: 'x' }));
  await isPolicySuppressed(t, w, await w.send({ external_id: 'flaky', title: 'x' }), 'frequency_cap');
});

t.test('rolling cap: N in the window, then rolling_cap; the daily cap is checked first', async (t) => {
  const w = await PushWs.create(s);
  await w.personWith('roll', [[pushToken(), 'android']]);
  await w.policy({ max_pushes_per_window: 2, window_hours: 1 });
  isSent(t, await w.send({ external_id: 'roll', title: '1' }));
  isSent(t, await w.send({ external_id: 'roll', title: '2' }));
  await isPolicySuppressed(t, w, await w.send({ external_id: 'roll', title: '3' }), 'rolling_cap');

  // Both caps reached: the daily one is reported.
  await w.policy({ timezone: comfortableZone().zone, max_pushes_per_day: 2, max_pushes_per_window: 2, window_hours: 1 });
  await isPolicySuppressed(t, w, await w.send({ external_id: 'roll', title: '4' }), 'frequency_cap');
  // Only the rolling one reached.
  await w.policy({ timezone: comfortableZone().zone, max_pushes_per_day: 3, max_pushes_per_window: 2, window_hours: 5 });
  await isPolicySuppressed(t, w, await w.send({ external_id: 'roll', title: '5' }), 'rolling_cap');
});

t.test('order: quiet hours before the caps', async (t) => {
  const w = await PushWs.create(s);
  await w.personWith('capped', [[pushToken(), 'android']]);
  await w.policy({ timezone: comfortableZone().zone, max_pushes_per_day: 1, max_pushes_per_window: 1, window_hours: 1 });
  isSent(t, await w.send({ external_id: 'capped', title: 'x' }));
  await isPolicySuppressed(t, w, await w.send({ external_id: 'capped', title: 'x' }), 'frequency_cap');
  await w.policy({ ...quietNow(), max_pushes_per_day: 1, max_pushes_per_window: 1, window_hours: 1 });
  await isPolicySuppressed(t, w, await w.send({ external_id: 'capped', title: 'x' }), 'quiet_hours');
});

t.test('order: person status, devices and token suppression come before quiet hours (skipped, not stored)', async (t) => {
  const w = await PushWs.create(s);
  await w.policy(quietNow());
  const unsub = await w.personWith('unsub', [[pushToken(), 'android']]);
  await w.consent(unsub, 'unsubscribed');
  await isSkipped(t, w, await w.send({ external_id: 'unsub', title: 'x' }), 'person_unsubscribed');
  const bare = await w.person('bare');
  await isSkipped(t, w, await w.send({ external_id: 'bare', title: 'x' }), 'no_active_device_tokens');
  const token = pushToken();
  const muted = await w.personWith('muted', [[token, 'ios']]);
  t.equal((await w.suppress(token, 'ios')).status, 201);
  await isSkipped(t, w, await w.send({ external_id: 'muted', title: 'x' }), 'device_token_suppressed');
  for (const id of [unsub, bare, muted]) t.equal((await w.history(id)).body.total, 0, 'nothing stored');
  // And a person who passes them all is held by quiet hours.
  await w.personWith('ok', [[pushToken(), 'android']]);
  await isPolicySuppressed(t, w, await w.send({ external_id: 'ok', title: 'x' }), 'quiet_hours');
});
