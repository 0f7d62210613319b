// A JetStream backlog larger than one sink fetch (eventlog/jetstream.ts SINK_FETCH_BYTES): the
// sinks size each fetch by the messages they just took, so a backlog of large messages is
// worked off in bounded pieces, and every event of it must be stored, and counted, once.
// Messages of ~600 KB are published straight on the server's subject, as actors publish a busy
// tick's appends.
import t from 'tap';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { startServer, storeUrl, eventually, uniqueUser, workspaceWithKeys } from '../helpers/server.js';
import { NO_LIMITS } from '../helpers/assert.js';
import { SINK_FETCH_BYTES } from '../../src/eventlog/jetstream.js';

t.setTimeout(240_000);

if (!process.env.NATS_URL) {
  t.pass('needs NATS_URL (the store Log has no sink)');
} else {
  const srv = await startServer(NO_LIMITS);
  t.teardown(() => srv.stop());
  const sql = new pg.Client({ connectionString: storeUrl(srv) });
  await sql.connect();
  t.teardown(() => sql.end());

  t.test('a backlog of several fetches is stored whole', async (t) => {
    const k = await workspaceWithKeys(srv, { write: ['events:write'] }, 'Sink backlog');
    const user = uniqueUser('backlog');
    const first = await srv.req('POST', '/track', { token: k.write, body: { event: 'first', external_id: user } });
    t.equal(first.status, 201, 'the person exists');
    const person = first.body.data.person_id as string;

    const record = () => ({ id: randomUUID(), workspace_id: k.ws.id, person_id: person, external_id: user, type: 'backlog', parameters: { pad: 'x'.repeat(40) }, created_at: new Date().toISOString() });
    const perMessage = 2_000;
    const messages = Array.from({ length: 14 }, () => JSON.stringify(Array.from({ length: perMessage }, record)));
    const bytes = messages.reduce((n, m) => n + m.length, 0);
    t.ok(bytes > 1.5 * SINK_FETCH_BYTES, `the backlog (${(bytes / 2 ** 20).toFixed(1)} MB) needs more than one fetch of ${SINK_FETCH_BYTES / 2 ** 20} MB`);

    const nc = await connect({ servers: process.env.NATS_URL });
    t.teardown(() => nc.close());
    const js = jetstream(nc);
    await Promise.all(messages.map((m) => js.publish(`${srv.natsPrefix}.events`, m)));

    const want = messages.length * perMessage;
    const stored = await eventually(async () => {
      const n = Number((await sql.query(`SELECT count(*) AS n FROM events WHERE workspace_id = $1 AND type = 'backlog'`, [k.ws.id])).rows[0].n);
      return n >= want ? n : undefined;
    }, 90_000);
    t.equal(stored, want, `every event of the backlog is stored (${want})`);
    const counted = (await sql.query(`SELECT count FROM person_event_counts WHERE person_id = $1 AND type = 'backlog'`, [person])).rows[0]?.count;
    t.equal(Number(counted), want, 'and counted once');
  });
}
