// The push providers a workspace sends through (docs/channels.md), one registry per actor
// thread. `ios` goes to APNs, `android` and `web` to FCM, each built from the workspace's stored
// credentials; a platform without credentials goes to the sandbox (HERALD_PUSH_PROVIDER=sandbox)
// or fails as a configuration error naming the channel (`live`); credentials that cannot be
// opened (sealed under another HERALD_SECRETS_KEY) always fail that way, never the sandbox.
//
// A provider holds connections (an HTTP/2 pool, a node-apn session), so one is built per
// credential and reused across sends. The registry keeps the workspaces it served in an LRU
// (bounded; idle ones are dropped), and reads the row's version again once `ttlMs` has passed
// since it last did: a PUT on another replica is picked up within that time, and the actor that
// handled the PUT calls `invalidate` so it is picked up there at once. A channel whose stored
// bytes did not change keeps its provider (and its warm connections). A replaced or dropped
// provider is closed once no send has used it for `retireGraceMs`, which outlasts the waits
// between a send's retries, so sends under way finish on it.
import { setTimeout as sleep } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import type { Db } from '../../store/db.js';
import { PUSH_PROVIDERS, loadPushChannels, pushChannelsVersion, type PushProviderName, type PushChannels } from '../../store/push-channels.js';
import { SecretBox } from '../../util/sealing.js';
import { DEFAULT_FCM_ENDPOINT, type PushProviderMode } from '../../config.js';
import { OutboundPolicy, type AllowList } from '../../net/destinations.js';
import {
  ApnsProvider,
  FcmProvider,
  SandboxProvider,
  tokenUriProblem,
  UnconfiguredProvider,
  type PushDevice,
  type PushMessage,
  type PushProvider,
  type TokenUriRule,
} from './index.js';
import { DEFAULT_RETRY_POLICY, type PushOutcome } from '../../domain/push-outcome.js';
import { logger } from '../../logger.js';

import type { DevicePlatform as Platform } from '../../domain/tokens.js';

/**
 * A workspace's providers as they were when it was asked for. Resolve it for each send (it is
 * cached): a provider is the registry's, shared by every send of the workspace; do not close it,
 * and do not keep it past one send with its retries.
 */
export interface WorkspaceProviders {
  forPlatform(platform: Platform): PushProvider;
}

export interface ProviderRegistryOptions {
  mode: PushProviderMode;
  secretsKey: Buffer;
  /** Config HERALD_FCM_ENDPOINT. */
  fcmEndpoint: string;
  /** Config HERALD_APNS_ENDPOINT; undefined: Apple's hosts. */
  apnsEndpoint: string | undefined;
  /** How long a workspace's credentials are used before their version is read again (default 5 s). */
  ttlMs?: number;
  /** Workspaces kept (default 1,000); the least recently used beyond that are closed. */
  maxWorkspaces?: number;
  /** A workspace no send asked for in this long is closed (default 10 minutes). */
  idleMs?: number;
  /** How long a replaced provider must go unused before it is closed (default: the longest retry wait + 5 s). */
  retireGraceMs?: number;
  /** Trusted CAs instead of the system's (tests); a deployment adds its CA with NODE_EXTRA_CA_CERTS. */
  ca?: string;
  /** Config HERALD_ALLOWED_PRIVATE_HOSTS: the private destinations a tenant may set (default none). */
  allowedPrivateHosts?: AllowList;
  /** The total deadline of one provider request or token fetch (default 10 s; tests make it short). */
  deadlineMs?: number;
}

const PLATFORM_CHANNEL: Record<Platform, PushProviderName> = { ios: 'apns', android: 'fcm', web: 'fcm' };
const CHANNEL_NAME: Record<PushProviderName, string> = { fcm: 'FCM', apns: 'APNs' };

/** A provider built from stored credentials, shared by the sends of its workspace until it is retired. */
class SharedProvider implements PushProvider {
  readonly name: string;
  private inflight = 0;
  private lastUsed = Date.now();
  /** Called when the last send under way ends. */
  private drained: (() => void) | undefined;
  private closing: Promise<void> | undefined;
  retired = false;

  constructor(
    private readonly inner: PushProvider,
    private readonly graceMs: number,
    private readonly onClosed: (p: SharedProvider) => void,
  ) {
    this.name = inner.name;
  }

