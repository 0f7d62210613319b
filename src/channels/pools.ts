// An actor's connection pools, one per kind, each made by the channel that uses it the first time
// it is asked for (email's SMTP pools: channels/email/transport.ts), and closed with the actor.
// The send path and the handlers carry this one holder, so a channel with pools of its own adds
// no field anywhere else.
import type { MessagingSettings } from './settings.js';

/** A kind of pool: how a channel makes it from the server's settings. */
export interface PoolKind<T extends { close(): void }> {
  readonly name: string;
  make(settings: MessagingSettings): T;
}

export class ChannelPools {
  private readonly made = new Map<PoolKind<{ close(): void }>, { close(): void }>();

  constructor(private readonly settings: MessagingSettings) {}

  /** This actor's pool of that kind, made now if it is the first use. */
  of<T extends { close(): void }>(kind: PoolKind<T>): T {
    const found = this.made.get(kind);
    // Stored under its own kind only, so what is found there is that kind's T.
    if (found) return found as T;
    const made = kind.make(this.settings);
    this.made.set(kind, made);
    return made;
  }

  close(): void {
    for (const p of this.made.values()) p.close();
    this.made.clear();
  }
}
