// The push provider settings in src/config.ts: HERALD_FCM_ENDPOINT, HERALD_APNS_ENDPOINT.
import t from 'tap';
import { loadConfig } from '../../src/config.js';

t.test('defaults: Google FCM, Apple APNs hosts', async (t) => {
  const c = loadConfig({});
  t.equal(c.fcmEndpoint, 'https://fcm.googleapis.com');
  t.equal(c.apnsEndpoint, undefined);
});

t.test('overrides must be https URLs', async (t) => {
  const c = loadConfig({ HERALD_FCM_ENDPOINT: 'https://127.0.0.1:9443', HERALD_APNS_ENDPOINT: 'https://127.0.0.1:9444' });
  t.equal(c.fcmEndpoint, 'https://127.0.0.1:9443');
  t.equal(c.apnsEndpoint, 'https://127.0.0.1:9444');
  t.throws(() => loadConfig({ HERALD_FCM_ENDPOINT: 'http://fcm.local' }), /HERALD_FCM_ENDPOINT must be an https URL/);
  t.throws(() => loadConfig({ HERALD_APNS_ENDPOINT: 'not a url' }), /HERALD_APNS_ENDPOINT must be an https URL/);
});
