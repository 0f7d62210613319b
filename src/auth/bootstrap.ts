// First-start bootstrap (DECISIONS §2): with no secret and no OIDC configured, Herald
// generates a secret kept in the data dir, creates workspace "Default" owned by
// `local-admin`, and prints the workspace id and a fresh 24-hour session token every start.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import type { Db } from '../store/db.js';
import { createWorkspace, workspacesOf } from '../store/workspaces.js';
import type { SessionAuthConfig } from './sessions.js';

export const LOCAL_ADMIN = 'local-admin';

function secretFile(dataDir: string): string {
  return join(dataDir, 'auth-secret');
}

/** The session verification settings; generates the data-dir secret when nothing is configured. */
export function resolveSessionAuth(cfg: Config, create: boolean): (SessionAuthConfig & { generated?: boolean }) | null {
  if (cfg.authSecret) return { kind: 'hs256', secret: cfg.authSecret };
  if (cfg.authJwksUrl) return { kind: 'oidc', jwksUrl: cfg.authJwksUrl, issuer: cfg.authIssuer, audience: cfg.authAudience };
  const file = secretFile(cfg.dataDir);
  if (existsSync(file)) return { kind: 'hs256', secret: readFileSync(file, 'utf8').trim(), generated: true };
  if (!create) return null;
  mkdirSync(cfg.dataDir, { recursive: true });
  writeFileSync(file, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
  return { kind: 'hs256', secret: readFileSync(file, 'utf8').trim(), generated: true };
}

/** Returns the id of local-admin's workspace, creating "Default" when local-admin has none. */
export async function ensureDefaultWorkspace(db: Db): Promise<string> {
  return db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock(4242002)');
    const [owned] = await workspacesOf(q, LOCAL_ADMIN, 'owner');
    return (owned ?? (await createWorkspace(q, 'Default', LOCAL_ADMIN))).id;
  });
}
