// The actor's provider sends, shared by the workspaces it owns: at most `total` recipients are
// with the providers at once, and at most `perWorkspace` of one workspace's. A workspace whose
// provider is slow (a token endpoint that drips, answers held until the deadline) fills its own
// share and nothing more; a freed slot goes to the waiting workspaces in turn (util/turns.ts).
import { Turns } from '../util/turns.js';

export class SendShares {
  private used = 0;
  private readonly turns: Turns<string>;
  /** Sends waiting for a slot, per workspace, first come first served within one. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(
    private readonly total: number,
    perWorkspace: number,
  ) {
    this.turns = new Turns(perWorkspace);
  }

  /** Runs `fn` in one of the workspace's slots. */
  async run<T>(workspaceId: string, fn: () => Promise<T>): Promise<T> {
    await this.acquire(workspaceId);
    try {
      return await fn();
    } finally {
      this.release(workspaceId);
    }
  }

  private acquire(workspaceId: string): Promise<void> | undefined {
    // A slot free and the workspace under its share: nobody waits ahead of it, since a freed
    // slot is handed at once to any waiting workspace that has room.
    if (this.used < this.total && this.turns.hasRoom(workspaceId) && !this.waiting.has(workspaceId)) {
      this.used++;
      this.turns.start(workspaceId);
      return undefined;
    }
    return new Promise<void>((resolve) => {
      const queue = this.waiting.get(workspaceId);
      if (queue) queue.push(resolve);
      else {
        this.waiting.set(workspaceId, [resolve]);
        this.turns.join(workspaceId);
      }
    });
  }

  private release(workspaceId: string): void {
    this.used--;
    this.turns.done(workspaceId);
    while (this.used < this.total) {
      const next = this.turns.next();
      if (next === undefined) return;
      const queue = this.waiting.get(next)!;
      const resolve = queue.shift()!;
      if (queue.length === 0) {
        this.waiting.delete(next);
        this.turns.leave(next);
      }
      this.used++;
      resolve();
    }
  }
}
