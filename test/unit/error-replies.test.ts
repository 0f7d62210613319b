// The one error mapper (src/handlers/reply.ts) and the catalog (src/domain/errors.ts): an
// infrastructure outage is a catalog code like any other, answered 503 with Retry-After in
// every route shape, its cause never shown.
import t from 'tap';
import { DomainError, Unavailable } from '../../src/domain/errors.js';
import { errorReply, toReply } from '../../src/handlers/reply.js';
import { LogUnavailable } from '../../src/eventlog/event-log.js';

const SHAPES = ['key', 'session', 'flat', 'source'] as const;

t.test('SERVICE_UNAVAILABLE carries Retry-After: 1 in every shape, however it is raised', async (t) => {
  for (const shape of SHAPES) {
    for (const reply of [
      errorReply(shape, 'SERVICE_UNAVAILABLE', 'down'),
      toReply(shape, new DomainError('SERVICE_UNAVAILABLE', 'queue full')),
      toReply(shape, new Unavailable('down', new Error('connect ECONNREFUSED 10.0.0.7:4222'))),
    ]) {
      t.equal(reply.status, 503, shape);
      t.same(reply.headers, { 'Retry-After': '1' }, `${shape}: Retry-After`);
    }
  }
});

t.test('an outage answers its public message in the route shape; the cause stays out of the body', async (t) => {
  const err = new LogUnavailable(new Error('connect ECONNREFUSED 10.0.0.7:4222'));
  t.ok(err instanceof DomainError, 'a catalog error');
  t.same(JSON.parse(toReply('key', err).body!), { success: false, error: err.message, code: 'SERVICE_UNAVAILABLE' });
  t.same(JSON.parse(toReply('flat', err).body!), { error: 'The event log is unavailable; nothing was recorded. Retry shortly.' });
  t.same(JSON.parse(toReply('session', err).body!), { success: false, error: { code: 'SERVICE_UNAVAILABLE', message: err.message, details: {} } });
  t.notMatch(toReply('key', err).body!, /ECONNREFUSED/);
});

t.test('other codes carry no headers of their own; each reply gets its own copy', async (t) => {
  t.equal(errorReply('key', 'NOT_FOUND', 'no').headers, undefined);
  const a = errorReply('key', 'SERVICE_UNAVAILABLE', 'down');
  a.headers!['X-Extra'] = '1';
  t.same(errorReply('key', 'SERVICE_UNAVAILABLE', 'down').headers, { 'Retry-After': '1' });
});
