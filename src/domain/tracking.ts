// Herald's own engagement tracking (docs/tracking.md), the pure rules: which links of a message
// are wrapped and how (html through a real parser, htmlparser2; SMS text by its URLs), where the
// open pixel goes, and which opens and clicks are a machine's rather than a person's.
import { Parser } from 'htmlparser2';

/** A workspace's `settings.tracking`; what a stored workspace lacks reads as on. */
export interface TrackingSettings {
  opens: boolean;
  clicks: boolean;
}

export const DEFAULT_TRACKING: TrackingSettings = { opens: true, clicks: true };

export const trackingOf = (stored: Partial<TrackingSettings> | null | undefined): TrackingSettings => ({ ...DEFAULT_TRACKING, ...(stored ?? {}) });

/**
 * Answers the tracked URL for a link's target, or undefined to leave it as it is (the
 * message's unsubscribe and preference links, anything but http and https).
 */
export type Wrap = (url: string) => string | undefined;

/** The attribute a link is marked with to be left untracked. */
const TRACK_OFF_ATTRIBUTE = 'data-herald-track';

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

const isWebUrl = (url: string): boolean => /^https?:\/\//i.test(url.trim());

/**
 * The html with each `<a href>` / `<area href>` the wrapper takes replaced by its tracked URL
 * (links marked `data-herald-track="off"` kept), and `pixel` (an `<img>`) before `</body>`, or
 * at the end without one. Only the attributes replaced change: the rest is the source as it was.
 */
export function wrapHtml(html: string, wrap: Wrap | undefined, pixel: string | undefined): string {
  const edits: { from: number; to: number; text: string }[] = [];
  let hrefs: { from: number; to: number; value: string }[] = [];
  let bodyEnd = -1;
  const parser = new Parser(
    {
      onattribute(name, value) {
        // The attribute's source, from its name to the character after its value (or closing quote).
        if (name === 'href') hrefs.push({ from: parser.startIndex, to: parser.endIndex, value });
      },
      onopentag(name, attribs) {
        const href = hrefs[0];
        hrefs = [];
        if (!wrap || !href || (name !== 'a' && name !== 'area')) return;
        if (attribs[TRACK_OFF_ATTRIBUTE]?.trim().toLowerCase() === 'off') return;
        const tracked = isWebUrl(href.value) ? wrap(href.value.trim()) : undefined;
        if (tracked !== undefined) edits.push({ from: href.from, to: href.to, text: `href="${escapeAttr(tracked)}"` });
      },
      onclosetag(name, implied) {
        if (name === 'body' && !implied) bodyEnd = parser.startIndex;
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  if (pixel !== undefined) edits.push(bodyEnd >= 0 ? { from: bodyEnd, to: bodyEnd, text: pixel } : { from: html.length, to: html.length, text: pixel });
  edits.sort((a, b) => a.from - b.from);
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += html.slice(at, e.from) + e.text;
    at = e.to;
  }
  return out + html.slice(at);
}

/** The 1×1 image an email's opens are counted by. */
export const pixelTag = (url: string): string =>
  `<img src="${escapeAttr(url)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" aria-hidden="true">`;

// A URL in text: up to whitespace or a character no URL ends a sentence with.
const TEXT_URL = /https?:\/\/[^\s<>"']+/gi;
const TRAILING = /[.,;:!?)\]}]+$/;

/** Plain text (an SMS) with each http(s) URL the wrapper takes replaced; sentence punctuation after a URL is kept outside it. */
export function wrapText(text: string, wrap: Wrap): string {
  return text.replace(TEXT_URL, (found) => {
    const url = found.replace(TRAILING, '');
    const tracked = wrap(url);
    return tracked === undefined ? found : tracked + found.slice(url.length);
  });
}

/** Within this time of the send, an open or a click is a machine's (a scanner, a proxy's prefetch): no person reads that fast. */
export const MACHINE_WINDOW_MS = 2_000;

/**
 * User agents of prefetchers and link scanners. Apple Mail Privacy Protection's prefetch sends a
 * bare `Mozilla/5.0`; the others name themselves. Gmail's and Yahoo's image proxies fetch when
 * the person opens the mail, so they count as a person's open.
 */
const MACHINE_AGENTS = /^Mozilla\/5\.0$|bot\b|crawler|spider|scanner|barracuda|mimecast|proofpoint|safelinks|urldefense|python-requests|curl\/|wget\//i;

/** Whether an open or a click at `at` (ms) of a message sent at `sentAt` (ms; null: unknown), with user agent `agent`, is a machine's. */
export function isMachine(at: number, sentAt: number | null, agent: string | undefined): boolean {
  if (sentAt !== null && at - sentAt < MACHINE_WINDOW_MS) return true;
  return agent === undefined || agent.trim() === '' || MACHINE_AGENTS.test(agent.trim());
}
