// The `herald` command: `herald [start]` serves; `herald token --user <sub> [--ttl 1h]`
// prints a session token signed with the configured secret.
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config.js';
import { resolveSessionAuth } from './auth/bootstrap.js';
import { parseTtl, signSessionToken } from './auth/sessions.js';
import { serve } from './main.js';

const USAGE = `usage:
  herald [start]                                   serve (settings from the environment, see README)
  herald token --user <sub> [--ttl 1h] [--email E] [--name N]
                                                   print a dashboard session token`;

async function token(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { user: { type: 'string' }, ttl: { type: 'string', default: '1h' }, email: { type: 'string' }, name: { type: 'string' } } });
  if (!values.user) throw new ConfigError('--user is required\n' + USAGE);
  const auth = resolveSessionAuth(loadConfig(), false);
  if (!auth || auth.kind !== 'hs256') {
    throw new ConfigError('No signing secret: set HERALD_AUTH_SECRET, or start Herald once on the embedded default so it generates one in HERALD_DATA_DIR (with OIDC, tokens come from your identity provider)');
  }
  process.stdout.write((await signSessionToken(auth.secret, { sub: values.user, email: values.email, name: values.name }, parseTtl(values.ttl!))) + '\n');
}

const [command = 'start', ...rest] = process.argv.slice(2);
try {
  if (command === 'start') await serve();
  else if (command === 'token') await token(rest);
  else {
    process.stderr.write(USAGE + '\n');
    process.exit(2);
  }
} catch (err) {
  process.stderr.write(`herald: ${err instanceof ConfigError ? err.message : (err as Error).stack ?? err}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
