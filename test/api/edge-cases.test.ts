// Input at the edges, from a black-box probe: every value that reaches a store or sink must be
// storable there, and no input may reach a 5xx. Each test names the defect it pins down:
//   1. timestamps outside what PostgreSQL timestamptz and ClickHouse DateTime both hold;
//   2. 500s on invalid input (timestamps, huge integers, U+0000 in query strings) and a people
//      batch that answered 500 after writing some entries;
//   3. deep JSON (workspace settings, track parameters);
//   4. a key created through an upper-case workspace id.
// The README's "Request bodies" section documents every bound tested here.
import t, { type Test } from 'tap';
import { newKey, eventually, newWorkspace, uniqueUser, workspaceWithKeys, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { ISO_MS, UUID, badRequest } from '../helpers/assert.js';

const s = await sharedServer();

const enc = encodeURIComponent;
const setup = () => workspaceWithKeys(s, { all: ['*'] }, 'Edges');

/** The session-route error body (README, Errors) with VALIDATION_ERROR naming `field`. */
function sessionInvalid(t: Test, r: Res, field?: string): void {
  t.equal(r.status, 400, `status 400: ${r.text.slice(0, 300)}`);
  t.equal(r.body?.success, false);
  t.equal(r.body?.error?.code, 'VALIDATION_ERROR');
  t.type(r.body?.error?.message, 'string');
  if (field) t.ok((r.body?.error?.details ?? []).some((d: { field: string }) => d.field === field), `details name ${field}: ${JSON.stringify(r.body?.error?.details)}`);
}

/** JSON text nesting `levels` objects: {"a":{"a":…1…}}. */
const deepObjectText = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
/** `levels` nested objects as a value: level 1 is the object itself. */
function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

// Outside 1970-01-01T00:00:00Z .. 2106-02-07T06:28:15.999Z once the offset is applied.
const OUT_OF_RANGE = [
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59-01:00', // year 10000 in UTC
  '0001-01-01T00:00:00+01:00', // year 0 in UTC
  '1969-12-31T23:59:59.999Z',
  '1970-01-01T00:59:59+01:00',
  '2106-02-07T06:28:16Z',
  '2106-02-07T05:28:16-01:00',
];
// Inside, to the millisecond, with and without offsets.
const EDGES_IN_RANGE: [string, string][] = [
  ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
  ['1969-12-31T23:00:00-01:00', '1970-01-01T00:00:00.000Z'],
  ['2106-02-07T06:28:15.999Z', '2106-02-07T06:28:15.999Z'],
  ['2106-02-07T07:28:15+01:00', '2106-02-07T06:28:15.000Z'],
];

t.test('defect 1: track with a timestamp outside 1970..2106 is 400, in a batch that entry alone; the sink keeps working', async (t) => {
  const k = await setup();
  const user = uniqueUser('range');
  for (const timestamp of OUT_OF_RANGE) badRequest(t, await s.req('POST', '/track', { token: k.all, body: { event: 'x', external_id: user, timestamp } }), 'timestamp');
  t.equal((await s.req('GET', `/people/${enc(user)}`, { token: k.all })).status, 404, 'no person created by refused tracks');

  const batch = await s.req('POST', '/track/batch', {
    token: k.all,
    body: { events: [{ event: 'ok', external_id: user }, ...OUT_OF_RANGE.map((timestamp) => ({ event: 'x', external_id: user, timestamp }))] },
  });
  t.equal(batch.status, 207, batch.text.slice(0, 300));
  t.same(batch.body.errors.map((e: { index: number }) => e.index), OUT_OF_RANGE.map((_, i) => i + 1), 'every out-of-range entry failed');
  t.equal(batch.body.processed, 1);

  // The edges themselves are stored and read back exactly; the sink is not stuck.
  const sent: { id: string; want: string }[] = [];
  for (const [timestamp, want] of EDGES_IN_RANGE) {
    const r = await s.req('POST', '/track', { token: k.all, body: { event: 'edge', external_id: user, timestamp } });
    t.equal(r.status, 201, r.text.slice(0, 300));
    t.equal(r.body.data.timestamp, want, `echoed ${want}`);
    sent.push({ id: r.body.data.event_id, want });
  }
  let events: { id: string; created_at: string }[] = [];
  await eventually(async () => {
    const r = await s.req('GET', `/people/${enc(user)}/events?limit=50`, { token: k.all });
    events = r.status === 200 ? r.body.events : [];
    return sent.every((e) => events.some((x) => x.id === e.id));
  }, 20_000);
  for (const e of sent) t.equal(events.find((x) => x.id === e.id)?.created_at, e.want, `read back ${e.want}`);
});

t.test('defect 1: a timestamp names a real instant: leap seconds, impossible dates and offsets are 400', async (t) => {
  const k = await setup();
  const user = uniqueUser('real');
  for (const timestamp of ['2016-12-31T23:59:60Z', '2021-02-29T00:00:00Z', '2020-04-31T00:00:00Z', '2020-01-01T24:00:00Z', '2020-01-01T00:00:00+24:00', '2020-01-01T00:00:00', '2020-01-01', '1e12', '']) {
    badRequest(t, await s.req('POST', '/track', { token: k.all, body: { event: 'x', external_id: user, timestamp } }), 'timestamp');
  }
  const leap = await s.req('POST', '/track', { token: k.all, body: { event: 'x', external_id: user, timestamp: '2020-02-29t12:00:00.5z' } });
  t.equal(leap.status, 201, 'a leap day, lower-case t and z');
  t.equal(leap.body.data.timestamp, '2020-02-29T12:00:00.500Z');
});

t.test('defect 2: out-of-range timestamps on identify, people upsert, people batch, events/search since, key expires_at are 400, not 500', async (t) => {
  const k = await setup();
  for (const [i, timestamp] of OUT_OF_RANGE.entries()) {
    const user = uniqueUser(`id-${i}`);
    badRequest(t, await s.req('POST', '/identify', { token: k.all, body: { userId: user, timestamp } }), 'timestamp');
    badRequest(t, await s.req('POST', '/people/upsert', { token: k.all, body: { userId: user, timestamp } }), 'timestamp');
    badRequest(t, await s.req('POST', '/people', { token: k.all, body: { userId: user, timestamp } }), 'timestamp');
    t.equal((await s.req('GET', `/people/${enc(user)}`, { token: k.all })).status, 404, 'nothing written');
  }
  for (const since of ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59-01:00', '2016-12-31T23:59:60Z']) {
    badRequest(t, await s.req('GET', `/events/search?event=x&since=${enc(since)}`, { token: k.all }), 'since');
  }
  const fine = await s.req('GET', `/events/search?event=x&since=${enc('1970-01-01T00:00:00Z')}`, { token: k.all });
  t.equal(fine.status, 200, fine.text.slice(0, 300));

  const keys = `/workspaces/${k.ws.id}/api-keys`;
  for (const expires_at of ['9999-12-31T23:59:59-23:59', '2106-02-07T06:28:16Z', '2030-01-01T00:00:60Z']) {
    sessionInvalid(t, await s.req('POST', keys, { token: k.ws.token, body: { name: 'far', permissions: ['people:read'], expires_at } }), 'expires_at');
  }
  const key = await newKey(s, k.ws, { permissions: ['people:read'] });
  sessionInvalid(t, await s.req('PUT', `${keys}/${key.id}`, { token: k.ws.token, body: { expires_at: '9999-12-31T23:59:59-23:59' } }), 'expires_at');
  const far = await s.req('POST', keys, { token: k.ws.token, body: { name: 'far', permissions: ['people:read'], expires_at: '2106-02-07T06:28:15Z' } });
  t.equal(far.status, 201, 'the last accepted instant');
});

t.test('defect 2: people batch checks every entry before writing any; a bad entry fails alone, no 500', async (t) => {
  const k = await setup();
  const [a, b, c] = [uniqueUser('ba'), uniqueUser('bb'), uniqueUser('bc')];
  const r = await s.req('POST', '/people/batch', {
    token: k.all,
    body: {
      identify: [
        { userId: a, traits: { plan: 'pro' } },
        { userId: b, timestamp: '0000-01-01T00:00:00Z' },
        { userId: c, timestamp: '2024-01-01T00:00:00Z' },
        { userId: uniqueUser('bd'), timestamp: '9999-12-31T23:59:59-01:00' },
        { userId: uniqueUser('be'), traits: { 'bad key': 1 } },
        'not an object',
      ],
    },
  });
  t.equal(r.status, 200, r.text.slice(0, 500));
  t.same(r.body.results.map((x: { success: boolean }) => x.success), [true, false, true, false, false, false]);
  t.same(r.body.results.map((x: { index: number }) => x.index), [0, 1, 2, 3, 4, 5]);
  t.equal((await s.req('GET', `/people/${enc(a)}`, { token: k.all })).status, 200, 'a valid entry is written');
  t.equal((await s.req('GET', `/people/${enc(b)}`, { token: k.all })).status, 404, 'the refused entry is not');
  t.equal((await s.req('GET', `/people/${enc(c)}`, { token: k.all })).status, 200);
});

t.test('defect 2: huge offset and limit on every list route are 400, not 500', async (t) => {
  const k = await setup();
  const person = (await s.req('POST', '/identify', { token: k.all, body: { userId: uniqueUser('lists') } })).body.person.id as string;
  const keyRoutes = ['/people', '/people/search', '/people/search?q=x'];
  for (const huge of ['1e20', '9223372036854775807', '2147483648', '1e400']) {
    for (const path of keyRoutes) {
      const sep = path.includes('?') ? '&' : '?';
      badRequest(t, await s.req('GET', `${path}${sep}offset=${huge}`, { token: k.all }), 'offset');
      badRequest(t, await s.req('GET', `${path}${sep}limit=${huge}`, { token: k.all }), 'limit');
    }
    badRequest(t, await s.req('GET', `/people/someone/events?limit=${huge}`, { token: k.all }), 'limit');
    badRequest(t, await s.req('GET', `/events/search?event=x&limit=${huge}`, { token: k.all }), 'limit');
    sessionInvalid(t, await s.req('GET', `/workspaces/${k.ws.id}/people?offset=${huge}`, { token: k.ws.token }), 'offset');
    sessionInvalid(t, await s.req('GET', `/workspaces/${k.ws.id}/people?limit=${huge}`, { token: k.ws.token }), 'limit');
    sessionInvalid(t, await s.req('GET', `/workspaces/${k.ws.id}/people/${person}/events?limit=${huge}`, { token: k.ws.token }), 'limit');
  }
  // The ceiling itself is accepted: an empty page, the limit reduced to the route's maximum.
  const top = await s.req('GET', '/people?offset=2147483647&limit=2147483647', { token: k.all });
  t.equal(top.status, 200, top.text.slice(0, 300));
  t.same([top.body.people, top.body.limit, top.body.offset], [[], 500, 2147483647]);
});

t.test('defect 2: U+0000 (and lone surrogates) in a query string are 400, not 500', async (t) => {
  const k = await setup();
  badRequest(t, await s.req('GET', '/people/search?q=%00', { token: k.all }), 'query.q');
  badRequest(t, await s.req('GET', '/people/search?search=a%00b', { token: k.all }), 'query.search');
  badRequest(t, await s.req('GET', '/events/search?event=%00', { token: k.all }), 'query.event');
  badRequest(t, await s.req('DELETE', '/people/u/devices?token=%00%00%00%00%00%00%00%00%00%00', { token: k.all }), 'query.token');
  badRequest(t, await s.req('DELETE', '/people/u/devices?token=%00', { token: k.all }), 'query.token');
  badRequest(t, await s.req('GET', '/people?x%00=1', { token: k.all }), 'query');
  sessionInvalid(t, await s.req('GET', `/workspaces/${k.ws.id}/people?search=%00`, { token: k.ws.token }), 'query.search');
  // A lone surrogate cannot be percent-encoded as UTF-8; its encoded bytes decode to U+FFFD, which is storable.
  const replaced = await s.req('GET', '/people/search?q=%ED%A0%80', { token: k.all });
  t.equal(replaced.status, 200, replaced.text.slice(0, 300));
});

t.test('defect 3: workspace settings nested 10,000 levels are 400, nothing saved, GET /workspaces still answers', async (t) => {
  const ws = await newWorkspace(s, 'Deep');
  const raw = `{"settings":{"x":${deepObjectText(10_000)}}}`;
  sessionInvalid(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, raw, headers: { 'content-type': 'application/json' } }), 'body');
  // Shallow enough for the body bound, but not a setting Herald has.
  sessionInvalid(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { x: nested(20) } } }), 'settings.x');
  sessionInvalid(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { locale_hint: 'fr' } } }), 'settings.locale_hint');
  const list = await s.req('GET', '/workspaces', { token: ws.token });
  t.equal(list.status, 200, list.text.slice(0, 300));
  const one = await s.req('GET', `/workspaces/${ws.id}`, { token: ws.token });
  t.same(one.body.data.workspace.settings, { timezone: 'UTC', send_policy: null, tracking: { opens: true, clicks: true } }, 'settings unchanged');
});

