// The Segment-compatible source's pure parts: how each message type maps to a track or an
// identify (src/domain/segment-source.ts), and the bounded decoding of gzip and deflate bodies
// (src/actors/body-encoding.ts). The HTTP behaviour, with the real client libraries, is
// test/api/segment-source.test.ts.
import t from 'tap';
import { deflateSync, gzipSync } from 'node:zlib';
import { mapMessage } from '../../src/domain/segment-source.js';
import { decodeBody } from '../../src/actors/body-encoding.js';

const env = { receivedAt: Date.parse('2026-01-01T12:00:00.000Z') };

t.test('track, page and screen are tracks; context is kept; anonymousId stands in for userId', async (t) => {
  t.same(mapMessage('track', { userId: 'u', event: 'bought', properties: { n: 1 }, messageId: 'm1' }, env), {
    kind: 'track',
    body: { event: 'bought', userId: 'u', parameters: { n: 1 }, timestamp: '2026-01-01T12:00:00.000Z', messageId: 'm1', message_id: undefined, messageID: undefined },
  });
  const page = mapMessage('page', { anonymousId: 'a', name: 'Home', category: 'Web', properties: { path: '/' }, context: { ip: '1' } }, { ...env, context: { library: 'x', ip: '0' } });
  t.match(page, { kind: 'track', body: { event: 'page_viewed', userId: 'a', parameters: { path: '/', name: 'Home', category: 'Web', context: { library: 'x', ip: '1' } } } }, "the message's context wins over the batch's");
  t.match(mapMessage('screen', { userId: 'u', name: 'S' }, env), { body: { event: 'screen_viewed', parameters: { name: 'S' } } });
  t.throws(() => mapMessage('track', { event: 'x' }, env), { code: 'VALIDATION_ERROR', message: /userId or an anonymousId/ }, 'no userId and no anonymousId');
});

t.test('identify, group and alias are identifies', async (t) => {
  t.match(mapMessage('identify', { userId: 'u', anonymousId: 'a', traits: { firstName: 'Ada', lastName: 'L', plan: 'pro' } }, env), {
    kind: 'identify',
    body: { userId: 'u', anonymousId: 'a', traits: { first_name: 'Ada', last_name: 'L', plan: 'pro' } },
  });
  const kept = mapMessage('identify', { userId: 'u', traits: { firstName: 'Ada', first_name: 'Grace' } }, env);
  t.match(kept, { body: { traits: { firstName: 'Ada', first_name: 'Grace' } } }, 'an explicit first_name is not overwritten');
  t.notOk('anonymousId' in (mapMessage('identify', { anonymousId: 'a' }, env).body as object), 'identify with only an anonymousId is about that id');
  t.match(mapMessage('group', { userId: 'u', groupId: 'g', traits: { n: 2 } }, env), { kind: 'identify', body: { userId: 'u', traits: { group_id: 'g', group: { n: 2 } } } });
  t.match(mapMessage('alias', { userId: 'u', previousId: 'p' }, env), { kind: 'identify', body: { userId: 'u', anonymousId: 'p' } });
  t.notOk('anonymousId' in (mapMessage('alias', { userId: 'u', previousId: 'u' }, env).body as object), 'alias to itself merges nothing');
});

t.test('the event time: timestamp, else originalTimestamp corrected by sentAt, else receipt', async (t) => {
  const time = (m: Record<string, string>, e = env) => (mapMessage('track', { userId: 'u', event: 'e', ...m }, e).body as { timestamp: string }).timestamp;
  t.equal(time({ timestamp: '2025-05-05T05:05:05Z', originalTimestamp: '2000-01-01T00:00:00Z' }), '2025-05-05T05:05:05.000Z');
  t.equal(time({ originalTimestamp: '2020-01-01T00:00:00Z', sentAt: '2020-01-01T00:00:10Z' }), '2026-01-01T11:59:50.000Z', 'ten seconds before receipt');
  t.equal(time({ originalTimestamp: '2020-01-01T00:00:00Z' }, { ...env, sentAt: '2020-01-01T01:00:00Z' } as typeof env), '2026-01-01T11:00:00.000Z', "the batch's sentAt");
  t.equal(time({ originalTimestamp: '2020-01-01T00:00:00Z' }), '2020-01-01T00:00:00.000Z', 'without sentAt: as sent');
  t.equal(time({ originalTimestamp: '2020-01-01T00:00:00Z', sentAt: '2100-01-01T00:00:00Z' }), '2020-01-01T00:00:00.000Z', 'a correction before 1970 keeps the client time');
  t.equal(time({}), '2026-01-01T12:00:00.000Z');
  t.throws(() => time({ originalTimestamp: 'yesterday' }), { code: 'VALIDATION_ERROR' });
});

t.test('decodeBody: gzip and deflate, bounded; other codings refused', async (t) => {
  const json = Buffer.from(JSON.stringify({ batch: [] }));
  const ok = (r: ReturnType<typeof decodeBody>) => (r.ok ? Buffer.from(r.body).toString() : `refused: ${r.why}`);
  t.equal(ok(decodeBody(json, undefined, 100)), '{"batch":[]}');
  t.equal(ok(decodeBody(gzipSync(json), ['gzip'], 100)), '{"batch":[]}');
  t.equal(ok(decodeBody(deflateSync(json), ['Deflate'], 100)), '{"batch":[]}');
  t.equal(ok(decodeBody(gzipSync(gzipSync(json)), ['gzip, gzip'], 100)), '{"batch":[]}', 'codings applied in order are undone in reverse');
  t.equal(ok(decodeBody(json, ['identity'], 100)), '{"batch":[]}');
  t.equal(ok(decodeBody(gzipSync(Buffer.alloc(1_000_000)), ['gzip'], 500 * 1024)), 'refused: too-large', 'a small body inflating past the limit');
  t.equal(ok(decodeBody(json, ['gzip'], 100)), 'refused: malformed');
  t.equal(ok(decodeBody(json, ['br'], 100)), 'refused: unsupported');
});
