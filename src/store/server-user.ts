// Who runs the embedded PostgreSQL when Herald is started as root (PostgreSQL refuses root):
// Herald's own system account `herald-pg`, never `postgres`, which a system PostgreSQL on the
// same machine runs as (its superuser could then read Herald's cluster with
// pg_read_binary_file). That user must reach the cluster and the server binaries: a clone
// under /root (mode 0700) is out of its reach, so the binaries are copied once to a root-owned
// directory it can reach, and a data dir it cannot reach is refused before initdb with one line
// (README, Running it).
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, parse, sep } from 'node:path';
import { ConfigError } from '../config.js';

const SERVER_USER = 'herald-pg';

/** Where the binaries are copied when the server user cannot reach node_modules: root-owned, mode 0755. */
const BINARIES_HOME = '/var/lib/herald';

export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
  /** Every group the user is in (its primary one included). */
  groups: number[];
}

function lookup(name: string): ServerUser | null {
  try {
    const id = (flag: string) => execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return { name, uid: Number(id('-u')), gid: Number(id('-g')), groups: id('-G').split(/\s+/).map(Number) };
  } catch {
    return null;
  }
}

/** null when Herald does not run as root (the server then runs as Herald's own user). */
export function serverUser(): ServerUser | null {
  if (process.getuid?.() !== 0) return null;
  const existing = lookup(SERVER_USER);
  if (existing) return existing;
  try {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', SERVER_USER], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const why = (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
    throw new ConfigError(`Started as root, Herald runs its embedded PostgreSQL as the system user ${SERVER_USER}, which could not be created (useradd: ${why.split('\n')[0]}). Create it, run Herald as a non-root user, or set DATABASE_URL.`);
  }
  return lookup(SERVER_USER)!;
}

/** The permission bits of `mode` that apply to `user` (owner, else group, else others), as 0-7. */
function bitsFor(user: ServerUser, st: { mode: number; uid: number; gid: number }): number {
  if (st.uid === user.uid) return (st.mode >> 6) & 7;
  if (user.groups.includes(st.gid)) return (st.mode >> 3) & 7;
  return st.mode & 7;
}

/** The first directory from `/` down to `dir` (itself included) that `user` cannot search; null when it reaches `dir`. */
function blockedAt(user: ServerUser, dir: string): { dir: string; mode: string } | null {
  const parts = dir.split(sep).filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const at = parse(dir).root + parts.slice(0, i).join(sep);
    const st = statSync(at);
    if ((bitsFor(user, st) & 1) === 0) return { dir: at, mode: (st.mode & 0o777).toString(8).padStart(4, '0') };
  }
  return null;
}

/** Refused before anything is created in it: the user must search every directory down to the data dir's parent. */
export function assertDataDirReachable(user: ServerUser, dataDir: string): void {
  const blocked = blockedAt(user, dirname(dataDir));
  if (!blocked) return;
  throw new ConfigError(
    `Started as root, Herald runs its embedded PostgreSQL as the system user ${user.name}, which cannot traverse ${blocked.dir} (mode ${blocked.mode}) to reach HERALD_DATA_DIR ${dataDir}: ` +
      `set HERALD_DATA_DIR to a directory it can reach (e.g. /var/lib/herald/data), run Herald as a non-root user, or set DATABASE_URL to use an external PostgreSQL.`,
  );
}

/**
 * The directory holding `bin/`, `lib/` and `share/` of the server, as the user can run it:
 * node_modules' own copy when the user reaches it, else a copy made once (atomically, per
 * package version) under BINARIES_HOME.
 */
export function reachableBinaries(user: ServerUser, native: string, say: (m: string) => void): string {
  const blocked = blockedAt(user, join(native, 'bin'));
  if (!blocked) return native;
  const version = (JSON.parse(readFileSync(join(native, '..', 'package.json'), 'utf8')) as { version: string }).version;
  const copy = join(BINARIES_HOME, `postgresql-${version}-${process.platform}-${process.arch}`);
  if (existsSync(join(copy, 'bin', 'postgres'))) return copy;
  mkdirSync(BINARIES_HOME, { recursive: true, mode: 0o755 });
  const outOfReach = blockedAt(user, BINARIES_HOME);
  if (outOfReach) {
    throw new ConfigError(`The PostgreSQL binaries in ${native} are out of reach of the server user ${user.name} (${blocked.dir} is mode ${blocked.mode}), and so is ${BINARIES_HOME} to copy them to (${outOfReach.dir} is mode ${outOfReach.mode}): install Herald where ${user.name} can reach it, run it as a non-root user, or set DATABASE_URL.`);
  }
  say(`Copying the PostgreSQL binaries to ${copy}: the server user ${user.name} cannot traverse ${blocked.dir}, where they were installed (once per version)`);
  const tmp = `${copy}.copy-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  cpSync(native, tmp, { recursive: true, verbatimSymlinks: true });
  // Whatever the umask made of the copy: directories 0755, files readable (and runnable when they were) by all.
  for (const entry of ['', ...(readdirSync(tmp, { recursive: true }) as string[])]) {
    const path = join(tmp, entry);
    const st = lstatSync(path);
    if (st.isDirectory()) chmodSync(path, 0o755);
    else if (st.isFile()) chmodSync(path, (st.mode & 0o777) | 0o444 | (st.mode & 0o100 ? 0o111 : 0));
  }
  try {
    renameSync(tmp, copy);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(join(copy, 'bin', 'postgres'))) throw err; // else another Herald made it first
  }
  return copy;
}

/**
 * A cluster made by an earlier Herald, which ran the server as `postgres`, is handed to the
 * server user (said once, when it happens).
 */
export function adoptCluster(user: ServerUser, dir: string, say: (m: string) => void): void {
  if (!existsSync(dir)) return;
  const was = statSync(dir).uid;
  if (was === user.uid) return;
  say(`Handing the embedded PostgreSQL cluster ${dir} to the system user ${user.name} (it belonged to uid ${was}, the \`postgres\` account of earlier Herald versions)`);
  for (const entry of readdirSync(dir, { recursive: true }) as string[]) lchownSync(join(dir, entry), user.uid, user.gid);
  lchownSync(dir, user.uid, user.gid);
}