  async send(message: PushMessage, devices: readonly PushDevice[]): Promise<PushOutcome[]> {
    this.inflight++;
    try {
      return await this.inner.send(message, devices);
    } finally {
      this.lastUsed = Date.now();
      if (--this.inflight === 0) this.drained?.();
    }
  }

  /** The registry closes it (retire, closeNow); a caller's close does nothing. */
  async close(): Promise<void> {}

  /** No new sends get it; it closes once no send has used it for the grace period. */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    void this.closeWhenIdle();
  }

  private async closeWhenIdle(): Promise<void> {
    while (!this.closing) {
      if (this.inflight > 0) {
        await new Promise<void>((resolve) => (this.drained = resolve));
        continue;
      }
      const wait = this.graceMs - (Date.now() - this.lastUsed);
      if (wait <= 0) break;
      await sleep(wait, undefined, { ref: false });
    }
    await this.closeNow();
  }

  closeNow(): Promise<void> {
    this.retired = true;
    return (this.closing ??= this.inner
      .close()
      .catch((err) => logger.warn('closing a push provider failed', { provider: this.name, err }))
      .finally(() => this.onClosed(this)));
  }
}

interface Entry {
  version: string | null;
  sealed: Record<PushProviderName, Buffer | null>;
  providers: Record<PushProviderName, PushProvider>;
  view: WorkspaceProviders;
  /** When the version was last read (ms). */
  checkedAt: number;
}

