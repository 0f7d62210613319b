// An actor's channel resources, one per kind: connection pools, each made by the channel that
// uses it the first time it is asked for (email's SMTP pools: channels/email/pools.ts) and
// closed with the actor, and what the actor makes itself and hands in (push's engine, which holds
// the actor's send counters and provider shares). The send path and the handlers carry this one
// holder, so a channel with resources of its own adds no field anywhere else.
import type { MessagingSettings } from './settings.js';

/** A kind of resource: how a channel makes it from the server's settings (absent: the actor hands it in). */
export interface PoolKind<T> {
  readonly name: string;
  make?(settings: MessagingSettings): T & { close(): void };
}

export class ChannelPools {
  private readonly held = new Map<PoolKind<unknown>, unknown>();
  private readonly made: { close(): void }[] = [];

  constructor(private readonly settings: MessagingSettings) {}

  /** Hands in the actor's own resource of that kind (made with what only the actor has); the actor ends it. */
  provide<T>(kind: PoolKind<T>, resource: T): this {
    this.held.set(kind, resource);
    return this;
  }

  /** This actor's resource of that kind, a pool made now if it is the first use. */
  of<T>(kind: PoolKind<T>): T {
    // Stored under its own kind only, so what is found there is that kind's T.
    if (this.held.has(kind)) return this.held.get(kind) as T;
    if (!kind.make) throw new Error(`the actor has not handed in its ${kind.name}`);
    const made = kind.make(this.settings);
    this.held.set(kind, made);
    this.made.push(made);
    return made;
  }

  /** Closes the pools made here. */
  close(): void {
    for (const p of this.made.splice(0)) p.close();
    this.held.clear();
  }
}
