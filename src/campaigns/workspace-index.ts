// A per-workspace index an actor keeps of its campaigns (event triggers, goals, waits for
// events): loaded at start, reloaded for a workspace when one of its campaigns changes on this
// actor, and in whole every REFRESH_MS (what other replicas changed), the workspaces this actor
// owns only. Reading it is one map lookup.
import { Poller } from '../util/poller.js';
import { groupBy } from '../util/group-by.js';
import { logger } from '../logger.js';

/** How often the whole index is reloaded (changes made on other replicas). */
const REFRESH_MS = 5_000;

/** What an index is built of: campaign rows of one workspace or of all, each naming its workspace. */
interface IndexSource<R extends { workspace_id: string }, T> {
  read: (workspaceId?: string) => Promise<R[]>;
  /** A workspace's entry, from its rows (at least one). */
  build: (rows: R[]) => T;
}

export class WorkspaceIndex<R extends { workspace_id: string }, T> {
  private index = new Map<string, T>();
  /** Workspaces reloaded on their own since the last whole reload began. */
  private readonly touched = new Set<string>();
  private readonly poller: Poller;

  constructor(
    /** Names the index in the log. */
    private readonly what: string,
    private readonly source: IndexSource<R, T>,
    /** Whether this actor owns the workspace. */
    private readonly owns: (workspaceId: string) => boolean,
  ) {
    this.poller = new Poller(REFRESH_MS, what, () => this.reloadAll());
  }

  get(workspaceId: string): T | undefined {
    return this.index.get(workspaceId);
  }

  async start(): Promise<void> {
    await this.reloadAll();
    this.poller.start();
  }

  stop(): Promise<void> {
    return this.poller.stop();
  }

  /**
   * A campaign of the workspace changed here: its entry is read again before the change is
   * answered. Never rejects: the change is committed, and a failed read is made good by the
   * next whole reload.
   */
  async changed(workspaceId: string): Promise<void> {
    this.touched.add(workspaceId);
    try {
      const rows = await this.source.read(workspaceId);
      if (rows.length > 0) this.index.set(workspaceId, this.source.build(rows));
      else this.index.delete(workspaceId);
    } catch (err) {
      logger.warn(`${this.what}: reloading a workspace failed; the next reload makes it good`, { workspaceId, err });
    }
  }

  private async reloadAll(): Promise<void> {
    this.touched.clear();
    const mine = (await this.source.read()).filter((r) => this.owns(r.workspace_id));
    const index = new Map([...groupBy(mine, (r) => r.workspace_id)].map(([ws, rows]) => [ws, this.source.build(rows)]));
    // A workspace changed while the whole was read keeps what its own reload put in.
    for (const ws of this.touched) {
      const entry = this.index.get(ws);
      if (entry) index.set(ws, entry);
      else index.delete(ws);
    }
    this.index = index;
  }
}
