// A scrape at the front: this thread's metrics and every actor's (asked over the actor
// protocol, as prom-client JSON), added up per series with prom-client's cluster aggregation.
// Per-thread series carry a `thread` label, so they stay apart; the process's own figures
// (CPU, memory, the front's heap and GC) come from the front alone.
import { AggregatorRegistry, collectDefaultMetrics, Registry } from 'prom-client';
import { registry } from './index.js';

export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** What an actor answers when the front asks for its metrics. */
export const ownMetrics = (): Promise<MetricsJson> => registry.getMetricsAsJSON();

/** The process-wide figures (prom-client's defaults), in a registry apart: they are not added up across threads. */
const processRegistry = new Registry();
let processCollected = false;

/**
 * The Prometheus text of the whole process: the front's metrics and `actors`' (each actor's
 * JSON, from those that answered), then the process figures.
 */
export async function scrapeText(actors: MetricsJson[]): Promise<string> {
  if (!processCollected) {
    processCollected = true;
    collectDefaultMetrics({ register: processRegistry });
    // Gauges named like counters (Prometheus's linter refuses them), each the sum of the series by `type` kept beside it.
    for (const kind of ['handles', 'requests', 'resources']) processRegistry.removeSingleMetric(`nodejs_active_${kind}_total`);
  }
  const merged = AggregatorRegistry.aggregate([await ownMetrics(), ...actors]);
  return (await merged.metrics()) + (await processRegistry.metrics());
}

export const METRICS_CONTENT_TYPE = registry.contentType;
