// How far a thread's V8 heap may grow past what it holds live before its next full GC.
//
// V8's own factor goes up to 4x. Under a batch load Herald's live heaps are small (25-50 MB a
// thread) but much of its garbage lives long enough to be promoted (a request's events wait
// for their durable append, a sink's batch for its statement), so each heap reached 3-4x its
// live size between full GCs and Herald's RSS went past 400 MB on JetStream (bench/HISTORY.md,
// issue 12, fifth round). A smaller factor means more full GCs (mostly concurrent marking).
import { setFlagsFromString } from 'node:v8';

/**
 * Sets the growth factor to 1 + percent/100 for every heap of the process (the flag is
 * process-wide and read at each full GC, so worker threads started later are bound too);
 * 0 leaves V8's own factor, which varies with the heap's size and GC speed.
 */
export function boundHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
