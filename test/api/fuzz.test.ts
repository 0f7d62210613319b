// A bounded, seeded fuzz of every operation the OpenAPI document lists (key, session and public
// routes): bodies generated from each route's request schema, then mutated (wrong types, huge,
// negative and non-finite numbers, U+0000, lone surrogates, timestamps at and past the edges,
// long strings, deep nesting, malformed JSON), odd query strings and path segments, odd
// credentials and methods. It fails on any 5xx but a documented 501, on a request that does not
// answer in time, on an answer the OpenAPI document does not allow (checked by the request
// helper), and on the server dying or its event sink getting stuck. Every failure names the
// seed and the request.
//
//   HERALD_FUZZ_SEED=<n> HERALD_FUZZ_REQUESTS=<n> npx tap test/api/fuzz.test.ts
import t from 'tap';
import net from 'node:net';
import { createHmac, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import twilioLib from 'twilio';
import { startServer, newKey, newWorkspace, eventually, triggerWebhookCampaign, uniqueUser, type Res, type TestServer } from '../helpers/server.js';
import { NO_LIMITS } from '../helpers/assert.js';

const SEED = Number(process.env.HERALD_FUZZ_SEED ?? 0x5eed_4e7d);
const REQUESTS = Number(process.env.HERALD_FUZZ_REQUESTS ?? 3000);
const CONCURRENCY = 8;
const REQUEST_TIMEOUT_MS = 10_000;

const s: TestServer = await startServer({ ...NO_LIMITS, HERALD_RATE_LIMITS: `${NO_LIMITS.HERALD_RATE_LIMITS},user-dashboard=100000:100000` });
t.teardown(() => s.stop());

// ---------------------------------------------------------------------------------------
// Seeded randomness (mulberry32)

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(SEED);
const chance = (p: number) => rand() < p;
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

// ---------------------------------------------------------------------------------------
// What the fuzz works with: a workspace, keys, sessions, a person with a device

const ws = await newWorkspace(s, 'Fuzz');
const other = await newWorkspace(s, 'Fuzz other');
const main = await newKey(s, ws, { permissions: ['*'] });
const publicKey = await newKey(s, ws, { key_type: 'public' });
const otherKey = await newKey(s, other, { permissions: ['*'] });
// Keys the fuzz may update, refresh and revoke; the main key is never in a path.
const victims = await Promise.all([1, 2, 3].map(() => newKey(s, ws, { permissions: ['people:read'] })));
const memberSub = uniqueUser('fuzz-member');
await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: memberSub, role: 'member' } });
const memberToken = await s.session(memberSub);
const strangerToken = await s.session(uniqueUser('fuzz-stranger'));
const userIds = ['fuzz-user-1', 'fuzz-user-2', 'Fuzz User 3', 'é🎉', 'a/b'];
const personIds: string[] = [];
for (const userId of userIds) {
  const r = await s.req('POST', '/identify', { token: main.key, body: { userId, traits: { plan: 'pro' } } });
  personIds.push(r.body.person.id);
}
await s.req('POST', `/people/${encodeURIComponent(userIds[0]!)}/devices`, { token: main.key, body: { token: 'fuzz-device-token-0001', platform: 'android' } });

// ---------------------------------------------------------------------------------------
// Hostile values. Placeholders (RAW_*) are replaced in the JSON text after stringifying, for
// what JSON.stringify cannot write: numbers past float range, -0, exact 64-bit integers.

const RAW: Record<string, string> = {
  '"RAW_1e400"': '1e400',
  '"RAW_-1e400"': '-1e400',
  '"RAW_neg0"': '-0',
  '"RAW_i64"': '9223372036854775807',
  '"RAW_big"': '123456789012345678901234567890',
  '"RAW_exp"': '1E+2',
};
const TIMESTAMPS = [
  '0000-01-01T00:00:00Z', '9999-12-31T23:59:59-01:00', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-23:59', '2016-12-31T23:59:60Z',
  '1969-12-31T23:59:59.999Z', '1970-01-01T00:00:00Z', '2106-02-07T06:28:15.999Z', '2106-02-07T06:28:16Z', '2020-02-30T00:00:00Z',
  '2020-01-01T00:00:00+24:00', '2020-01-01t00:00:00z', '2020-01-01 00:00:00Z', '+275760-09-13T00:00:00Z', '-271821-04-20T00:00:00Z',
  '2020-01-01T00:00:00.123456789123Z', '2020-01-01T00:00:00', '2020-01-01', '1e12', 'now',
];
const STRINGS = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udc00', '\udfff\ud800', '🎉', 'é', '\u202e', '\\', '"', "'; DROP TABLE people; --", '%00', '../..',
  '{"endpoint":"x"}', 'null', 'true', '-1', '1e20', 'ws_live_00000000_AAAAAAAA', '999.1.1.1/33', '10.0.0.0/8', '::1', 'Europe/Paris', 'Not/AZone',
  'owner', 'admin', 'member', 'ios', 'web', '*', 'people:read', '22:00', '24:00',
];
const NUMBERS: unknown[] = [0, -1, 1, 1.5, -0.5, 2147483647, 2147483648, -2147483649, 1e20, -1e20, 1e308, -1e308, 5e-324, 4294967296, Number.MAX_SAFE_INTEGER + 2, 'RAW_1e400', 'RAW_-1e400', 'RAW_neg0', 'RAW_i64', 'RAW_big', 'RAW_exp'];

/** Text that does not compress: ASCII, accented, CJK and astral characters at random. */
function randomText(n: number): string {
  let out = '';
  while (out.length < n) {
    const range = pick([[0x21, 0x7e], [0xc0, 0x24f], [0x4e00, 0x9fff], [0x1f300, 0x1f64f]] as const);
    out += String.fromCodePoint(int(range[0], range[1]));
  }
  return out.slice(0, n); // may split the last astral character: a lone surrogate
}

function longString(): string {
  const n = pick([255, 256, 1001, 4096, 4097, 10_001, 70_000]);
  if (chance(0.4)) return randomText(n);
  return pick(['x', 'é', '🎉', '\u0000y']).repeat(n).slice(0, n);
}

function nested(levels: number, leaf: unknown = 1): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = chance(0.5) ? { a: v } : [v];
  return v;
}

