// Client IPs and key allowlists (README, Permissions).
import { inRanges, parseIp, parseRange, type Range } from '../domain/ip-ranges.js';

export function malformedEntries(entries: readonly string[]): string[] {
  return entries.filter((e) => parseRange(e) === null);
}

/**
 * An X-Forwarded-For hop as the address it names, in canonical form; null when it names none.
 * Proxies write `203.0.113.5:1234` and `[2001:db8::1]:443` too: a port (after an IPv4 address
 * or a bracketed IPv6 one) and the brackets are dropped. Anything else that is not a strict IP
 * (`203.000.113.005`, a zone id, `garbage`) is null: as text it would be a bucket key of its
 * own, a fresh budget for each spelling of one address.
 */
export function parseHop(hop: string): string | null {
  const m = /^\[([^\]]*)\](?::\d{1,5})?$/.exec(hop) ?? /^([\d.]+):\d{1,5}$/.exec(hop);
  const text = m ? m[1]! : hop;
  if (text.includes('%')) return null;
  return parseIp(text)?.toString() ?? null;
}

/**
 * The client address: the socket peer, or, when the peer is a trusted proxy, the right-most
 * X-Forwarded-For hop that is not itself a trusted proxy (the left-most when all are). The
 * hop is the address it names (`parseHop`); one that names none stands for no client, so the
 * peer (the proxy) is the client: whatever a client writes there, it never gets a budget of
 * its own.
 */
export function clientIp(peer: string, forwardedFor: string, trusted: readonly (Range | null)[]): string {
  const peerAddr = parseIp(peer)?.toString() ?? peer;
  if (trusted.length === 0 || !inRanges(peerAddr, trusted) || forwardedFor === '') return peerAddr;
  const hops = forwardedFor.split(',').map((h) => h.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseHop(hops[i]!);
    if (hop === null) return peerAddr;
    if (!inRanges(hop, trusted) || i === 0) return hop;
  }
  return peerAddr;
}
