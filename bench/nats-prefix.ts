// A JetStream prefix of the run's own, for a Herald the bench starts with NATS_URL: the stream
// (`<prefix>-events`) and the KV buckets Herald makes outlive it, and a run inheriting an
// earlier run's backlog (or its rate-limit counters) measures that instead of itself. What
// was made under the prefix is removed after the run.
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

export const runPrefix = (): string => `bench-${Date.now().toString(36)}`;

/** Deletes the streams named for `prefix`: its event stream and its KV buckets (streams `KV_<prefix>-…`). Returns their names. */
export async function removePrefix(url: string, prefix: string): Promise<string[]> {
  const nc = await connect({ servers: url, name: 'herald-bench' });
  try {
    const jsm = await jetstreamManager(nc);
    const mine: string[] = [];
    for await (const name of jsm.streams.names()) if (name.startsWith(`${prefix}-`) || name.startsWith(`KV_${prefix}-`)) mine.push(name);
    for (const name of mine) await jsm.streams.delete(name);
    return mine;
  } finally {
    await nc.close();
  }
}
