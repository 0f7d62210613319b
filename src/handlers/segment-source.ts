// The Segment-compatible source (README, Segment-compatible source; docs/ingest.md): each
// message is mapped to a track or an identify (domain/segment-source.ts) and goes the way
// /track and /identify go: the same checks, the same Log append and campaign triggers, the same
// messageId deduplication. Answered 200 `{success: true}` once everything is durable.
import type { Ctx, Handler, Handlers } from './context.js';
import { json, type Reply } from './reply.js';
import { check, compileBody } from './validation.js';
import { appendTracks, checkTrack, type Checked } from './events.js';
import { identifyAll } from './people.js';
import { DomainError } from '../domain/errors.js';
import { identifyInput, type IdentifyInput } from '../domain/identify.js';
import { IDENTIFYING_TYPES, mapMessage, type Envelope, type SourceMessage } from '../domain/segment-source.js';
import { grants } from '../auth/permissions.js';
import { MESSAGE_TYPES, type MessageType } from '../../schemas/segment-source.js';

/** Segment's limit on one message inside a batch (the single routes' body limit is the same, in routes.ts). */
const MESSAGE_BYTES = 32 * 1024;
const PEOPLE_PERMISSIONS = ['people:write', 'people:identify'];

const validators = Object.fromEntries(Object.entries(MESSAGE_TYPES).map(([type, schema]) => [type, compileBody(schema)])) as Record<MessageType, ReturnType<typeof compileBody>>;
const isMessageType = (t: unknown): t is MessageType => typeof t === 'string' && Object.hasOwn(MESSAGE_TYPES, t);

/** Messages mapped and checked by every rule that touches no store, split by the path they take. */
interface Sorted {
  tracks: Checked[];
  identifies: IdentifyInput[];
  refused: { index: number; error: string }[];
}

function sort(messages: readonly { type: MessageType; message: SourceMessage }[], env: Envelope): Sorted {
  const out: Sorted = { tracks: [], identifies: [], refused: [] };
  for (const [i, { type, message }] of messages.entries()) {
    try {
      const mapped = mapMessage(type, message, env);
      if (mapped.kind === 'track') out.tracks.push(checkTrack(mapped.body));
      else out.identifies.push(identifyInput(mapped.body));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      out.refused.push({ index: i, error: err.message });
    }
  }
  return out;
}

/** Identifies first (a campaign a track fires then reads the traits sent with it), then the tracks as one append. */
async function write(ctx: Ctx, sorted: Sorted): Promise<void> {
  if (sorted.identifies.length > 0) await identifyAll(ctx, sorted.identifies);
  if (sorted.tracks.length > 0) await appendTracks(ctx, sorted.tracks);
}

const envelope = (body: { context?: Record<string, unknown>; sentAt?: string }): Envelope => ({ context: body.context, sentAt: body.sentAt, receivedAt: Date.now() });

/** One message on its own route: refused whole (400) or written whole (200). */
const single =
  (type: MessageType): Handler =>
  async (ctx) => {
    if (IDENTIFYING_TYPES.has(type) && !grants(ctx.key!.permissions, PEOPLE_PERMISSIONS)) return json(403, { success: false, error: lacksPeople(type) });
    const message = ctx.body as SourceMessage;
    const sorted = sort([{ type, message }], { receivedAt: Date.now() });
    const refused = sorted.refused[0];
    if (refused) return json(400, { success: false, error: refused.error });
    await write(ctx, sorted);
    return json(200, { success: true });
  };

const batch: Handler<'POST /v1/batch'> = async (ctx) => {
  const refused: { index: number; error: string }[] = [];
  const accepted: { type: MessageType; message: SourceMessage; index: number }[] = [];
  const mayIdentify = grants(ctx.key!.permissions, PEOPLE_PERMISSIONS);
  for (const [index, entry] of ctx.body.batch.entries()) {
    const problem = refusal(entry, mayIdentify, ctx.bodyBytes > MESSAGE_BYTES);
    if (problem) refused.push({ index, error: problem });
    else accepted.push({ type: (entry as { type: MessageType }).type, message: entry as SourceMessage, index });
  }
  const sorted = sort(accepted, envelope(ctx.body));
  // sort() numbered its refusals by position among the accepted: back to the batch's indexes.
  for (const r of sorted.refused) refused.push({ index: accepted[r.index]!.index, error: r.error });
  await write(ctx, sorted);
  if (refused.length === 0) return json(200, { success: true });
  refused.sort((a, b) => a.index - b.index);
  return batchRefusal(refused, ctx.body.batch.length);
};

/** Why a batch entry is refused before it is mapped, or null. `mayBeLarge`: the body as sent is over a message's limit, so one entry may be (within a body under it, every message as sent is: no entry is serialized again to be measured). */
function refusal(entry: unknown, mayIdentify: boolean, mayBeLarge: boolean): string | null {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return 'A message must be an object';
  const type = (entry as { type?: unknown }).type;
  if (!isMessageType(type)) return `Unknown message type ${JSON.stringify(type)}: one of ${Object.keys(MESSAGE_TYPES).join(', ')}`;
  if (IDENTIFYING_TYPES.has(type) && !mayIdentify) return lacksPeople(type);
  if (mayBeLarge && Buffer.byteLength(JSON.stringify(entry)) > MESSAGE_BYTES) return `The message is over ${MESSAGE_BYTES} bytes`;
  try {
    check(validators[type], entry, 'message');
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return err.message;
  }
  return null;
}

const lacksPeople = (type: string) => `The key lacks ${PEOPLE_PERMISSIONS.join(' or ')}, which ${type} needs`;

function batchRefusal(refused: { index: number; error: string }[], total: number): Reply {
  const stored = total - refused.length;
  const error = `${refused.length} of ${total} messages refused (indexes ${refused.slice(0, 10).map((r) => r.index).join(', ')}${refused.length > 10 ? ', …' : ''}); the other ${stored} are stored`;
  return json(400, { success: false, error, errors: refused });
}

export const sourceHandlers = {
  'POST /v1/identify': single('identify'),
  'POST /v1/track': single('track'),
  'POST /v1/page': single('page'),
  'POST /v1/screen': single('screen'),
  'POST /v1/group': single('group'),
  'POST /v1/alias': single('alias'),
  'POST /v1/batch': batch,
} satisfies Handlers;
