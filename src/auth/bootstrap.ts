// First-start bootstrap (README, Sessions and the Default workspace): with no secret and no OIDC configured, Herald
// generates a secret kept in the data dir, creates workspace "Default" owned by
// `local-admin`, and prints the workspace id and a fresh 24-hour session token every start.
// The key sealing push credentials (docs/channels.md) is generated and kept the same way.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseSecretsKey, type Config } from '../config.js';
import type { Db } from '../store/db.js';
import { createWorkspace, workspacesOf } from '../store/workspaces.js';
import type { SessionAuthConfig } from './sessions.js';

export const LOCAL_ADMIN = 'local-admin';

/** 32 random bytes as hex kept in `dataDir/name` (owner-only), made on first use when `create`; null when absent and not made. */
function dataDirSecret(dataDir: string, name: string, create: boolean): string | null {
  const file = join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  if (!create) return null;
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/** The session verification settings; generates the data-dir secret when nothing is configured. */
export function resolveSessionAuth(cfg: Config, create: boolean): (SessionAuthConfig & { generated?: boolean }) | null {
  if (cfg.authSecret) return { kind: 'hs256', secret: cfg.authSecret };
  if (cfg.authJwksUrl) return { kind: 'oidc', jwksUrl: cfg.authJwksUrl, issuer: cfg.authIssuer, audience: cfg.authAudience };
  const secret = dataDirSecret(cfg.dataDir, 'auth-secret', create);
  return secret === null ? null : { kind: 'hs256', secret, generated: true };
}

/** The file in the data dir holding the generated key sealing push credentials. */
const SECRETS_KEY_FILE = 'secrets-key';

/**
 * The key sealing stored push credentials: HERALD_SECRETS_KEY, else the one generated on the
 * first start in the data dir (a file that does not hold a key is a ConfigError naming it).
 */
export function resolveSecretsKey(cfg: Config): { key: Buffer; generated: boolean } {
  if (cfg.secretsKey) return { key: cfg.secretsKey, generated: false };
  return { key: parseSecretsKey(dataDirSecret(cfg.dataDir, SECRETS_KEY_FILE, true)!, join(cfg.dataDir, SECRETS_KEY_FILE)), generated: true };
}

/** Returns the id of local-admin's workspace, creating "Default" when local-admin has none. */
export async function ensureDefaultWorkspace(db: Db): Promise<string> {
  return db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock(4242002)');
    const [owned] = await workspacesOf(q, LOCAL_ADMIN, 'owner');
    return (owned ?? (await createWorkspace(q, 'Default', LOCAL_ADMIN))).id;
  });
}