function hostile(): unknown {
  switch (int(0, 9)) {
    case 0: return pick(TIMESTAMPS);
    case 1: return pick(STRINGS);
    case 2: return pick(NUMBERS);
    case 3: return longString();
    case 4: return nested(int(5, 40));
    case 5: return pick<unknown>([null, true, false, [], {}, [null], { '': 1 }, { '\u0000': 1 }, { __proto__x: 1 }, { constructor: { prototype: 1 } }]);
    case 6: return Array.from({ length: pick([2, 101, 1001, 2000]) }, (_, i) => (chance(0.5) ? i : { i }));
    case 7: return Object.fromEntries(Array.from({ length: pick([101, 1001]) }, (_, i) => [`k${i}`, i]));
    case 8: return randomUUID().toUpperCase();
    default: return { [pick(['bad key', '1a', 'id', 'a'.repeat(256), 'email', 'timezone'])]: pick([...STRINGS, ...NUMBERS]) };
  }
}

// ---------------------------------------------------------------------------------------
// Bodies from the request schemas of the OpenAPI document

type Schema = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  /** `writeKey`: the Segment-compatible source, at the root, its key sent as HTTP Basic user name. */
  auth: 'key' | 'session' | 'public' | 'writeKey';
  body?: Schema;
  query: { name: string; schema: Schema; required: boolean }[];
  header: boolean;
  notImplemented: boolean;
}

const doc = (await s.req('GET', '/openapi.json')).body as { paths: Record<string, Record<string, Record<string, unknown>>> };
const operations: Operation[] = [];
for (const [path, item] of Object.entries(doc.paths)) {
  if (path === '/healthz') continue;
  for (const [method, op] of Object.entries(item)) {
    // The routes outside /api/v1 (their own `servers`: unsubscribe, provider callbacks) take
    // forms and provider signatures, not this generator's JSON: the callbacks are fuzzed below,
    // signed; the unsubscribe routes have their own tests.
    // The Segment-compatible source is outside too, but takes JSON and a key: fuzzed here.
    const security = (op.security ?? []) as Record<string, unknown>[];
    const source = security.some((x) => 'writeKey' in x);
    if (method === 'options' || (op.servers && !source)) continue;
    const params = (op.parameters ?? []) as { name: string; in: string; required: boolean; schema: Schema }[];
    operations.push({
      method: method.toUpperCase(),
      path,
      auth: source ? 'writeKey' : security.some((x) => 'apiKey' in x) ? 'key' : security.some((x) => 'session' in x) ? 'session' : 'public',
      body: (op.requestBody as { content: Record<string, { schema: Schema }> } | undefined)?.content['application/json']?.schema,
      query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema, required: p.required })),
      header: params.some((p) => p.in === 'header' && p.name === 'X-Workspace-ID'),
      notImplemented: '501' in (op.responses as object),
    });
  }
}
const bodyOf = (method: string, path: string) => operations.find((o) => o.method === method && o.path === path)!.body!;
// Batch entries are `{}` in their schemas (each is checked on its own): generate real ones.
const ITEMS: Record<string, Schema> = { events: bodyOf('POST', '/track'), identify: bodyOf('POST', '/identify') };
t.ok(operations.length >= 45, `${operations.length} operations to fuzz`);
const SOURCE_TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'];
t.equal(operations.filter((o) => o.auth === 'writeKey').length, SOURCE_TYPES.length + 1, 'the source routes are fuzzed (/v1/*)');
/** A message of a source batch: one of the single routes' bodies with its type (sometimes another). */
function sourceMessage(depth: number): unknown {
  const type = pick(SOURCE_TYPES);
  const message = gen(bodyOf('POST', `/v1/${type}`), depth, '') as Record<string, unknown>;
  return { ...message, type: chance(0.9) ? type : pick(['sneeze', '', 'Track', 'batch']) };
}

const TIME_ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata'];

function gen(schema: Schema, depth = 0, name = ''): unknown {
  if (schema.anyOf) return gen({ ...schema, anyOf: undefined, ...pick(schema.anyOf as Schema[]) }, depth, name);
  if (schema.enum) return pick(schema.enum as unknown[]);
  if (schema.nullable && chance(0.1)) return null;
  switch (schema.type) {
    case 'string': {
      if (schema.format === 'timestamp') return new Date(Date.UTC(2024, 0, 1) + int(0, 1e9) * 1000).toISOString();
      if (schema.format === 'email') return `fuzz${int(0, 99)}@example.com`;
      if (schema.format === 'time-zone') return pick(TIME_ZONES);
      if (schema.maxLength === 0) return '';
      if (typeof schema.pattern === 'string' && schema.pattern.includes('[0-5]')) return pick(['22:00', '08:30', '00:00']);
      if (name === 'token') return `fuzz-token-${int(0, 20)}-abcdef`;
      if (name === 'ip_whitelist') return pick(['10.0.0.1', '192.168.0.0/16']);
      if (name === 'permissions') return pick(['people:read', 'events:write', 'devices:register', '*']);
      if (name === 'userId' || name === 'user_id' || name === 'external_id' || name === 'previousId') return pick(userIds);
      if (name === 'writeKey') return chance(0.5) ? main.key : pick([otherKey.key, publicKey.key, 'garbage']);
      const min = (schema.minLength as number | undefined) ?? 0;
      const max = Math.min((schema.maxLength as number | undefined) ?? 20, min + 20);
      return `${name || 's'}-${'abcdefghijklmnopqrstuvwxyz'.slice(0, int(min, max))}`.slice(0, Math.max(min, max));
    }
    case 'integer': {
      const min = (schema.minimum as number | undefined) ?? 0;
      return int(min, Math.min((schema.maximum as number | undefined) ?? min + 100, min + 100));
    }
    case 'number': return rand() * 100;
    case 'boolean': return chance(0.5);
    case 'array': {
      const items = (schema.items as Schema | undefined) ?? {};
      const itemSchema = Object.keys(items).length === 0 ? ITEMS[name] ?? { type: 'string' } : items;
      const n = int(0, Math.min((schema.maxItems as number | undefined) ?? 3, 3));
      if (name === 'batch') return Array.from({ length: n }, () => sourceMessage(depth + 1));
      return Array.from({ length: n }, () => gen(itemSchema, depth + 1, name));
    }
    case 'object': {
      const props = schema.properties as Record<string, Schema> | undefined;
      if (!props) return freeObject(depth);
      const required = (schema.required as string[] | undefined) ?? [];
      // Aliases name one value: send one of them (mutations send the others).
      const aliases = [['userId', 'user_id', 'external_id'], ['parameters', 'properties']].map((names) => names.filter((n) => n in props));
      const skipped = new Set(
        aliases.flatMap((names) => {
          const chosen = names.length > 0 ? pick(names) : undefined;
          return names.filter((n) => n !== chosen);
        }),
      );
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(props)) {
        if (v.not || skipped.has(k)) continue; // a refused field (e.g. `track` in a people batch), another alias
        if (required.includes(k) || aliases.some((names) => names.includes(k)) || chance(0.5)) out[k] = gen(v, depth + 1, k);
      }
      return out;
    }
    default: return freeObject(depth);
  }
}

