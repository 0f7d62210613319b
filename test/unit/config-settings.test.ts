// The rules every setting of src/config.ts shares: unset is the default, set but empty is
// refused naming the setting (README, Configuration); and HERALD_HOST's form.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../../src/config.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The variables of the README's configuration table. */
function documentedSettings(): string[] {
  const section = README.slice(README.indexOf('\n## Configuration\n'), README.indexOf('\n## The embedded PostgreSQL\n'));
  return [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]!);
}

t.test('every documented setting: unset is its default, empty is refused naming it', async (t) => {
  const names = documentedSettings();
  t.ok(names.length >= 40, `the table lists the settings (${names.length})`);
  t.doesNotThrow(() => loadConfig({}), 'nothing set: every default');
  for (const name of names) {
    t.throws(() => loadConfig({ [name]: '' }), new ConfigError(`${name} is set but empty: unset it for its default, or give it a value`), `${name}=`);
  }
});

t.test('HERALD_HOST: an IP address or a host name', async (t) => {
  for (const host of ['127.0.0.1', '0.0.0.0', '::', '::1', 'fe80::1', 'localhost', 'herald-1.internal', 'a.b.example.com', '10.0.0.1']) {
    t.equal(loadConfig({ HERALD_HOST: host }).host, host, `${host} is accepted`);
  }
  for (const host of ['999.1.1.1', '1.2.3', '127.0.0.1:8080', '[::1]', 'my host', '-x.example', 'x-.example', 'example.com.', 'a..b', 'http://localhost', ' ']) {
    t.throws(() => loadConfig({ HERALD_HOST: host }), new ConfigError(`HERALD_HOST must be an IP address or a host name, got '${host}'`), `'${host}' is refused`);
  }
});

t.test('HERALD_WEBHOOK_RETRY_SCHEDULE: durations with their units', async (t) => {
  t.same(loadConfig({}).webhookRetryScheduleMs, [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000], 'the default: about 27 hours');
  t.same(loadConfig({ HERALD_WEBHOOK_RETRY_SCHEDULE: '500ms, 1s,2m,1h,1d' }).webhookRetryScheduleMs, [500, 1_000, 120_000, 3_600_000, 86_400_000]);
  for (const bad of ['5', '5 s', '1.5s', '-1s', '5s,,5s', '5w', '30d']) {
    t.throws(() => loadConfig({ HERALD_WEBHOOK_RETRY_SCHEDULE: bad }), { name: 'Error', message: /^HERALD_WEBHOOK_RETRY_SCHEDULE must list durations/ }, `'${bad}' refused`);
  }
});

t.test('HERALD_TIME_SCALE: a number above 0', async (t) => {
  t.equal(loadConfig({}).timeScale, 1, 'the default: durations as written');
  t.equal(loadConfig({ HERALD_TIME_SCALE: '0.0001' }).timeScale, 0.0001);
  for (const bad of ['0', '-1', 'fast', 'Infinity', ' ']) {
    t.throws(() => loadConfig({ HERALD_TIME_SCALE: bad }), new ConfigError(`HERALD_TIME_SCALE must be a number above 0 (e.g. 0.001), got '${bad}'`), `'${bad}' refused`);
  }
});
