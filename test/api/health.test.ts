import t from 'tap';
import { sharedServer } from '../helpers/shared-server.js';

const s = await sharedServer();

t.test('GET /healthz answers 200 with version and components, no auth needed', async (t) => {
  const r = await s.req('GET', '/healthz');
  t.equal(r.status, 200);
  t.equal(r.body.status, 'ok');
  t.type(r.body.version, 'string');
  t.equal(r.body.components.store, 'ok');
  t.ok(Number.isInteger(r.body.components.dead_letters) && r.body.components.dead_letters >= 0, `dead_letters counted: ${r.body.components.dead_letters}`);
});
