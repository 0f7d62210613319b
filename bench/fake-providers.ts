// The fake push providers of the push scenarios: the tests' fake FCM and fake APNs (test/fakes/),
// both in this one process, apart from Herald and from the load. Forked by bench/run.ts with an
// IPC channel: it sends `ready` with the fakes' URLs, certificates and the credentials they accept,
// then answers `stats` (what the fakes received so far) and `sample` (FCM request bodies as Herald
// sent them, for the push floor to send the same), and exits when its parent goes away.
import { startFakeApns } from '../test/fakes/fake-apns.js';
import { startFakeFcm } from '../test/fakes/fake-fcm.js';

/** FCM sends kept whole, for the floor to replay; the others are only counted. */
const SAMPLE = 2000;

export interface FakeProvidersReady {
  type: 'ready';
  fcm: { url: string; ca: string; account: { type: string; project_id: string; client_email: string; private_key: string; private_key_id: string; token_uri: string } };
  apns: { url: string; ca: string; key_p8: string; key_id: string; team_id: string; bundle_id: string };
}

export interface ProviderStats {
  requests: number;
  sessions: number;
}

export interface FakeProvidersStats {
  type: 'stats';
  /** `repeated`: sends to a token the fake had received before (duplicate deliveries). */
  fcm: ProviderStats & { max_concurrent_streams: number; repeated: number };
  apns: ProviderStats;
  /** CPU seconds this process has used (both fakes). */
  cpu_s: number;
}

export interface FakeProvidersSample {
  type: 'sample';
  /** Request bodies of FCM sends as received (JSON text), at most SAMPLE. */
  bodies: string[];
}

export type FromFakes = FakeProvidersReady | FakeProvidersStats | FakeProvidersSample;
export type ToFakes = { type: 'stats' } | { type: 'sample' };

if (!process.send) {
  process.stderr.write('bench/fake-providers.js is started by bench/run.js (it needs an IPC channel)\n');
  process.exit(2);
}
process.once('disconnect', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));

const [fcm, apns] = await Promise.all([startFakeFcm({ projectId: 'herald-bench', keep: SAMPLE, countRepeats: true }), startFakeApns({ keep: 0 })]);
const send = (m: FromFakes) => process.send!(m);

process.on('message', (m: ToFakes) => {
  if (m.type === 'stats') {
    const cpu = process.cpuUsage();
    send({
      type: 'stats',
      fcm: { requests: fcm.requests, sessions: fcm.sessions, max_concurrent_streams: fcm.maxConcurrentStreams, repeated: fcm.repeated },
      apns: { requests: apns.requests, sessions: apns.sessions },
      cpu_s: (cpu.user + cpu.system) / 1e6,
    });
  } else if (m.type === 'sample') {
    send({ type: 'sample', bodies: fcm.received.map((r) => JSON.stringify(r.body)) });
  }
});

send({
  type: 'ready',
  fcm: { url: fcm.url, ca: fcm.ca, account: fcm.account },
  apns: { url: apns.url, ca: apns.ca, key_p8: apns.keyP8, key_id: apns.keyId, team_id: apns.teamId, bundle_id: apns.bundleId },
});