/** Traits, parameters: what an integrator might send. */
function freeObject(depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = int(0, 4); i > 0; i--) {
    const key = pick(['plan', 'n', 'first_name', 'email', 'timezone', 'tags', 'nested', 'ratio']);
    out[key] = depth > 3 ? int(0, 9) : pick<() => unknown>([() => `v${int(0, 9)}`, () => int(-5, 5), () => rand(), () => [1, 'a'], () => freeObject(depth + 1), () => null])();
  }
  return out;
}

/** Somewhere inside `v` (an object or array), a hostile value, a dropped or an unknown field. */
function mutate(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || chance(0.15)) return hostile();
  const container = v as Record<string, unknown>;
  const keys = Object.keys(container);
  if (keys.length > 0 && chance(0.55)) {
    const k = pick(keys);
    if (chance(0.15)) delete container[k];
    else container[k] = mutate(container[k]);
  } else if (Array.isArray(container)) container.push(hostile());
  else container[pick(['extra', 'person_id', 'workspace_id', 'track', 'properties', 'parameters', 'timestamp', 'traits', 'anonymousId', 'userId', 'user_id', 'settings', 'send_policy'])] = hostile();
  return v;
}

const RAW_BODIES: (string | Uint8Array)[] = [
  '', '{', '}', 'null', '[]', '"x"', '1', 'true', '{"a":1}garbage', '\ufeff{}', '{"a":1,"a":2}', '{"event":"x","external_id":"u","timestamp":"0000-01-01T00:00:00Z"}',
  '{"a":"\\ud800"}', '{"a\\u0000":1}', '{"a":"\\u0000"}', '['.repeat(20_000), '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000), '{"s":"' + '\\\\'.repeat(1000) + '"}',
  new Uint8Array([0xff, 0xfe, 0x7b, 0x7d]), new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
  `{"s":"${'x'.repeat(1_048_577)}"}`, // over the 1 MB limit: 413
];

function bodyText(op: Operation): { raw?: string | Uint8Array; kind: string } {
  const roll = rand();
  if (roll < 0.08) return { raw: pick(RAW_BODIES), kind: 'raw' };
  if (!op.body) return roll < 0.2 ? { raw: JSON.stringify(mutate({})), kind: 'unexpected body' } : { kind: 'none' };
  let value = gen(op.body);
  const mutations = roll < 0.3 ? 0 : int(1, 3);
  for (let i = 0; i < mutations; i++) value = mutate(value);
  let text = JSON.stringify(value) ?? 'null';
  for (const [from, to] of Object.entries(RAW)) text = text.split(from).join(to);
  return { raw: text, kind: mutations === 0 ? 'generated' : `mutated ×${mutations}` };
}

// ---------------------------------------------------------------------------------------
// Paths, query strings, credentials

/** Percent-encoded; a lone surrogate (which UTF-8 cannot encode) becomes the bytes of one, which decode to U+FFFD. */
function enc(v: string): string {
  try {
    return encodeURIComponent(v);
  } catch {
    return '%ED%A0%80';
  }
}
const ODD_SEGMENTS = ['%00', 'a%00b', '%ED%A0%80', '%F0%9F%8E%89', '%2F', 'x'.repeat(300), 'x'.repeat(5000), '%25', '%ZZ', 'null', '-1', '00000000-0000-0000-0000-000000000000', 'not-a-uuid', ' ', '%20'];

function segment(name: string, method: string, path: string): string {
  if (chance(0.2)) return pick(ODD_SEGMENTS);
  switch (name) {
    case 'workspaceId': return chance(0.7) ? ws.id : pick([ws.id.toUpperCase(), ws.id.toUpperCase(), other.id, randomUUID()]);
    case 'keyId': { const k = pick(victims).id; return pick([k, k, k.toUpperCase(), randomUUID()]); }
    case 'personId': { const p = pick(personIds); return pick([p, p, p.toUpperCase(), randomUUID()]); }
    // The first two people are never deleted, so the routes about a person keep finding one.
    case 'id': return enc(pick([...(method === 'DELETE' && path === '/people/{id}' ? userIds.slice(2) : userIds), uniqueUser('fuzz-new'), 'x'.repeat(256)]));
    case 'userId': return enc(pick([memberSub, uniqueUser('fuzz-nobody'), ws.owner]));
    default: return pick([randomUUID(), 'skipped-1700000000', 'x']);
  }
}

function queryValue(schema: Schema, name: string): string {
  if (chance(0.5)) return enc(String(gen(schema, 0, name)));
  return pick<() => string>([
    () => pick(['-1', '0', '1e20', '9223372036854775807', '2147483647', '2147483648', '1.5', 'abc', '', '1e400', 'NaN', '0x10', ' 5', '%00', '%ED%A0%80', 'a%00b', '%F0%9F%8E%89']),
    () => enc(pick(TIMESTAMPS)),
    () => enc(longString().slice(0, 3000)),
    () => enc(pick(STRINGS)),
  ])();
}