t.test('defect 3: a body nested past 32 levels is 400 on every route, before it is parsed; parameters nest at most 10 levels', async (t) => {
  const k = await setup();
  const user = uniqueUser('deep');
  const json = { 'content-type': 'application/json' };
  // 20,000 levels of parameters, sent while other tracks run: those succeed.
  const deep = `{"event":"x","external_id":"${user}","parameters":${deepObjectText(20_000)}}`;
  const others = Array.from({ length: 10 }, (_, i) => s.req('POST', '/track', { token: k.all, body: { event: 'beside', external_id: `${user}-${i}` } }));
  const [r, ...rest] = await Promise.all([s.req('POST', '/track', { token: k.all, raw: deep, headers: json }), ...others]);
  badRequest(t, r, 'body');
  for (const o of rest) t.equal(o.status, 201, `a track beside it is stored: ${o.text.slice(0, 200)}`);
  badRequest(t, await s.req('POST', '/track', { token: k.all, raw: '['.repeat(100_000), headers: json }), 'body');
  badRequest(t, await s.req('POST', '/identify', { token: k.all, raw: deepObjectText(33), headers: json }), 'body');
  sessionInvalid(t, await s.req('POST', '/workspaces', { token: k.ws.token, raw: deepObjectText(40), headers: json }), 'body');
  // Brackets inside strings do not count.
  const strings = await s.req('POST', '/track', { token: k.all, body: { event: 'x', external_id: user, parameters: { s: '{['.repeat(1000) } } });
  t.equal(strings.status, 201, strings.text.slice(0, 200));

  // parameters: 10 levels (an object directly under a key is level 1) are fine, 11 are not.
  const ok = await s.req('POST', '/track', { token: k.all, body: { event: 'x', external_id: user, parameters: { p: nested(10) } } });
  t.equal(ok.status, 201, ok.text.slice(0, 200));
  badRequest(t, await s.req('POST', '/track', { token: k.all, body: { event: 'x', external_id: user, parameters: { p: nested(11) } } }), 'parameters.p');
  badRequest(t, await s.req('POST', '/track', { token: k.all, body: { event: 'x', external_id: user, properties: { p: [[[[[[[[[[[1]]]]]]]]]]] } } }), 'properties.p');
  const batch = await s.req('POST', '/track/batch', { token: k.all, body: { events: [{ event: 'x', external_id: `${user}-new`, parameters: { p: nested(11) } }, { event: 'x', external_id: user }] } });
  t.equal(batch.status, 207, batch.text.slice(0, 300));
  t.same(batch.body.errors.map((e: { index: number }) => e.index), [0]);
  t.equal((await s.req('GET', `/people/${enc(`${user}-new`)}`, { token: k.all })).status, 404, 'the refused entry created no one');
});

