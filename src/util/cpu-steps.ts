// CPU-heavy steps of requests (verifying or parsing a megabyte body) run one per turn of the
// event loop, in order: requests that arrive together would otherwise run theirs back to back,
// holding up the I/O of every other request of the thread for all of them. In between, the
// thread serves that I/O.

let last: Promise<unknown> = Promise.resolve();

/** Runs `step` once the steps before it have run, in a turn of the event loop of its own. */
export function cpuStep<T>(step: () => T): Promise<T> {
  // An immediate set while immediates run waits for the next turn, after its I/O.
  const run = last.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(step);
  last = run.catch(() => undefined);
  return run;
}
