// Push state across a restart on the same data dir (docs/channels.md): the send-policy counters
// are rebuilt from the stored push records (not reset to zero), the daily cap counts from the
// recipient's local midnight and the rolling cap over its window in absolute time (records
// planted in the store at chosen past times), and a scheduled send survives the restart and is
// sent once. One restart serves every check: the first test sets the state up, stops the server
// and starts it again on the same data dir, then each test looks.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { NO_LIMITS } from '../helpers/assert.js';
import { PushWs, comfortableZone, fcmSends, isPolicySuppressed, isSent, pushToken, startFakes } from '../helpers/push.js';
import { eventually, serversOnOneDir, storeUrl } from '../helpers/server.js';

const fakes = await startFakes(t);
const { first, again } = await serversOnOneDir(t, { ...NO_LIMITS, ...fakes.env }, 'push-restart');
const { zone, now: localNow } = comfortableZone();
const HOUR = 3_600_000;

/** Everything before the restart, then the restart; the workspaces are rebound to the new server. */
async function setUp() {
  // Before the restart.
  const daily = await PushWs.create(first);
  await daily.policy({ timezone: zone, max_pushes_per_day: 2 });
  await daily.personWith('d', [[pushToken(), 'android']]);
  const rolling = await PushWs.create(first);
  await rolling.policy({ timezone: zone, max_pushes_per_window: 2, window_hours: 1 });
  await rolling.personWith('r', [[pushToken(), 'android']]);
  const beforeRestart = [
    await daily.send({ external_id: 'd', title: '1' }),
    await daily.send({ external_id: 'd', title: '2' }),
    await rolling.send({ external_id: 'r', title: '1' }),
    await rolling.send({ external_id: 'r', title: '2' }),
  ];

  // Planted past sends: local midnight in `zone` is `localNow` minutes ago (whole-minute offsets).
  const midnight = Date.now() - localNow * 60_000 - (Date.now() % 60_000);
  const planted = await PushWs.create(first);
  await planted.policy({ timezone: zone, max_pushes_per_day: 1 });
  const window = await PushWs.create(first);
  await window.policy({ timezone: zone, max_pushes_per_window: 1, window_hours: 1 });
  const plants: Array<[PushWs, string, number]> = [
    [planted, 'yesterday', midnight - 30 * 60_000], // within 24 h, but before local midnight
    [planted, 'today', midnight + 30 * 60_000],
    [window, 'old', Date.now() - 2 * HOUR],
    [window, 'recent', Date.now() - HOUR / 2],
  ];
  const sql = new pg.Client({ connectionString: storeUrl(first, fakes.env) });
  await sql.connect();
  for (const [w, externalId, at] of plants) {
    const personId = await w.personWith(externalId, [[pushToken(), 'android']]);
    await sql.query(
      `INSERT INTO messages (id, workspace_id, person_id, external_id, status, provider, title, created_at, sent_at)
       VALUES ($1, $2, $3, $4, 'sent', 'sandbox', 'planted', $5, $5)`,
      [randomUUID(), w.id, personId, externalId, new Date(at)],
    );
  }
  await sql.end();

  // Scheduled sends: one due after the restart, one due while the server is down; one through the fake FCM.
  const scheduled = await PushWs.create(first);
  const laterId = await scheduled.personWith('later', [[pushToken(), 'android']]);
  const soonId = await scheduled.personWith('soon', [[pushToken(), 'ios']]);
  const viaFcm = await PushWs.create(first);
  await viaFcm.useFakes(fakes);
  const fcmToken = pushToken();
  const fcmPerson = await viaFcm.personWith('later', [[fcmToken, 'android']]);
  const in6s = new Date(Date.now() + 6000).toISOString();
  const held = [
    await scheduled.send({ external_id: 'later', title: 'later', scheduled_at: in6s }),
    await scheduled.send({ external_id: 'soon', title: 'soon', scheduled_at: new Date(Date.now() + 3000).toISOString() }),
    await viaFcm.send({ external_id: 'later', title: 'later', scheduled_at: in6s }),
  ];
  await first.stop();

  const s = await again();
  for (const w of [daily, rolling, planted, window, scheduled, viaFcm]) w.s = s;
  return { daily, rolling, planted, window, scheduled, viaFcm, beforeRestart, held, laterId, soonId, fcmPerson, fcmToken };
}

let state: Awaited<ReturnType<typeof setUp>> | undefined;
/** The state set up before the restart (the first test fails when it could not be). */
function st(): NonNullable<typeof state> {
  if (!state) throw new Error('the set-up before the restart failed');
  return state;
}

t.test('set up, then restart on the same data dir: two sends each, three scheduled', async (t) => {
  state = await setUp();
  for (const r of state.beforeRestart) isSent(t, r);
  for (const r of state.held) t.equal(r.status, 202, r.text);
});

t.test('scheduled sends survive the restart and are sent once', async (t) => {
  const { scheduled, viaFcm, laterId, soonId, fcmPerson, fcmToken, held } = st();
  const cases: Array<[PushWs, string, string]> = [[scheduled, laterId, held[0]!.body.message_id], [scheduled, soonId, held[1]!.body.message_id], [viaFcm, fcmPerson, held[2]!.body.message_id]];
  for (const [w, personId, messageId] of cases) {
    const r = await eventually(async () => {
      const r = await w.status(messageId);
      return r.body?.message?.status === 'sent' ? r : undefined;
    }, 30_000);
    t.equal(r?.body.message.status, 'sent', `${messageId} sent after the restart`);
    t.equal(r?.body.message.deliveries.length, 1, 'one delivery');
    const h = await w.history(personId);
    t.equal(h.body.total, 1, 'one record');
  }
  t.equal(fcmSends(fakes, fcmToken).length, 1, 'the fake FCM received the scheduled send exactly once');
});

t.test('the daily and rolling counters are right after the restart', async (t) => {
  const { daily, rolling } = st();
  await isPolicySuppressed(t, daily, await daily.send({ external_id: 'd', title: '3' }), 'frequency_cap');
  await isPolicySuppressed(t, rolling, await rolling.send({ external_id: 'r', title: '3' }), 'rolling_cap');
});

t.test('the daily cap counts from local midnight; the rolling cap over its window', async (t) => {
  const { planted, window } = st();
  isSent(t, await planted.send({ external_id: 'yesterday', title: 'x' }));
  await isPolicySuppressed(t, planted, await planted.send({ external_id: 'today', title: 'x' }), 'frequency_cap');
  isSent(t, await window.send({ external_id: 'old', title: 'x' }));
  await isPolicySuppressed(t, window, await window.send({ external_id: 'recent', title: 'x' }), 'rolling_cap');
});

t.test('still exactly one provider request for the scheduled send', async (t) => {
  t.equal(fcmSends(fakes, st().fcmToken).length, 1);
});
