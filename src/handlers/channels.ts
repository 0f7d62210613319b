// Push provider credentials per workspace (docs/channels.md), session routes. PUT (owners and
// admins) is partial: a channel sent replaces that channel, null removes it, a channel omitted
// stays; within `apns`, fields omitted keep their stored value. Answers (and GET, for any
// member) say which channels are configured with their non-secret identifiers; private keys
// are never echoed. Stored sealed under HERALD_SECRETS_KEY (store/push-channels.ts).
import { importPKCS8 } from 'jose';
import type { Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { requireManager } from './workspaces.js';
import { InvalidInput, type FieldError } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import { loadPushChannels, savePushChannels, type ApnsCredentials, type FcmCredentials, type PushChannelChanges, type PushChannels, type Queryable } from '../store/index.js';
import type { SecretBox } from '../util/sealing.js';

const APNS_REQUIRED = ['key_p8', 'key_id', 'team_id', 'bundle_id'] as const;

/** `readable: false`: stored, but sealed under another key (or damaged); sends to it fail until it is set again. */
function describe<T>(stored: { readable: true; credentials: T } | { readable: false } | null | undefined, identify: (c: T) => Record<string, unknown>) {
  if (!stored) return { configured: false };
  if (!stored.readable) return { configured: true, readable: false };
  return { configured: true, readable: true, ...identify(stored.credentials) };
}

/** What GET and PUT answer: which channels are configured, with their identifiers; never a key. */
function present(channels: PushChannels | null) {
  return { success: true, data: { channels: describePush(channels), updated_at: channels ? iso(channels.updated_at) : null } };
}

/** Which push providers are configured, with their identifiers (also GET /channels). */
export function describePush(channels: PushChannels | null) {
  return {
    fcm: describe(channels?.fcm, (c) => ({ project_id: c.project_id, client_email: c.client_email, private_key_id: c.private_key_id ?? null, token_uri: c.token_uri })),
    apns: describe(channels?.apns, (c) => ({ key_id: c.key_id, team_id: c.team_id, bundle_id: c.bundle_id, production: c.production })),
  };
}

/** The key as the provider will import it (jose: PKCS#8 of the algorithm's key type and curve), or what is wrong. */
async function keyProblem(field: string, pem: string, alg: 'RS256' | 'ES256', what: string): Promise<FieldError[]> {
  try {
    await importPKCS8(pem, alg);
    return [];
  } catch (err) {
    return [{ field, message: `must be ${what} (${(err as Error).message})` }];
  }
}

/** Only the fields the FCM provider uses are kept. */
const fcmCredentials = (a: FcmCredentials): FcmCredentials => ({
  project_id: a.project_id,
  client_email: a.client_email,
  private_key: a.private_key,
  ...(a.private_key_id ? { private_key_id: a.private_key_id } : {}),
  token_uri: a.token_uri,
});

/** The APNs credentials after the update: fields sent over the stored ones (the row is locked). */
async function mergedApns(q: Queryable, box: SecretBox, workspaceId: string, sent: Partial<ApnsCredentials>): Promise<ApnsCredentials> {
  const stored = (await loadPushChannels(q, box, workspaceId, true))?.apns;
  const base = stored?.readable ? stored.credentials : {};
  const merged = { production: false, ...base, ...sent };
  const missing = APNS_REQUIRED.filter((f) => merged[f] === undefined);
  if (missing.length > 0) {
    const why = stored && !stored.readable ? 'the stored APNs credentials cannot be opened, so every field must be sent' : 'no APNs credentials are stored to keep it from';
    throw new InvalidInput(`Request body is invalid: ${missing.map((f) => `apns.${f}`).join(', ')} required (${why})`, missing.map((f) => ({ field: `apns.${f}`, message: `is required: ${why}` })));
  }
  return merged as ApnsCredentials;
}

const get: Handler = async (ctx) => json(200, present(await loadPushChannels(ctx.db, ctx.providers.secrets, ctx.workspaceId)));

const put: Handler<'PUT /workspaces/{workspaceId}/channels/push'> = async (ctx) => {
  requireManager(ctx);
  const body = ctx.body;
  const tokenUri = body.fcm && ctx.providers.fcmTokenUriProblem(body.fcm.service_account.token_uri);
  const problems = [
    ...(body.fcm ? await keyProblem('fcm.service_account.private_key', body.fcm.service_account.private_key, 'RS256', 'a PKCS#8 RSA private key in PEM, as in the service account file') : []),
    // An IP literal is judged here; a host name when it is resolved, at each connection (docs/isolation.md).
    ...(tokenUri ? [{ field: 'fcm.service_account.token_uri', message: tokenUri }] : []),
    ...(body.apns?.key_p8 !== undefined ? await keyProblem('apns.key_p8', body.apns.key_p8, 'ES256', 'the .p8 key in PEM (PKCS#8, EC P-256)') : []),
  ];
  if (problems.length > 0) throw new InvalidInput(`Request body is invalid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
  const workspaceId = ctx.workspaceId;
  const box = ctx.providers.secrets;
  const saved = await ctx.db.tx(async (q) => {
    const changes: PushChannelChanges = {};
    if (body.fcm !== undefined) changes.fcm = body.fcm && fcmCredentials(body.fcm.service_account);
    if (body.apns !== undefined) changes.apns = body.apns && (await mergedApns(q, box, workspaceId, body.apns));
    return savePushChannels(q, box, workspaceId, changes);
  });
  // Committed: this actor's next send for the workspace uses the new credentials (other replicas within their cache TTL).
  ctx.providers.invalidate(workspaceId);
  return json(200, present(saved));
};

export const channelHandlers = {
  'PUT /workspaces/{workspaceId}/channels/push': put,
  'GET /workspaces/{workspaceId}/channels/push': get,
} satisfies Handlers;
