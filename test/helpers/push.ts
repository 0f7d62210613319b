// Shared setup and expectations of the push HTTP tests (docs/channels.md; README,
// Routes): a server with the fake APNs and FCM wired in, a workspace with its push keys, and the
// requests and result checks every push test file makes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { startFakeApns, type FakeApns } from '../fakes/fake-apns.js';
import { startFakeFcm, type FakeFcm } from '../fakes/fake-fcm.js';
import { NO_LIMITS, ISO_MS, UUID, keyError, type Ws } from './assert.js';
import { startServer, workspaceWithKeys, type Herald, type Res, type TestServer } from './server.js';
import { ownDatabase } from './database.js';

type Platform = 'ios' | 'android' | 'web';
type Json = Record<string, unknown>;

export interface Fakes {
  fcm: FakeFcm;
  apns: FakeApns;
  /** Server env pointing Herald at the fakes and trusting their certificates. */
  env: Record<string, string>;
}

/** Starts the fake FCM and APNs (closed at teardown); `env` is what a Herald needs to reach them (and, on DATABASE_URL, a database of its own). */
export async function startFakes(t: { teardown(fn: () => unknown): void }): Promise<Fakes> {
  const [fcm, apns] = await Promise.all([startFakeFcm(), startFakeApns()]);
  const dir = mkdtempSync(join(tmpdir(), 'herald-push-ca-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, `${fcm.ca}\n${apns.ca}\n`);
  t.teardown(async () => {
    await Promise.all([fcm.close(), apns.close()]);
    rmSync(dir, { recursive: true, force: true });
  });
  // A database of its own on DATABASE_URL: scheduled sends are sent by whichever server's actor
  // polls first, and another file's server could not open these credentials (another secrets key).
  const db = await ownDatabase(t);
  return { fcm, apns, env: { NODE_EXTRA_CA_CERTS: caFile, HERALD_FCM_ENDPOINT: fcm.url, HERALD_APNS_ENDPOINT: apns.url, ...db } };
}

/** A Herald without rate limits and with the fakes as its FCM and APNs endpoints; stopped at teardown. */
export async function startPushServer(t: { teardown(fn: () => unknown): void }, env: Record<string, string> = {}): Promise<{ s: TestServer; fakes: Fakes }> {
  const fakes = await startFakes(t);
  const s = await startServer({ ...NO_LIMITS, ...fakes.env, ...env });
  t.teardown(() => s.stop());
  return { s, fakes };
}

let seq = 0;
/** A device token unique in this process, starting with `prefix` (the fakes and the sandbox answer by prefix). */
export function pushToken(prefix = 'tok-'): string {
  return `${prefix}${process.pid}-${Date.now().toString(36)}-${seq++}`;
}

/** The Unix seconds of a `skipped-<unix seconds>` message id, or NaN. */
function skippedSeconds(messageId: unknown): number {
  const m = /^skipped-(\d+)$/.exec(String(messageId));
  return m ? Number(m[1]) : NaN;
}

/**
 * A workspace with a `push:send` key, a `push:read` key and a `*` key, and the requests the push
 * tests make in it. `s` may be replaced by a restarted server on the same data dir.
 */
export class PushWs {
  constructor(
    public s: Herald,
    readonly ws: Ws,
    readonly keys: { send: string; read: string; all: string },
  ) {}

  static async create(s: Herald): Promise<PushWs> {
    const k = await workspaceWithKeys(s, { send: ['push:send'], read: ['push:read'], all: ['*'] }, 'Push');
    return new PushWs(s, k.ws, { send: k.send, read: k.read, all: k.all });
  }

  get id(): string {
    return this.ws.id;
  }

  send(body: unknown, token = this.keys.send): Promise<Res> {
    return this.s.req('POST', `/workspaces/${this.ws.id}/push/send`, { token, body });
  }

  batch(body: unknown, token = this.keys.send): Promise<Res> {
    return this.s.req('POST', `/workspaces/${this.ws.id}/push/send/batch`, { token, body });
  }

  status(messageId: string, token = this.keys.read): Promise<Res> {
    return this.s.req('GET', `/workspaces/${this.ws.id}/push/status/${encodeURIComponent(messageId)}`, { token });
  }

  /** The person's message history (session route). */
  history(personId: string, query = '', token = this.ws.token): Promise<Res> {
    return this.s.req('GET', `/workspaces/${this.ws.id}/people/${personId}/messages${query ? `?${query}` : ''}`, { token });
  }

  /** Creates (or updates) a person through identify; returns the person UUID. */
  async person(externalId: string, traits?: Json): Promise<string> {
    const r = await this.s.req('POST', '/identify', { token: this.keys.all, body: { userId: externalId, ...(traits ? { traits } : {}) } });
    if (r.status !== 200) throw new Error(`identify failed: ${r.status} ${r.text}`);
    return r.body.person.id as string;
  }

  /** Registers a device; returns its id. */
  async device(externalId: string, token: string, platform: Platform = 'android'): Promise<string> {
    const r = await this.s.req('POST', `/people/${encodeURIComponent(externalId)}/devices`, { token: this.keys.all, body: { token, platform } });
    if (r.status !== 201 && r.status !== 200) throw new Error(`device register failed: ${r.status} ${r.text}`);
    return r.body.device_id as string;
  }

  /** A person with one device per token; returns the person UUID. */
  async personWith(externalId: string, tokens: Array<[string, Platform]>, traits?: Json): Promise<string> {
    const id = await this.person(externalId, traits);
    for (const [token, platform] of tokens) await this.device(externalId, token, platform);
    return id;
  }

  /** The person's devices, by token. */
  async devices(externalId: string): Promise<Map<string, { id: string; is_active: boolean; is_valid: boolean }>> {
    const r = await this.s.req('GET', `/people/${encodeURIComponent(externalId)}/devices`, { token: this.keys.all });
    if (r.status !== 200) throw new Error(`device list failed: ${r.status} ${r.text}`);
    return new Map(r.body.devices.map((d: { device_token: string; id: string; is_active: boolean; is_valid: boolean }) => [d.device_token, d]));
  }

  async unregister(externalId: string, token: string): Promise<void> {
    const r = await this.s.req('DELETE', `/people/${encodeURIComponent(externalId)}/devices`, { token: this.keys.all, body: { token } });
    if (r.status !== 200) throw new Error(`unregister failed: ${r.status} ${r.text}`);
  }

  /** Sets the workspace's send policy (null: none). */
  async policy(policy: Json | null): Promise<void> {
    const r = await this.s.req('PUT', `/workspaces/${this.ws.id}`, { token: this.ws.token, body: { settings: { send_policy: policy } } });
    if (r.status !== 200) throw new Error(`send policy not set: ${r.status} ${r.text}`);
  }

  /** Sets a person's consent status (session route). */
  async consent(personId: string, status: 'active' | 'unsubscribed' | 'bounced' | 'suppressed'): Promise<void> {
    const r = await this.s.req('PATCH', `/workspaces/${this.ws.id}/people/${personId}`, { token: this.ws.token, body: { status } });
    if (r.status !== 200) throw new Error(`consent not set: ${r.status} ${r.text}`);
  }

  suppress(deviceToken: string, platform: Platform, suppressionType = 'opt_out'): Promise<Res> {
    return this.s.req('POST', `/workspaces/${this.ws.id}/push/tokens/suppress`, {
      token: this.keys.send,
      body: { device_token: deviceToken, platform, suppression_type: suppressionType },
    });
  }

  /** Configures provider credentials (session route); throws unless accepted. */
  async channels(body: Json): Promise<void> {
    const r = await this.s.req('PUT', `/workspaces/${this.ws.id}/channels/push`, { token: this.ws.token, body });
    if (r.status !== 200) throw new Error(`channels not set: ${r.status} ${r.text}`);
  }

  /** Credentials of both fakes: android and web go to the fake FCM, ios to the fake APNs. */
  useFakes(fakes: Fakes): Promise<void> {
    const { fcm, apns } = fakes;
    return this.channels({
      fcm: { service_account: fcm.account },
      apns: { key_p8: apns.keyP8, key_id: apns.keyId, team_id: apns.teamId, bundle_id: apns.bundleId, production: false },
    });
  }
}

/** What the fake FCM received for `token` (one entry per attempt). */
export function fcmSends(fakes: Fakes, token: string): Fakes['fcm']['received'] {
  return fakes.fcm.received.filter((r) => r.body.message?.token === token);
}

/** What the fake APNs received for `token` (one entry per attempt). */
export function apnsSends(fakes: Fakes, token: string): Fakes['apns']['received'] {
  return fakes.apns.received.filter((r) => r.path === `/3/device/${token}`);
}

/** A `sent` result of the single route (200) or a batch entry. */
export function isSent(t: Test, r: Res | Json, provider = 'sandbox'): void {
  const body = resultOf(t, r);
  t.equal(body.status, 'sent', `status sent: ${JSON.stringify(body).slice(0, 300)}`);
  t.match(body.message_id, UUID, 'a real message id');
  t.equal(body.provider, provider, `provider ${provider}`);
  t.match(body.sent_at, ISO_MS, 'sent_at');
  t.notOk('skip_reason' in body, 'no skip_reason on a sent result');
}

/** A `skipped` result: synthetic id of the current Unix second, provider none, the reason; nothing stored. */
export async function isSkipped(t: Test, w: PushWs, r: Res | Json, reason: string): Promise<void> {
  const body = resultOf(t, r);
  t.equal(body.status, 'skipped', `status skipped: ${JSON.stringify(body).slice(0, 300)}`);
  t.equal(body.skip_reason, reason, `skip_reason ${reason}`);
  t.equal(body.provider, 'none', 'provider none');
  const at = skippedSeconds(body.message_id);
  t.ok(Math.abs(at - Date.now() / 1000) <= 10, `message_id skipped-<unix seconds of now>: ${String(body.message_id)}`);
  t.match(body.sent_at, ISO_MS, 'sent_at');
  keyError(t, await w.status(String(body.message_id)), 404, 'NOT_FOUND');
}

/** A `policy_suppressed` result with `reason`, stored and readable by status. */
export async function isPolicySuppressed(t: Test, w: PushWs, r: Res | Json, reason: string): Promise<void> {
  const body = resultOf(t, r);
  t.equal(body.status, 'policy_suppressed', `status policy_suppressed: ${JSON.stringify(body).slice(0, 300)}`);
  t.equal(body.skip_reason, reason, `skip_reason ${reason}`);
  t.match(body.message_id, UUID, 'a real message id');
  const st = await w.status(String(body.message_id));
  t.equal(st.status, 200, `stored: ${st.text.slice(0, 300)}`);
  t.equal(st.body?.message?.status, 'policy_suppressed');
  t.equal(st.body?.message?.skip_reason, reason);
}

/** A send result: the single route's 200 body (checked), or a batch entry as it is (its `status` is a string). */
function resultOf(t: Test, r: Res | Json): Json {
  if (typeof r.status !== 'number') return r as Json;
  const res = r as Res;
  t.equal(res.status, 200, `200: ${res.text.slice(0, 300)}`);
  t.equal(res.body?.success, true, 'success:true');
  return (res.body ?? {}) as Json;
}

/** The single route's 500 PROVIDER_ERROR naming the stored `failed` record (`details.message_id`, README); returns its id. */
export function isProviderError(t: Test, r: Res): string {
  keyError(t, r, 500, 'PROVIDER_ERROR');
  const id = r.body?.details?.message_id;
  t.match(id, UUID, 'details.message_id names the failed record');
  return String(id);
}

/**
 * A 400 naming `field`: the schema-failure shape (`Bad Request`, code 400) or the key-route
 * VALIDATION_ERROR carrying the same `details` (README, Errors).
 */
export function invalidField(t: Test, r: Res, field: string): void {
  t.equal(r.status, 400, `400: ${r.text.slice(0, 300)}`);
  t.ok(r.body?.code === 400 || r.body?.code === 'VALIDATION_ERROR', `code 400 or VALIDATION_ERROR: ${String(r.body?.code)}`);
  t.type(r.body?.message ?? r.body?.error, 'string', 'a message');
  t.ok((r.body?.details ?? []).some((d: { field: string }) => d.field === field), `details name ${field}: ${JSON.stringify(r.body?.details)}`);
}

/** Minutes since local midnight in `zone` at `at`. */
export function localMinutes(zone: string, at = new Date()): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(at);
  const n = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return n('hour') * 60 + n('minute');
}

/** `HH:MM` of minutes since midnight (taken modulo a day). */
export function hhmm(minutes: number): string {
  const m = ((minutes % 1440) + 1440) % 1440;
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

/**
 * A non-UTC zone whose local time now is between 02:00 and 21:00, so a window or a local day
 * built around "now" has hours of margin: Asia/Kolkata, else Pacific/Auckland (6.5 to 7.5 h ahead).
 */
export function comfortableZone(): { zone: string; now: number } {
  for (const zone of ['Asia/Kolkata', 'Pacific/Auckland']) {
    const now = localMinutes(zone);
    if (now >= 120 && now <= 1260) return { zone, now };
  }
  throw new Error('unreachable: Kolkata and Auckland are 6.5 h or more apart');
}
