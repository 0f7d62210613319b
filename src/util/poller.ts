// A task run every `everyMs`, never two at once: a tick still running when the next is due is
// left to finish (that tick is skipped). Failures are logged and the polling goes on.
import { logger } from '../logger.js';

export class Poller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly everyMs: number,
    /** Names the task in the log, e.g. `scheduled sends`. */
    private readonly what: string,
    private readonly tick: () => Promise<void>,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick()
        .catch((err) => logger.error(`${this.what}: poll failed`, { err }))
        .finally(() => (this.running = undefined));
    }, this.everyMs);
  }

  /** No tick starts after this; resolves when the one running (if any) has ended. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
