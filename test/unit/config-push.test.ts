// The push settings in src/config.ts: HERALD_FCM_ENDPOINT, HERALD_APNS_ENDPOINT,
// HERALD_PUSH_PROVIDER, HERALD_SECRETS_KEY, HERALD_ALLOWED_PRIVATE_HOSTS.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/config.js';

t.test('defaults: Google FCM, Apple APNs hosts', async (t) => {
  const c = loadConfig({});
  t.equal(c.fcmEndpoint, 'https://fcm.googleapis.com');
  t.equal(c.apnsEndpoint, undefined);
});

t.test('overrides must be https URLs', async (t) => {
  const c = loadConfig({ HERALD_FCM_ENDPOINT: 'https://127.0.0.1:9443', HERALD_APNS_ENDPOINT: 'https://127.0.0.1:9444' });
  t.equal(c.fcmEndpoint, 'https://127.0.0.1:9443');
  t.equal(c.apnsEndpoint, 'https://127.0.0.1:9444');
  t.throws(() => loadConfig({ HERALD_FCM_ENDPOINT: 'http://fcm.local' }), /HERALD_FCM_ENDPOINT must be a URL starting https:\/\//);
  t.throws(() => loadConfig({ HERALD_APNS_ENDPOINT: 'not a url' }), /HERALD_APNS_ENDPOINT must be a URL starting https:\/\//);
});

t.test('HERALD_ALLOWED_PRIVATE_HOSTS: none by default; IPs, blocks and names, with or without a port; anything else refused, naming the entry', async (t) => {
  t.same(loadConfig({}).allowedPrivateHosts, { entries: [] });
  const c = loadConfig({ HERALD_ALLOWED_PRIVATE_HOSTS: ' 127.0.0.1, 10.0.0.0/8 ,fd00::/8,Tokens.Internal,relay.internal:2525,' });
  t.same(c.allowedPrivateHosts.entries.flatMap((e) => ('host' in e ? [[e.host, e.port]] : [])), [['tokens.internal', undefined], ['relay.internal', 2525]]);
  t.equal(c.allowedPrivateHosts.entries.length, 5);
  t.throws(() => loadConfig({ HERALD_ALLOWED_PRIVATE_HOSTS: '127.0.0.1,10.0.0.0/40' }), new ConfigError("HERALD_ALLOWED_PRIVATE_HOSTS: '10.0.0.0/40' is not a host name, an IP address or a CIDR block, with or without a :port"));
  t.throws(() => loadConfig({ HERALD_ALLOWED_PRIVATE_HOSTS: 'https://tokens.internal' }), new ConfigError("HERALD_ALLOWED_PRIVATE_HOSTS: 'https://tokens.internal' is not a host name, an IP address or a CIDR block, with or without a :port"));
});

t.test('HERALD_PUSH_PROVIDER: sandbox by default, or live; anything else refused', async (t) => {
  t.equal(loadConfig({}).pushProvider, 'sandbox');
  t.equal(loadConfig({ HERALD_PUSH_PROVIDER: 'live' }).pushProvider, 'live');
  t.equal(loadConfig({ HERALD_PUSH_PROVIDER: 'sandbox' }).pushProvider, 'sandbox');
  t.throws(() => loadConfig({ HERALD_PUSH_PROVIDER: 'none' }), new ConfigError("HERALD_PUSH_PROVIDER must be sandbox or live, got 'none'"));
  t.throws(() => loadConfig({ HERALD_PUSH_PROVIDER: 'Live' }), new ConfigError("HERALD_PUSH_PROVIDER must be sandbox or live, got 'Live'"), 'case matters');
});

t.test('HERALD_SECRETS_KEY: 32 bytes as hex or base64; unset means generated', async (t) => {
  const key = randomBytes(32);
  t.equal(loadConfig({}).secretsKey, undefined);
  t.throws(() => loadConfig({ HERALD_SECRETS_KEY: '' }), new ConfigError('HERALD_SECRETS_KEY is set but empty: unset it for its default, or give it a value'), 'empty is not unset');
  t.same(loadConfig({ HERALD_SECRETS_KEY: key.toString('hex') }).secretsKey, key, 'hex');
  t.same(loadConfig({ HERALD_SECRETS_KEY: key.toString('hex').toUpperCase() }).secretsKey, key, 'upper-case hex');
  t.same(loadConfig({ HERALD_SECRETS_KEY: key.toString('base64') }).secretsKey, key, 'base64, padded');
  t.same(loadConfig({ HERALD_SECRETS_KEY: key.toString('base64').replace(/=$/, '') }).secretsKey, key, 'base64, unpadded');
  t.same(loadConfig({ HERALD_SECRETS_KEY: key.toString('base64url') }).secretsKey, key, 'base64url');
});

t.test('a malformed HERALD_SECRETS_KEY is a ConfigError naming the variable, never echoing the value', async (t) => {
  const bad = [
    randomBytes(31).toString('hex'), // 62 hex
    randomBytes(33).toString('hex'),
    randomBytes(16).toString('base64'),
    randomBytes(48).toString('base64'),
    'g'.repeat(64),
    `${randomBytes(32).toString('base64').slice(0, 43)}*`,
    'secret-passphrase-that-is-not-a-key',
  ];
  for (const value of bad) {
    let err: unknown;
    try {
      loadConfig({ HERALD_SECRETS_KEY: value });
    } catch (e) {
      err = e;
    }
    t.type(err, ConfigError, `refused: ${value.length} characters`);
    t.match((err as Error).message, /^HERALD_SECRETS_KEY must be 32 bytes as 64 hex characters or base64/);
    t.notOk((err as Error).message.includes(value), 'the value is not in the message');
  }
});