export class ProviderRegistry {
  private readonly box: SecretBox;
  private readonly ttlMs: number;
  private readonly graceMs: number;
  private readonly cache: LRUCache<string, Entry>;
  /** Loads under way by workspace; `invalidate` drops one, so its result is not kept. */
  private readonly loading = new Map<string, { token: object; promise: Promise<WorkspaceProviders> }>();
  /** Every provider built and not yet closed, retired or not. */
  private readonly open = new Set<SharedProvider>();
  private readonly sandbox = new SandboxProvider();
  private readonly missing: Record<PushProviderName, PushProvider>;
  /** Where a tenant's FCM token_uri may point: checked when the channel is set and when it is used. */
  private readonly tokenUriRule: TokenUriRule;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly opts: ProviderRegistryOptions,
  ) {
    this.box = new SecretBox(opts.secretsKey);
    this.ttlMs = opts.ttlMs ?? 5_000;
    this.graceMs = opts.retireGraceMs ?? DEFAULT_RETRY_POLICY.maxRetryAfterMs + 5_000;
    this.tokenUriRule = {
      googleOnly: new URL(opts.fcmEndpoint).origin === new URL(DEFAULT_FCM_ENDPOINT).origin,
      outbound: new OutboundPolicy(opts.allowedPrivateHosts),
    };
    this.missing = {
      fcm: opts.mode === 'sandbox' ? this.sandbox : new UnconfiguredProvider('fcm', 'FCM'),
      apns: opts.mode === 'sandbox' ? this.sandbox : new UnconfiguredProvider('apns', 'APNs'),
    };
    this.cache = new LRUCache<string, Entry>({
      max: opts.maxWorkspaces ?? 1_000,
      ttl: opts.idleMs ?? 10 * 60_000,
      updateAgeOnGet: true,
      ttlAutopurge: true,
      // An entry replaced by a newer one hands its providers over itself (install); dropped ones close.
      noDisposeOnSet: true,
      dispose: (entry) => this.retireAll(entry),
    });
  }

  /** Seals and opens stored credentials (the channel routes store them with it). */
  get secrets(): SecretBox {
    return this.box;
  }

  /** What is wrong with a service account's token_uri on this server (docs/isolation.md), or undefined. */
  fcmTokenUriProblem(tokenUri: string): string | undefined {
    return tokenUriProblem(tokenUri, this.tokenUriRule)?.message;
  }

  async forWorkspace(workspaceId: string): Promise<WorkspaceProviders> {
    if (this.closed) throw new Error('the push provider registry is closed');
    const entry = this.cache.get(workspaceId);
    if (entry && Date.now() - entry.checkedAt < this.ttlMs) return entry.view;
    const under = this.loading.get(workspaceId);
    if (under) return under.promise;
    const token = {};
    const promise = this.load(workspaceId, token).finally(() => {
      if (this.loading.get(workspaceId)?.token === token) this.loading.delete(workspaceId);
    });
    this.loading.set(workspaceId, { token, promise });
    return promise;
  }

  /** The workspace's credentials changed (this actor committed a PUT): the next send reads them. */
  invalidate(workspaceId: string): void {
    this.loading.delete(workspaceId);
    const entry = this.cache.peek(workspaceId);
    if (entry) entry.checkedAt = -Infinity;
  }

  /** Closes every provider at once (shutdown: no sends are under way). */
  async close(): Promise<void> {
    this.closed = true;
    this.loading.clear();
    this.cache.clear();
    await Promise.all([...this.open].map((p) => p.closeNow()));
  }

  private async load(workspaceId: string, token: object): Promise<WorkspaceProviders> {
    const superseded = () => this.loading.get(workspaceId)?.token !== token;
    const current = this.cache.peek(workspaceId);
    const checkedAt = Date.now();
    if (current) {
      const version = await pushChannelsVersion(this.db, workspaceId);
      if (superseded()) return this.forWorkspace(workspaceId);
      // Still the workspace's entry (not dropped meanwhile) and still what is stored.
      if (version === current.version && this.cache.peek(workspaceId) === current) {
        current.checkedAt = checkedAt;
        return current.view;
      }
    }
    const stored = await loadPushChannels(this.db, this.box, workspaceId);
    if (superseded() || this.closed) return this.forWorkspace(workspaceId);
    return this.install(workspaceId, stored, checkedAt).view;
  }

  /** The entry for what is stored now, keeping the providers of channels whose sealed bytes did not change. */
  private install(workspaceId: string, stored: PushChannels | null, checkedAt: number): Entry {
    const previous = this.cache.peek(workspaceId);
    const sealed = stored?.sealed ?? { fcm: null, apns: null };
    const providers = {} as Record<PushProviderName, PushProvider>;
    for (const c of PUSH_PROVIDERS) {
      const kept = previous?.providers[c];
      const unchanged = previous && (previous.sealed[c] === null ? sealed[c] === null : sealed[c] !== null && previous.sealed[c].equals(sealed[c]));
      providers[c] = unchanged && kept && !(kept instanceof SharedProvider && kept.retired) ? kept : this.build(workspaceId, c, stored);
    }
    const entry: Entry = {
      version: stored?.version ?? null,
      sealed,
      providers,
      view: { forPlatform: (p) => providers[PLATFORM_CHANNEL[p]] },
      checkedAt,
    };
    this.cache.set(workspaceId, entry);
    if (previous) this.retireAll(previous, new Set(Object.values(providers)));
    return entry;
  }

  private build(workspaceId: string, channel: PushProviderName, stored: PushChannels | null): PushProvider {
    const state = stored?.[channel];
    if (!stored || !state) return this.missing[channel];
    if (!state.readable) {
      logger.error('stored push credentials cannot be opened; sends to this channel fail until they are set again', { workspace: workspaceId, channel, why: state.error });
      return new UnconfiguredProvider(channel, CHANNEL_NAME[channel], `the stored ${CHANNEL_NAME[channel]} credentials cannot be opened (${state.error}); set them again`);
    }
    const shared = new SharedProvider(this.connect(channel, stored), this.graceMs, (p) => this.open.delete(p));
    this.open.add(shared);
    return shared;
  }

  private connect(channel: PushProviderName, stored: PushChannels): PushProvider {
    const { ca, deadlineMs } = this.opts;
    if (channel === 'fcm' && stored.fcm?.readable) {
      return new FcmProvider(stored.fcm.credentials, { endpoint: this.opts.fcmEndpoint, tokenUriRule: this.tokenUriRule, ca, deadlineMs });
    }
    if (channel === 'apns' && stored.apns?.readable) {
      const a = stored.apns.credentials;
      return new ApnsProvider({ keyP8: a.key_p8, keyId: a.key_id, teamId: a.team_id, bundleId: a.bundle_id, production: a.production }, { endpoint: this.opts.apnsEndpoint, ca, deadlineMs });
    }
    throw new Error(`no readable ${channel} credentials`);
  }

  private retireAll(entry: Entry, keep: Set<PushProvider> = new Set()): void {
    for (const p of Object.values(entry.providers)) if (p instanceof SharedProvider && !keep.has(p)) p.retire();
  }
}
