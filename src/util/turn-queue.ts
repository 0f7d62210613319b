// Work of many keys (workspaces) sharing a few slots (store connections): one piece of a key's
// work at a time, at most `slots` of all keys' at once, keys served in turn (util/turns.ts), and
// a short line per key. A key with much work waits behind its own, never in front of another's.

import { Turns } from './turns.js';

/** Why a piece of work did not run: the key's line was full, or its turn did not come by the deadline. */
export class TurnRefused extends Error {
  constructor(readonly why: 'line_full' | 'deadline') {
    super(why === 'line_full' ? 'too much work of this key is waiting' : 'its turn did not come in time');
  }
}

export class TurnQueue<K> {
  private readonly turns = new Turns<K>(1);
  private readonly lines = new Map<K, (() => void)[]>();
  private running = 0;

  constructor(private readonly opts: { slots: number; linePerKey: number }) {}

  /** Whether a piece of the key's would be refused now for its full line (what refusing it early would spare). */
  lineFull(key: K): boolean {
    return (this.lines.get(key)?.length ?? 0) >= this.opts.linePerKey;
  }

  /**
   * Runs `work` in the key's turn and answers what it answers. Throws TurnRefused, without
   * running it, when `linePerKey` of the key's are already waiting, or when its turn has not
   * come by `deadline` (ms since the epoch).
   */
  async run<T>(key: K, deadline: number, work: () => Promise<T>): Promise<T> {
    const line = this.lines.get(key);
    if (!line && this.running < this.opts.slots && this.turns.hasRoom(key)) this.begin(key);
    else await this.wait(key, line, deadline);
    try {
      return await work();
    } finally {
      this.running--;
      this.turns.done(key);
      this.pump();
    }
  }

  private begin(key: K): void {
    this.turns.start(key);
    this.running++;
  }

  private wait(key: K, line: (() => void)[] | undefined, deadline: number): Promise<void> {
    if (line && line.length >= this.opts.linePerKey) return Promise.reject(new TurnRefused('line_full'));
    return new Promise<void>((resolve, reject) => {
      const queued = line ?? [];
      const go = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        queued.splice(queued.indexOf(go), 1);
        if (queued.length === 0) this.forget(key);
        reject(new TurnRefused('deadline'));
      }, deadline - Date.now());
      queued.push(go);
      if (!line) {
        this.lines.set(key, queued);
        this.turns.join(key);
      }
    });
  }

  private forget(key: K): void {
    this.lines.delete(key);
    this.turns.leave(key);
  }

  /** Free slots go to the keys in line, in turn. */
  private pump(): void {
    while (this.running < this.opts.slots) {
      const key = this.turns.next();
      if (key === undefined) return;
      const line = this.lines.get(key)!;
      const go = line.shift()!;
      if (line.length === 0) this.forget(key);
      this.running++;
      go();
    }
  }
}
