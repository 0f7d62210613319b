// The `herald` command, Herald's entry point: `herald start` serves; `herald token` prints a
// session token signed with the configured secret; `herald help` says so.
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config.js';
import { resolveSessionAuth } from './auth/bootstrap.js';
import { parseTtl, signSessionToken } from './auth/sessions.js';
import { serve } from './serve.js';

const USAGE = `usage: herald <command>

  herald start                 serve the API (settings from the environment; see README.md)
  herald token --user <sub> [--ttl 1h] [--email E] [--name N]
                               print a dashboard session token signed with the configured
                               secret (HERALD_AUTH_SECRET, else the one in HERALD_DATA_DIR)
  herald help                  this text`;

/** parseArgs' refusals (an unknown option, a missing value) are usage errors: one line, exit 2. */
function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new ConfigError(`${(err as Error).message.split('\n')[0]} (see herald help)`);
  }
}

function ttlSeconds(ttl: string): number {
  try {
    return parseTtl(ttl);
  } catch (err) {
    throw new ConfigError(`--ttl: ${(err as Error).message}`);
  }
}

async function token(args: string[]): Promise<void> {
  const { values } = usage(() => parseArgs({ args, options: { user: { type: 'string' }, ttl: { type: 'string', default: '1h' }, email: { type: 'string' }, name: { type: 'string' } } }));
  if (!values.user) throw new ConfigError('--user is required (see herald help)');
  const ttl = ttlSeconds(values.ttl!);
  const auth = resolveSessionAuth(loadConfig(), false);
  if (!auth || auth.kind !== 'hs256') {
    throw new ConfigError('No signing secret: set HERALD_AUTH_SECRET, or start Herald once on the embedded default so it generates one in HERALD_DATA_DIR (with OIDC, tokens come from your identity provider)');
  }
  process.stdout.write((await signSessionToken(auth.secret, { sub: values.user, email: values.email, name: values.name }, ttl)) + '\n');
}

const [command, ...rest] = process.argv.slice(2);
try {
  if (command === 'start') await serve();
  else if (command === 'token') await token(rest);
  else if (command === 'help' || command === '--help' || command === '-h') process.stdout.write(USAGE + '\n');
  else {
    process.stderr.write((command === undefined ? '' : `herald: unknown command '${command}'\n`) + USAGE + '\n');
    process.exit(2);
  }
} catch (err) {
  // A configuration problem is one line naming the setting (exit 2); anything else is a fault
  // worth its stack (exit 1).
  process.stderr.write(`herald: ${err instanceof ConfigError ? err.message : ((err as Error).stack ?? err)}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
