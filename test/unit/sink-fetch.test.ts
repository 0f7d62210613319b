// How many messages a JetStream sink fetches next (eventlog/event-sink.ts fetchSize): about
// SINK_FETCH_BYTES at the sizes of the batch it just took, between 1 and 200 messages (a sink
// starts with as many full messages as the bytes hold, and keeps its size across empty fetches).
import t from 'tap';
import { fetchSize } from '../../src/eventlog/event-sink.js';
import { SINK_FETCH_BYTES } from '../../src/eventlog/jetstream.js';

const KB = 1024;

t.equal(fetchSize(Array(50).fill(2 * KB)), 200, 'small messages (ticks of single tracks): the most messages');
const big = fetchSize(Array(8).fill(512 * KB));
t.equal(big, SINK_FETCH_BYTES / (512 * KB), 'full 512 KB messages: as many as fit the bytes');
t.ok(big * 512 * KB <= SINK_FETCH_BYTES, 'which keeps the next fetch within the bytes');
t.equal(fetchSize([6 * SINK_FETCH_BYTES]), 1, 'a message larger than the bytes: one at a time');
t.equal(fetchSize([512 * KB, 2 * KB, 2 * KB, 2 * KB]), Math.floor((SINK_FETCH_BYTES * 4) / (518 * KB)), 'mixed sizes: by their mean');