function queryString(op: Operation): string {
  const parts: string[] = [];
  for (const q of op.query) {
    if (q.required ? chance(0.95) : chance(0.5)) parts.push(`${q.name}=${queryValue(q.schema, q.name)}`);
  }
  if (chance(0.2)) parts.push(pick(['x=1', 'x%00=1', 'limit=1&limit=2', '=', '&&', 'a', 'workspace_id=' + ws.id, 'token=%00', `${'k'.repeat(200)}=v`]));
  if (op.method === 'DELETE' && op.path.endsWith('/devices') && chance(0.5)) parts.push(`token=${queryValue({ type: 'string' }, 'token')}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

const basic = (user: string, password = '') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** The source's write key: mostly the main key as Basic user name, else odd Basic headers, another scheme, none (the body's writeKey, if any, then counts). */
function writeKeyHeader(): { authorization?: string; label: string } {
  const r = rand();
  if (r < 0.06) return { label: 'none' };
  if (r < 0.09) return { authorization: pick(['Basic', 'Basic ', 'Basic !!!', 'basic ' + Buffer.from(main.key).toString('base64'), basic('', main.key), basic('garbage'), `Bearer ${main.key}`, basic('x'.repeat(5000))]), label: 'odd basic' };
  if (r < 0.12) return { authorization: basic(publicKey.key), label: 'public key' };
  if (r < 0.14) return { authorization: basic(otherKey.key), label: "another workspace's key" };
  if (r < 0.16) return { authorization: basic(victims[0]!.key), label: 'people:read key' };
  return { authorization: basic(main.key, chance(0.1) ? 'ignored' : ''), label: 'key * (basic)' };
}

function credential(op: Operation): { token?: string; label: string } {
  const r = rand();
  if (r < 0.04) return { label: 'none' };
  if (r < 0.07) return { token: pick(['garbage', 'ws_live_00000000_AAAAAAAA.' + '0'.repeat(64), 'eyJhbGciOiJub25lIn0.e30.', 'x'.repeat(5000)]), label: 'garbage' };
  if (op.auth === 'key') {
    if (r < 0.12) return { token: publicKey.key, label: 'public key' };
    if (r < 0.14) return { token: otherKey.key, label: "another workspace's key" };
    if (r < 0.16) return { token: ws.token, label: 'session token' };
    return { token: main.key, label: 'key *' };
  }
  if (r < 0.12) return { token: memberToken, label: 'member session' };
  if (r < 0.14) return { token: strangerToken, label: 'stranger session' };
  if (r < 0.16) return { token: main.key, label: 'API key' };
  return { token: ws.token, label: 'owner session' };
}

interface Planned {
  index: number;
  method: string;
  path: string;
  token?: string;
  auth: string;
  raw?: string | Uint8Array;
  bodyKind: string;
  headers: Record<string, string>;
  notImplemented: boolean;
}

function plan(index: number): Planned {
  const op = pick(operations);
  let method = op.method;
  if (chance(0.03)) method = pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']);
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => segment(name, op.method, op.path)) + queryString(op);
  const source = op.auth === 'writeKey';
  const write = source ? writeKeyHeader() : null;
  const { token, label } = write ? { token: undefined, label: write.label } : credential(op);
  // fetch sends no body with GET or HEAD.
  let { raw, kind } = method === 'GET' || method === 'HEAD' ? { raw: undefined, kind: 'none' } : bodyText(op);
  const headers: Record<string, string> = {};
  if (write?.authorization !== undefined) headers.authorization = write.authorization;
  // RudderStack gzips its batches: sometimes a gzip body, sometimes a coding Herald does not take or a lie.
  if (source && raw !== undefined && chance(0.2)) {
    const coding = pick(['gzip', 'gzip', 'deflate', 'br', 'gzip, gzip', 'identity']);
    if (coding === 'gzip' && chance(0.8)) raw = gzipSync(typeof raw === 'string' ? Buffer.from(raw) : raw);
    headers['content-encoding'] = coding;
    kind += ` (Content-Encoding ${coding})`;
  }
  if (raw !== undefined) headers['content-type'] = chance(0.9) ? 'application/json' : pick(['text/plain', 'application/x-www-form-urlencoded', '']);
  if (op.header && chance(0.9)) headers['x-workspace-id'] = pick([ws.id, ws.id.toUpperCase(), other.id, 'not-a-uuid', '']);
  return { index, method, path: source ? `${s.base}${path}` : path, token, auth: label, raw, bodyKind: kind, headers, notImplemented: op.notImplemented };
}

// Every request is planned before any is sent: the list depends on the seed alone.
const planned = Array.from({ length: REQUESTS }, (_, i) => plan(i));

function describe(p: Planned): string {
  const body = p.raw === undefined ? '(none)' : typeof p.raw === 'string' ? `${p.raw.length} chars: ${JSON.stringify(p.raw.slice(0, 400))}` : `bytes ${Buffer.from(p.raw).toString('hex').slice(0, 80)}`;
  return `seed ${SEED} request #${p.index}: ${p.method} ${p.path.startsWith('http') ? '' : '/api/v1'}${p.path.slice(0, 400)}${p.path.length > 400 ? '…' : ''}\n  auth: ${p.auth}; headers: ${JSON.stringify(p.headers)}\n  body (${p.bodyKind}): ${body}`;
}

// ---------------------------------------------------------------------------------------
// The run

t.test(`fuzz: ${REQUESTS} requests, seed ${SEED}: no 5xx, no hang, every answer documented`, async (t) => {
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  /** The source's answers by how its write key was sent: Basic auth must be exercised, accepted and refused. */
  const sourceStatuses = new Map<string, number>();
  let next = 0;
  const started = Date.now();
  async function worker(): Promise<void> {
    while (next < planned.length && failures.length < 20) {
      const p = planned[next++]!;
      let r: Res;
      try {
        r = await s.req(p.method, p.path, { token: p.token, raw: p.raw, headers: p.headers, timeoutMs: REQUEST_TIMEOUT_MS });
      } catch (err) {
        const why = (err as Error).name === 'TimeoutError' ? `no answer in ${REQUEST_TIMEOUT_MS} ms` : (err as Error).message;
        failures.push(`${describe(p)}\n  failed: ${why.slice(0, 3000)}${s.proc.exitCode !== null ? `\n  the server exited (${s.proc.exitCode})` : ''}`);
        continue;
      }
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (p.path.startsWith('http')) {
        const tally = `${p.auth} ${r.status}`;
        sourceStatuses.set(tally, (sourceStatuses.get(tally) ?? 0) + 1);
      }
      if (r.status >= 500 && !(r.status === 501 && p.notImplemented)) failures.push(`${describe(p)}\n  answered ${r.status}: ${r.text.slice(0, 500)}`);
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  t.comment(`seed ${SEED}: ${next} requests in ${seconds} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
  t.comment(`/v1/* by credential and status: ${JSON.stringify(Object.fromEntries([...sourceStatuses].sort()))}`);
  t.ok(sourceStatuses.get('key * (basic) 200'), 'the source accepted messages with the write key as Basic user name');
  t.ok([...sourceStatuses.keys()].some((k) => /^(none|odd basic) 401$/.test(k)), 'and refused missing or malformed Basic credentials');
  for (const f of failures) t.fail(f);
  t.equal(failures.length, 0, `no failures (seed ${SEED})`);
  t.equal(s.proc.exitCode, null, 'the server is running');
  // Nothing unexpected was logged (every handler failure is logged at error).
  t.notMatch(s.stderr(), /"level":"error"/, `no errors logged: ${s.stderr().slice(-2000)}`);
});

t.test('after the fuzz: healthy, and the event sink still makes new events readable', async (t) => {
  const h = await s.req('GET', '/healthz');
  t.equal(h.status, 200, h.text);
  const user = uniqueUser('after-fuzz');
  const tracked = await s.req('POST', '/track', { token: main.key, body: { event: 'after_fuzz', external_id: user } });
  t.equal(tracked.status, 201, tracked.text.slice(0, 300));
  const read = await eventually(async () => {
    const r = await s.req('GET', `/people/${enc(user)}/events`, { token: main.key });
    return r.status === 200 && r.body.events.some((e: { id: string }) => e.id === tracked.body.data.event_id);
  }, 20_000);
  t.ok(read, 'the event is readable: the sink is not stuck on anything the fuzz sent');
});

// =======================================================================================
// Hostile inputs at the front (issue 22, findings 6-8), from the same seed: header floods,
// bodies that are not UTF-8, odd X-Forwarded-For hops behind a trusted proxy.

const hostileRand = prng(SEED ^ 0x22);
const hInt = (lo: number, hi: number) => lo + Math.floor(hostileRand() * (hi - lo + 1));
const hPick = <T>(xs: readonly T[]): T => xs[Math.floor(hostileRand() * xs.length)]!;

/** A raw connection that writes `bytes` and records what comes back and whether the server closed it. */
function rawConnection(bytes: string): { received: () => string; closed: () => boolean; whenClosed: Promise<void>; destroy: () => void } {
  const sock = net.connect(s.port, '127.0.0.1', () => sock.write(bytes));
  let got = '';
  let closed = false;
  sock.on('data', (d) => (got += d.toString('latin1')));
  sock.on('error', () => {});
  const whenClosed = new Promise<void>((r) => sock.on('close', () => ((closed = true), r())));
  return { received: () => got, closed: () => closed, whenClosed, destroy: () => sock.destroy() };
}

t.test(`header floods (seed ${SEED}): never answered, and nobody else waits for them`, async (t) => {
  const floods = Array.from({ length: 12 }, () => {
    const lines = hInt(49, 1500);
    const width = hPick([1, 8, 120]);
    const head = [`${hPick(['GET', 'POST'])} ${hPick(['/healthz', '/api/v1/track', '/api/v1/people', '/api/v1/workspaces'])} HTTP/1.1`, 'Host: 127.0.0.1'];
    for (let i = 1; i < lines; i++) head.push(`${hPick(['X-F', 'Cookie', 'Accept', 'X-Forwarded-For', 'Authorization'])}-${i}: ${'v'.repeat(hInt(1, width))}`);
    const bytes = head.join('\r\n') + '\r\n\r\n';
    return { what: `${lines} header lines, ${bytes.length} bytes`, bytes: bytes.length, conn: rawConnection(bytes) };
  });
  t.teardown(() => floods.forEach((f) => f.conn.destroy()));
  for (let i = 0; i < 5; i++) {
    const r = await s.req('POST', '/track', { token: main.key, body: { event: 'during_header_flood', external_id: userIds[0] } });
    t.equal(r.status, 201, `a track served while ${floods.length} floods are pending (${r.text.slice(0, 200)})`);
  }
  // uWS closes a connection whose unfinished head passes its 4 KB buffer; a smaller one waits for its idle timeout.
  await Promise.all(floods.filter((f) => f.bytes > 4096).map((f) => Promise.race([f.conn.whenClosed, new Promise((r) => setTimeout(r, 5000))])));
  for (const f of floods) {
    t.equal(f.conn.received(), '', `${f.what}: no answer`);
    if (f.bytes > 4096) t.ok(f.conn.closed(), `${f.what}: closed by the server`);
  }
  t.equal(s.proc.exitCode, null, 'the server is running');
});

/** Byte sequences that are not UTF-8: stray continuation, truncated, overlong, surrogate, past U+10FFFF, never-used bytes. */
const NOT_UTF8 = [[0x80], [0xbf], [0xc3, 0x28], [0xc3], [0xe2, 0x82], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xfe], [0xff]];

t.test(`bodies that are not UTF-8 (seed ${SEED}): never accepted, never a 5xx`, async (t) => {
  const withBodies = operations.filter((o) => o.method !== 'GET' && o.method !== 'HEAD');
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  for (let i = 0; i < 150; i++) {
    const op = hPick(withBodies);
    const source = op.auth === 'writeKey';
    const path = (source ? s.base : '') + op.path.replace(/\{(\w+)\}/g, (_, name: string) => segment(name, op.method, op.path));
    const text = Buffer.from(JSON.stringify(op.body ? gen(op.body) : { event: 'x', external_id: 'y' }) ?? '{}');
    // Inside a string where there is one (the JSON is otherwise valid), else anywhere.
    const quotes = [...text.keys()].filter((k) => text[k] === 0x22);
    const at = quotes.length > 0 ? hPick(quotes) + 1 : hInt(0, text.length);
    const seq = hPick(NOT_UTF8);
    const raw = new Uint8Array(Buffer.concat([text.subarray(0, at), Buffer.from(seq), text.subarray(at)]));
    const token = op.auth === 'key' ? main.key : op.auth === 'session' ? ws.token : undefined;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(op.header ? { 'x-workspace-id': ws.id } : {}), ...(source ? { authorization: basic(main.key) } : {}) };
    const what = `seed ${SEED} #${i}: ${op.method} ${source ? '' : '/api/v1'}${path} with ${Buffer.from(seq).toString('hex')} at ${at} of ${text.toString().slice(0, 200)}`;
    let r: Res;
    try {
      r = await s.req(op.method, path, { token, raw, headers, timeoutMs: REQUEST_TIMEOUT_MS });
    } catch (err) {
      failures.push(`${what}\n  failed: ${(err as Error).message}`);
      continue;
    }
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    if (r.status < 300) failures.push(`${what}\n  accepted: ${r.status} ${r.text.slice(0, 300)}`);
    if (r.status >= 500 && !(r.status === 501 && op.notImplemented)) failures.push(`${what}\n  answered ${r.status}: ${r.text.slice(0, 300)}`);
  }
  t.comment(`statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
  for (const f of failures) t.fail(f);
  t.equal(failures.length, 0, `no failures (seed ${SEED})`);
});

t.test(`odd X-Forwarded-For hops behind a trusted proxy (seed ${SEED}): one budget per address, however spelled`, async (t) => {
  const BURST = 4;
  const p = await startServer({ HERALD_RATE_LIMITS: `ip-public=1:${BURST}`, HERALD_TRUSTED_PROXIES: '127.0.0.1/32' });
  t.teardown(() => p.stop());
  /** How many of `n` requests, each with a hop from `hops`, were served (the rest must be 429). */
  const served = async (hops: () => string, n: number, what: string): Promise<number> => {
    let ok = 0;
    for (let i = 0; i < n; i++) {
      const hop = hops();
      const r = await p.req('GET', '/openapi.json', { headers: { 'x-forwarded-for': hop } });
      if (r.status === 200) ok++;
      else t.equal(r.status, 429, `${what}: ${JSON.stringify(hop)} is served or refused by its budget (${r.status})`);
    }
    return ok;
  };
  for (let a = 0; a < 4; a++) {
    const ip = `${hInt(1, 126)}.${hInt(0, 255)}.${hInt(0, 255)}.${hInt(1, 254)}`;
    const port = () => hInt(1, 65535);
    const spellings = () => hPick([ip, `${ip}:${port()}`, `[${ip}]`, `[${ip}]:${port()}`, `::ffff:${ip}`, `::FFFF:${ip}`, `[::ffff:${ip}]:${port()}`, ` ${ip} `, `198.51.100.7, ${ip}`, `${ip}, 127.0.0.1`]);
    t.equal(await served(spellings, BURST * 3, ip), BURST, `${ip}: ${BURST} served across its spellings, not ${BURST} each`);
  }
  // Hops that name no address stand for the proxy itself: its one budget, whatever they say.
  const ip = `${hInt(1, 126)}.${hInt(0, 255)}.${hInt(0, 255)}.${hInt(1, 254)}`;
  const padded = ip.split('.').map((o) => o.padStart(3, '0')).join('.');
  const junk = () => Array.from({ length: hInt(1, 12) }, () => hPick([...'abcxyz0123456789.:[]%_-'])).join('');
  const nameless = () => hPick([padded, `${padded}:80`, `${ip}%eth0`, `${ip}.1`, `[${ip}`, `${ip}]`, `${ip}:`, `${ip}:x`, '0x7f.0.0.1', '127.1', 'unknown', '_hidden', 'garbage', junk()]);
  t.ok((await served(nameless, BURST * 3, 'nameless')) <= BURST, `at most ${BURST} served for hops naming no address`);
  const direct = await p.req('GET', '/openapi.json');
  t.equal(direct.status, 429, 'the proxy itself, without X-Forwarded-For, shares that budget');
});

// =======================================================================================
// Expensive templates (issue 22, finding 2), from the same seed: push content whose fields are
// random compositions of costly Liquid (nested ranges, string growth, splits and joins, deep
// conditionals), sent by the fuzz workspace while the other workspace keeps tracking. Each send
// ends as a 2xx or a 4xx (the render budget's 400), never a 5xx or a hang; the other workspace
// is served throughout. The
// hostile provider answers (huge, dripping, private) are exercised in hostile-providers.test.ts:
// each costs the 10 s deadline, too slow to draw at random here.

const tplRand = prng(SEED ^ 0x7e);
const tInt = (lo: number, hi: number) => lo + Math.floor(tplRand() * (hi - lo + 1));
const tPick = <T>(xs: readonly T[]): T => xs[Math.floor(tplRand() * xs.length)]!;

/** One costly Liquid construct, `depth` levels of them nested. */
function costly(depth: number): string {
  const inner = depth > 0 ? costly(depth - 1) : tPick(['{{ i }}', 'x', '{{ person.id }}', '']);
  return tPick([
    () => `{% for i in (1..${tInt(10, 5000)}) %}${inner}{% endfor %}`,
    () => `{% assign s = "${'ab'.repeat(tInt(1, 50))}" %}{% for i in (1..${tInt(10, 2000)}) %}{% assign s = s | append: s | slice: 0, 100000 %}{% endfor %}{{ s | size }}${inner}`,
    () => `{{ "${'a,'.repeat(tInt(1, 200))}" | split: "," | join: "${'-'.repeat(tInt(1, 20))}" }}${inner}`,
    () => `{% if ${tInt(0, 1) === 1 ? 'true' : 'false'} %}${inner}{% else %}${inner}{% endif %}`,
    () => `{% capture c %}${inner}{% endcapture %}{{ c }}{{ c }}`,
  ])();
}

t.test(`expensive templates (seed ${SEED}): a 2xx or a documented 4xx, never a hang; the other workspace served meanwhile`, async (t) => {
  // A person of its own with a device (the fuzz above may have deleted the others): a send renders.
  const target = `fuzz-templates-${SEED}`;
  await s.req('POST', '/identify', { token: main.key, body: { userId: target } });
  await s.req('POST', `/people/${target}/devices`, { token: main.key, body: { token: `fuzz-templates-token-${SEED}`, platform: 'android' } });
  const failures: string[] = [];
  let limited = 0;
  const statuses = new Map<number, number>();
  let stop = false;
  let tracked = 0;
  const bystander = (async () => {
    while (!stop) {
      const r = await s.req('POST', '/track', { token: otherKey.key, body: { event: 'beside_templates', external_id: 'bystander' }, timeoutMs: REQUEST_TIMEOUT_MS });
      if (r.status !== 201) failures.push(`the other workspace's track answered ${r.status}: ${r.text.slice(0, 200)}`);
      else tracked++;
    }
  })();
  for (let i = 0; i < 24; i++) {
    const fields = tInt(1, 30);
    const custom_data = Object.fromEntries(Array.from({ length: fields }, (_, k) => [`f${k}`, costly(tInt(0, 2))]));
    const body = { external_id: target, title: costly(tInt(0, 1)), body: 'fuzz', custom_data };
    const what = `seed ${SEED} template #${i}: ${JSON.stringify(body).slice(0, 300)}`;
    let r: Res;
    try {
      r = await s.req('POST', `/workspaces/${ws.id}/push/send`, { token: main.key, body, timeoutMs: REQUEST_TIMEOUT_MS });
    } catch (err) {
      failures.push(`${what}\n  failed: ${(err as Error).message}`);
      continue;
    }
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    // The render budget, liquidjs's allocation limit, or the cap on rendered text.
    if (r.status === 400 && /render budget exceeded|could not be rendered|rendered content is over/.test(r.body?.message ?? '')) limited++;
    if (r.status >= 300 && !(r.status >= 400 && r.status < 500)) failures.push(`${what}\n  answered ${r.status}: ${r.text.slice(0, 300)}`);
  }
  stop = true;
  await bystander;
  t.comment(`statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}; the other workspace tracked ${tracked} events meanwhile`);
  for (const f of failures) t.fail(f);
  t.equal(failures.length, 0, `no failures (seed ${SEED})`);
  t.ok(limited > 0, `some templates were stopped by a render limit (${limited}): the draw is costly enough to test them`);
  t.ok(tracked > 0, 'the other workspace was served while the templates rendered');
  t.equal((await s.req('GET', '/healthz')).status, 200, 'healthy after');
});

// =======================================================================================
// Provider callbacks (issue 34), from the same seed: bodies as SendGrid, Mailgun, Postmark and
// Twilio send them, naming real messages, then mutated as above (hostile values, U+0000, lone
// surrogates, nulls, wrong types, deep nesting, malformed JSON), and signed validly after the
// mutation (Mailgun's signature travels in the body: a mutation of it is an unsigned request), so
// that the fuzz reaches the parsers behind the signature checks. Never a 5xx; every answer is the
// documented one (the request helper checks it against the OpenAPI document; Twilio's inbound
// TwiML is read here as text); nothing logged as an error.

const cbRand = prng(SEED ^ 0x34);
const cInt = (lo: number, hi: number) => lo + Math.floor(cbRand() * (hi - lo + 1));
const cPick = <T>(xs: readonly T[]): T => xs[Math.floor(cbRand() * xs.length)]!;
const cChance = (p: number) => cbRand() < p;

/** A workspace whose email callbacks come from `provider`, with an SMS channel, and an email and a text sent to one person. */
async function callbackWorkspace(provider: 'sendgrid' | 'mailgun' | 'postmark', webhooks: Record<string, string>) {
  const cw = await newWorkspace(s, `Fuzz ${provider}`);
  const trigger = await newKey(s, cw, { permissions: ['campaigns:trigger', 'people:write'] });
  await s.req('POST', '/identify', { token: trigger.key, body: { userId: 'fuzz-recipient', email: 'fuzz@example.com', phone: '+447400123456' } });
  const campaignId = await triggerWebhookCampaign(s, cw, trigger.key, [{ id: 'mail', type: 'email', subject: 'S', text: 'T' }, { id: 'text', type: 'sms', body: 'Hi' }]);
  const sent = await eventually(async () => {
    const r = await s.req('GET', `/workspaces/${cw.id}/campaigns/${campaignId}/messages`, { token: cw.token });
    return r.body?.messages?.length === 2 ? (r.body.messages as { message_id: string; channel: string; provider_id: string }[]) : undefined;
  }, 20_000);
  if (!sent) throw new Error(`the ${provider} workspace's messages were not sent`);
  const email = await s.req('PUT', `/workspaces/${cw.id}/channels/email`, { token: cw.token, body: { smtp: { host: '127.0.0.1', port: 2525, security: 'none' }, from: { email: 'news@herald.example' }, webhooks: { provider, ...webhooks } } });
  const sms = await s.req('PUT', `/workspaces/${cw.id}/channels/sms`, { token: cw.token, body: { twilio: { account_sid: `AC${'ab'.repeat(16)}`, auth_token: `tw-${provider}`, from: '+15005550006' } } });
  if (email.status !== 200 || sms.status !== 200) throw new Error(`channels: ${email.text} ${sms.text}`);
  return { id: cw.id, authToken: `tw-${provider}`, messageId: sent.find((m) => m.channel === 'email')!.message_id, sid: sent.find((m) => m.channel === 'sms')!.provider_id };
}

/** A provider's value, or now and then a hostile one. */
const maybe = (v: unknown) => (cChance(0.15) ? hostile() : v);
/** A form value: text as Twilio sends it, or a hostile value written as text. */
function formValue(v: string): string {
  if (!cChance(0.2)) return v;
  const h = hostile();
  return typeof h === 'string' ? h : (JSON.stringify(h) ?? '');
}
const messageIdOf = (id: string) => cPick([`<${id}@herald.example>`, `${id}@herald.example`, id.toUpperCase(), '<00000000-0000-4000-8000-000000000000@x>', 'not-an-id']);

t.test(`provider callbacks (seed ${SEED}): every provider's bodies, signed, mutated: never a 5xx, every answer documented`, async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const mailgunKey = 'key-fuzz-mailgun';
  const [sg, mg, pm] = await Promise.all([
    callbackWorkspace('sendgrid', { verification_key: publicKey.export({ type: 'spki', format: 'der' }).toString('base64') }),
    callbackWorkspace('mailgun', { signing_key: mailgunKey }),
    callbackWorkspace('postmark', { username: 'pm', password: 'pm-pass' }),
  ]);
  const logged = s.stderr().length;
  const now = () => Math.floor(Date.now() / 1000);
  let n = 0;
  const unique = () => `fuzz-${SEED}-${n++}`;

  /** The request to send: path, body bytes, headers; `text` when the answer is TwiML. */
  type CallbackRequest = { what: string; path: string; raw: string; headers: Record<string, string>; text?: boolean };
  const mutated = (v: unknown) => {
    for (let i = cInt(0, 3); i > 0; i--) v = mutate(v);
    return cChance(0.05) ? String(pick(RAW_BODIES.filter((b) => typeof b === 'string' && b.length < 100_000))) : JSON.stringify(v) ?? 'null';
  };
  const sendgrid = (): CallbackRequest => {
    const events = Array.from({ length: cInt(1, 20) }, () => ({
      email: 'fuzz@example.com',
      timestamp: now(),
      'smtp-id': maybe(messageIdOf(sg.messageId)),
      event: maybe(cPick(['delivered', 'open', 'click', 'bounce', 'deferred', 'spamreport', 'dropped', 'processed'])),
      sg_event_id: maybe(cChance(0.1) ? 'fuzz-repeated' : unique()),
      ...(cChance(0.3) ? { url: maybe('https://example.com/x') } : {}),
      ...(cChance(0.3) ? { type: maybe(cPick(['bounce', 'blocked'])), reason: maybe('550 5.1.1 unknown') } : {}),
    }));
    const raw = mutated(events);
    const timestamp = String(cChance(0.05) ? now() - 3600 : now());
    return {
      what: 'SendGrid',
      path: `/webhooks/email/${sg.id}`,
      raw,
      headers: { 'content-type': 'application/json', 'X-Twilio-Email-Event-Webhook-Timestamp': timestamp, 'X-Twilio-Email-Event-Webhook-Signature': sign('sha256', Buffer.from(timestamp + raw), privateKey).toString('base64') },
    };
  };
  const mailgun = (): CallbackRequest => {
    const timestamp = String(cChance(0.05) ? now() - 3600 : now());
    const token = cChance(0.05) ? 'fuzz-reused-token-0000000000000000000000000000000' : `${unique()}`.padEnd(50, '0');
    const signature = { timestamp, token, signature: createHmac('sha256', mailgunKey).update(timestamp + token).digest('hex') };
    const data = { id: maybe(unique()), event: maybe(cPick(['delivered', 'failed', 'complained', 'opened', 'clicked', 'accepted'])), severity: maybe(cPick(['permanent', 'temporary'])), url: maybe('https://example.com/y'), message: { headers: { 'message-id': maybe(messageIdOf(mg.messageId)) } } };
    // Mostly the event is mutated (the signature stays valid); now and then the whole body.
    const raw = cChance(0.85) ? `{"signature":${JSON.stringify(cChance(0.05) ? mutate(signature) : signature)},"event-data":${mutated(data)}}` : mutated({ signature, 'event-data': data });
    return { what: 'Mailgun', path: `/webhooks/email/${mg.id}`, raw, headers: { 'content-type': 'application/json' } };
  };
  const postmark = (): CallbackRequest => {
    const record = {
      RecordType: maybe(cPick(['Delivery', 'Bounce', 'SpamComplaint', 'Open', 'Click', 'SubscriptionChange'])),
      ID: maybe(cChance(0.5) ? cInt(1, 1e9) : unique()),
      Type: maybe(cPick(['HardBounce', 'SoftBounce'])),
      MessageID: maybe(cChance(0.5) ? pm.messageId : 'pm-message'),
      Headers: maybe([{ Name: 'Message-ID', Value: maybe(messageIdOf(pm.messageId)) }]),
      OriginalLink: maybe('https://example.com/z'),
      BouncedAt: maybe(new Date().toISOString()),
    };
    return { what: 'Postmark', path: `/webhooks/email/${pm.id}`, raw: mutated(record), headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('pm:pm-pass').toString('base64')}` } };
  };
  const twilio = (inbound: boolean): CallbackRequest => {
    const w = cPick([sg, mg, pm]);
    const form: Record<string, string> = inbound
      ? { MessageSid: formValue(unique()), From: formValue(cPick(['+447400123456', '07400 123456', '+15005550006', 'x'])), To: '+15005550006', Body: formValue(cPick(['STOP', ' start ', 'Hello', ''])) }
      : { MessageSid: formValue(w.sid), MessageStatus: formValue(cPick(['delivered', 'undelivered', 'failed', 'sent', 'queued'])), ErrorCode: formValue(cPick(['30003', '21610', '21211', ''])), AccountSid: `AC${'ab'.repeat(16)}` };
    if (cChance(0.1)) delete form[cPick(Object.keys(form))];
    if (cChance(0.1)) form[String(hostile()).slice(0, 50)] = formValue('x');
    const path = `/webhooks/sms/${w.id}/${inbound ? 'inbound' : 'status'}`;
    return {
      what: `Twilio ${inbound ? 'inbound' : 'status'}`,
      path,
      raw: new URLSearchParams(form).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': twilioLib.getExpectedTwilioSignature(w.authToken, `${s.base}${path}`, form) },
      text: inbound,
    };
  };
  // Within the ip-webhooks burst (300 per IP): past it, answers are the budget's 429.
  const requests = Array.from({ length: Math.min(250, Math.max(100, Math.round(REQUESTS / 6))) }, () => cPick([sendgrid, mailgun, postmark, () => twilio(false), () => twilio(true)])());

  const failures: string[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  // Fewer at once than a workspace's line of callbacks holds: a 503 is a failure here.
  const worker = async () => {
    while (next < requests.length) {
      const index = next++;
      const c = requests[index]!;
      const what = `seed ${SEED} callback #${index} (${c.what}): POST ${c.path}\n  headers: ${JSON.stringify(c.headers)}\n  body (${c.raw.length} chars): ${JSON.stringify(c.raw.slice(0, 400))}`;
      try {
        let status: number;
        if (c.text) {
          const r = await fetch(`${s.base}${c.path}`, { method: 'POST', body: c.raw, headers: c.headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
          const body = await r.text();
          status = r.status;
          const documented = r.status === 200 ? /^<\?xml[^>]*\?><Response\/>$/.test(body) && /text\/xml/.test(r.headers.get('content-type') ?? '') : typeof (JSON.parse(body) as { error?: unknown }).error === 'string';
          if (!documented) failures.push(`${what}\n  answered ${r.status} with an undocumented body: ${body.slice(0, 300)}`);
        } else {
          status = (await s.req('POST', `${s.base}${c.path}`, { raw: c.raw, headers: c.headers, timeoutMs: REQUEST_TIMEOUT_MS })).status;
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 500) failures.push(`${what}\n  answered ${status}`);
      } catch (err) {
        failures.push(`${what}\n  failed: ${(err as Error).message.slice(0, 3000)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 3 }, () => worker()));
  t.comment(`seed ${SEED}: ${requests.length} callbacks; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
  for (const f of failures.slice(0, 20)) t.fail(f);
  t.equal(failures.length, 0, `no failures (seed ${SEED})`);
  t.ok((statuses.get(200) ?? 0) > requests.length / 10, 'a good share was accepted: the fuzz reaches what lies behind the signatures');
  t.ok((statuses.get(400) ?? 0) > 0, 'and some were refused as malformed');
  t.notMatch(s.stderr().slice(logged), /"level":"error"/, `no errors logged: ${s.stderr().slice(logged).slice(-2000)}`);
});
