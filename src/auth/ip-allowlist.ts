// Client IPs and key allowlists (README, Permissions).
import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * Only dotted-quad decimal IPv4 counts: ipaddr.js also reads shorthand, octal and hex forms
 * ('127.1', '010.0.0.1'), which would make an entry silently mean another address.
 */
function isStrictIp(text: string): boolean {
  return text.includes(':') ? ipaddr.IPv6.isValid(text) : ipaddr.IPv4.isValidFourPartDecimal(text);
}

/** Parses an IP or CIDR; null when malformed (a malformed entry never matches). */
export function parseRange(entry: string): Range | null {
  try {
    const slash = entry.indexOf('/');
    if (slash >= 0) {
      if (!isStrictIp(entry.slice(0, slash)) || !/^\d{1,3}$/.test(entry.slice(slash + 1))) return null;
      const [addr, bits] = ipaddr.parseCIDR(entry);
      // An IPv4-mapped IPv6 block is an IPv4 block when it lies within ::ffff:0:0/96.
      if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) return [normalize(addr), bits - 96];
      return [addr, bits];
    }
    if (!isStrictIp(entry)) return null;
    const addr = normalize(ipaddr.parse(entry));
    return [addr, addr.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return null;
  }
}

function normalize(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  return isStrictIp(text) ? normalize(ipaddr.parse(text)) : null;
}

export function inRanges(ip: string, ranges: readonly (Range | null)[]): boolean {
  const addr = parseIp(ip);
  if (!addr) return false;
  for (const r of ranges) {
    if (r && r[0].kind() === addr.kind() && addr.match(r)) return true;
  }
  return false;
}

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