t.test('defect 4: UUIDs in paths are case-insensitive: a key created through an upper-case workspace id authenticates', async (t) => {
  const ws = await newWorkspace(s, 'Upper');
  const UP = ws.id.toUpperCase();
  const created = await s.req('POST', `/workspaces/${UP}/api-keys`, { token: ws.token, body: { name: 'upper', permissions: ['*'] } });
  t.equal(created.status, 201, created.text.slice(0, 300));
  t.match(created.body.api_key.key_prefix, new RegExp(`^ws_live_${ws.id.slice(0, 8)}_`), 'the prefix names the workspace in lower case');
  const key = created.body.api_key.key as string;
  const people = await s.req('GET', '/people', { token: key });
  t.equal(people.status, 200, `the key authenticates: ${people.text.slice(0, 200)}`);

  const got = await s.req('GET', `/workspaces/${UP}`, { token: ws.token });
  t.equal(got.status, 200);
  t.equal(got.body.data.workspace.id, ws.id);
  t.match(got.body.data.workspace.id, UUID);
  const keyGet = await s.req('GET', `/workspaces/${UP}/api-keys/${created.body.api_key.id.toUpperCase()}`, { token: ws.token });
  t.equal(keyGet.status, 200, keyGet.text.slice(0, 200));
  t.equal(keyGet.body.api_key.id, created.body.api_key.id);
  // A key route with the workspace in its path: the upper-case id is the key's workspace.
  const push = await s.req('GET', `/workspaces/${UP}/push/history`, { token: key });
  t.equal(push.status, 501, push.text.slice(0, 200));

  const person = (await s.req('POST', '/identify', { token: key, body: { userId: uniqueUser('case') } })).body.person.id as string;
  const patched = await s.req('PATCH', `/workspaces/${UP}/people/${person.toUpperCase()}`, { token: ws.token, body: { status: 'bounced' } });
  t.equal(patched.status, 200, patched.text.slice(0, 200));
  t.equal(patched.body.data.person.id, person);
  t.match(patched.body.data.person.updated_at, ISO_MS);
});
