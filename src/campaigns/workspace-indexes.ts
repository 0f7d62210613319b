// An actor's in-memory index of what its workspaces' campaigns listen for (event triggers,
// waits for events): loaded at start, a workspace read again when one of its campaigns changes
// on this actor, and the whole every REFRESH_MS (what other replicas changed). So an event that
// nothing listens to costs one map lookup.
import { Poller } from '../util/poller.js';
import { logger } from '../logger.js';

/** How often the whole index is reloaded (changes made on other replicas). */
const REFRESH_MS = 5_000;

export class WorkspaceIndexes<V> {
  private index = new Map<string, V>();
  /** Workspaces reloaded on their own since the last whole reload began. */
  private readonly touched = new Set<string>();
  private readonly poller: Poller;

  constructor(
    /** Names the index in the log. */
    private readonly what: string,
    /** The entries of one workspace, or of all, by workspace (none: nothing listens there). */
    private readonly load: (workspaceId?: string) => Promise<Map<string, V>>,
    /** Whether this actor owns the workspace. */
    private readonly owns: (workspaceId: string) => boolean,
  ) {
    this.poller = new Poller(REFRESH_MS, what, () => this.reloadAll());
  }

  get(workspaceId: string): V | undefined {
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
      const entry = (await this.load(workspaceId)).get(workspaceId);
      if (entry) this.index.set(workspaceId, entry);
      else this.index.delete(workspaceId);
    } catch (err) {
      logger.warn(`${this.what}: reloading a workspace failed; the next reload makes it good`, { workspaceId, err });
    }
  }

  private async reloadAll(): Promise<void> {
    this.touched.clear();
    const index = new Map([...(await this.load())].filter(([ws]) => this.owns(ws)));
    // A workspace changed while the whole was read keeps what its own reload put in.
    for (const ws of this.touched) {
      const mine = this.index.get(ws);
      if (mine) index.set(ws, mine);
      else index.delete(ws);
    }
    this.index = index;
  }
}
