// The `herald` command, Herald's entry point: `herald start` serves; `herald token` prints a
// session token signed with the configured secret; `herald help` says so. Each command parses
// its arguments strictly before doing anything: `--help` prints its usage (exit 0), and an
// option or argument it does not take is a usage error (one line, exit 2).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig, ConfigError } from './config.js';
import { resolveSessionAuth } from './auth/bootstrap.js';
import { parseTtl, signSessionToken } from './auth/sessions.js';

const USAGE = `usage: herald <command> [--help]

  herald start                 serve the API (settings from the environment; see README.md)
  herald token --user <sub> [--ttl 1h] [--email E] [--name N]
                               print a dashboard session token signed with the configured
                               secret (HERALD_AUTH_SECRET, else the one in HERALD_DATA_DIR)
  herald help [<command>]      this text, or a command's`;

const COMMAND_USAGE = {
  start: `usage: herald start

Serves the API on HERALD_HOST:HERALD_PORT (127.0.0.1:8080 unless set) until SIGTERM or SIGINT.
It takes no arguments: every setting is an environment variable (README.md, Configuration).`,
  token: `usage: herald token --user <sub> [--ttl <ttl>] [--email <email>] [--name <name>]

Prints a dashboard session token signed with the configured secret (HERALD_AUTH_SECRET, else
the one Herald generated in HERALD_DATA_DIR).

  --user <sub>      the user, the token's sub claim (required)
  --ttl <ttl>       how long it is valid: a number and s, m, h or d, from 1m to 366d (default 1h)
  --email <email>   the token's email claim
  --name <name>     the token's name claim`,
  help: USAGE,
};
type Command = keyof typeof COMMAND_USAGE;
const isCommand = (c: string): c is Command => Object.hasOwn(COMMAND_USAGE, c);

/** A usage error: one line naming what was wrong and where the command's usage is. */
const usageError = (message: string, command?: Command) => new ConfigError(`${message} (see herald ${command ? `${command} ` : ''}--help)`);

/** Every command takes `--help` (`-h`): its usage, on stdout, and nothing else done. */
const HELP = { help: { type: 'boolean', short: 'h' } } as const;

/** parseArgs, strict: an unknown option, a missing value or a stray argument is a usage error. */
function parse<T extends ParseArgsConfig>(command: Command, config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    // Its first sentence: the rest is advice about `--` that does not apply here.
    throw usageError((err as Error).message.split(/\.(?:\s|$)/)[0]!, command);
  }
}

const printUsage = (command: Command) => void process.stdout.write(COMMAND_USAGE[command] + '\n');

function ttlSeconds(ttl: string): number {
  try {
    return parseTtl(ttl);
  } catch (err) {
    throw new ConfigError(`--ttl ${(err as Error).message}`);
  }
}

async function token(args: string[]): Promise<void> {
  const { values } = parse('token', { args, options: { ...HELP, user: { type: 'string' }, ttl: { type: 'string', default: '1h' }, email: { type: 'string' }, name: { type: 'string' } } });
  if (values.help) return printUsage('token');
  if (!values.user) throw usageError('--user is required', 'token');
  const ttl = ttlSeconds(values.ttl);
  const auth = resolveSessionAuth(loadConfig(), false);
  if (!auth || auth.kind !== 'hs256') {
    throw new ConfigError('No signing secret: set HERALD_AUTH_SECRET, or start Herald once on the embedded default so it generates one in HERALD_DATA_DIR (with OIDC, tokens come from your identity provider)');
  }
  process.stdout.write((await signSessionToken(auth.secret, { sub: values.user, email: values.email, name: values.name }, ttl)) + '\n');
}

function help(args: string[]): void {
  const { values, positionals } = parse('help', { args, options: HELP, allowPositionals: true });
  if (values.help) return printUsage('help');
  const [about, extra] = positionals;
  if (extra !== undefined) throw usageError(`Unexpected argument '${extra}'`, 'help');
  if (about !== undefined && !isCommand(about)) throw usageError(`unknown command '${about}'`);
  process.stdout.write((about === undefined ? USAGE : COMMAND_USAGE[about]) + '\n');
}

const [command, ...rest] = process.argv.slice(2);
try {
  if (command === undefined) {
    process.stderr.write(USAGE + '\n');
    process.exit(2);
  }
  if (command === 'start') {
    if (parse('start', { args: rest, options: HELP }).values.help) printUsage('start');
    // Loaded only to serve: help and token answer without loading the server's modules.
    else await (await import('./serve.js')).serve();
  } else if (command === 'token') await token(rest);
  else if (command === 'help' || command === '--help' || command === '-h') help(rest);
  else throw usageError(`unknown command '${command}'`);
} catch (err) {
  // A configuration problem is one line naming the setting (exit 2); anything else is a fault
  // worth its stack (exit 1).
  process.stderr.write(`herald: ${err instanceof ConfigError ? err.message : ((err as Error).stack ?? err)}\n`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
