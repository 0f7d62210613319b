// The event Log's public surface for the floors above it (the handlers): the Log interface and
// what is appended to it. The implementations (embedded, JetStream) and the sinks are chosen by
// src/backends.ts.
export type { Appended, Log, NewEvent } from './event-log.js';
