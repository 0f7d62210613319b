// What every provider's callback parsing shares (docs/channels.md, Callbacks): the signed
// request, fresh timestamps, bounded ids and details, JSON that the store can hold.
import { timingSafeEqual } from 'node:crypto';
import { unstorableText } from '../domain/storable-text.js';

/** A provider callback as received: its raw body (what is signed) and its headers. */
export interface CallbackRequest {
  raw: Uint8Array;
  header(name: string): string | undefined;
}

export const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** A signed timestamp (seconds) is accepted this far from now, either way, as Mailgun advises. */
export const FRESH_SECONDS = 300;
/** Seconds since the epoch, within FRESH_SECONDS of now; undefined otherwise. */
export function freshTimestamp(text: unknown): number | undefined {
  if (typeof text !== 'string' || !/^[0-9]{1,12}$/.test(text)) return undefined;
  const seconds = Number(text);
  return Math.abs(Date.now() / 1000 - seconds) <= FRESH_SECONDS ? seconds : undefined;
}

/** Provider ids are kept in an index: longer ones are not a provider's. */
const MAX_ID = 255;
export const idText = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= MAX_ID ? v : undefined);
/** A detail kept on the message (a click's URL, a bounce's reason): text, cut to a bounded length. */
export const detail = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v.slice(0, 2_048) : undefined);
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON body, and whether every string in it can be stored; undefined when it is not JSON. */
export function parseJson(raw: Uint8Array): { body: unknown; storable: boolean } | undefined {
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
  try {
    const body: unknown = JSON.parse(text);
    return { body, storable: unstorableText(text, body) === null };
  } catch {
    return undefined;
  }
}
