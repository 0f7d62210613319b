// Setting up the push scenarios before the measured window (not timed): provider credentials
// for each workspace (the fakes'), and `people` people per workspace, each with an android and an
// ios device, created over Herald's HTTP interface.
import { randomBytes } from 'node:crypto';
import type { FakeProvidersReady } from './fake-providers.js';
import { call, sessionToken } from './procs.js';
import type { BenchWorkspace } from './scenarios.js';

/** Requests in flight while registering devices. */
const SETUP_CONCURRENCY = 16;

/** Token shapes as the platforms hand them out: APNs 64 hex digits, FCM `<instance id>:APA91b…`. */
const iosToken = () => randomBytes(32).toString('hex');
const androidToken = () => `${randomBytes(16).toString('base64url').slice(0, 22)}:APA91b${randomBytes(102).toString('base64url').slice(0, 134)}`;

async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** The fakes' credentials on every workspace (PUT …/channels/push, session). */
export async function setupPushChannels(base: string, secret: string, workspaces: BenchWorkspace[], fakes: FakeProvidersReady): Promise<void> {
  const token = await sessionToken(secret, 'herald-bench');
  const body = {
    fcm: { service_account: fakes.fcm.account },
    apns: { key_p8: fakes.apns.key_p8, key_id: fakes.apns.key_id, team_id: fakes.apns.team_id, bundle_id: fakes.apns.bundle_id, production: false },
  };
  for (const ws of workspaces) {
    const r = await call(base, 'PUT', `/api/v1/workspaces/${ws.id}/channels/push`, token, body);
    if (r.status !== 200) throw new Error(`setting the push credentials answered ${r.status}: ${JSON.stringify(r.body).slice(0, 500)}`);
  }
}

/**
 * `people` people in the workspace as a user creates them (external ids `p-0` …, POST
 * /people/batch, 1,000 a request), each with a first name, the trait `plan` and `fields(i)`:
 * their UUIDs in order.
 */
export async function createPeople(base: string, ws: BenchWorkspace, people: number, fields: (i: number) => Record<string, unknown> = () => ({})): Promise<string[]> {
  const ids: string[] = [];
  for (let from = 0; from < people; from += 1000) {
    const identify = Array.from({ length: Math.min(1000, people - from) }, (_, k) => ({ userId: `p-${from + k}`, traits: { first_name: `First${from + k}`, plan: 'pro' }, ...fields(from + k) }));
    const r = await call(base, 'POST', '/api/v1/people/batch', ws.key, { identify });
    const results = r.body?.results as { success: boolean; data?: { id: string }; error?: string }[] | undefined;
    if (r.status !== 200 || !results || results.some((x) => !x.success)) throw new Error(`creating people answered ${r.status}: ${JSON.stringify(r.body).slice(0, 500)}`);
    ids.push(...results.map((x) => x.data!.id));
  }
  return ids;
}

/** Devices registered as an app does (POST /people/{userId}/devices), SETUP_CONCURRENCY in flight. */
export async function registerDevices(base: string, ws: BenchWorkspace, devices: readonly { who: string; platform: 'android' | 'ios' }[]): Promise<void> {
  await inParallel(devices, SETUP_CONCURRENCY, async (d) => {
    const r = await call(base, 'POST', `/api/v1/people/${d.who}/devices`, ws.key, { token: d.platform === 'ios' ? iosToken() : androidToken(), platform: d.platform, app_version: '1.0.0' });
    if (r.status !== 201) throw new Error(`registering a device answered ${r.status}: ${JSON.stringify(r.body).slice(0, 500)}`);
  });
}

/**
 * `people` people in each workspace (createPeople), each with one android and one ios device;
 * fills `ws.people` with their UUIDs.
 */
export async function setupPushPeople(base: string, workspaces: BenchWorkspace[], people: number): Promise<void> {
  for (const ws of workspaces) {
    const ids = await createPeople(base, ws, people);
    await registerDevices(base, ws, ids.flatMap((_, i) => [{ who: `p-${i}`, platform: 'android' as const }, { who: `p-${i}`, platform: 'ios' as const }]));
    ws.people = ids;
  }
}
