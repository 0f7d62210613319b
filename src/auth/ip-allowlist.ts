// Client IPs and key allowlists (INTERFACE 5.1.5, DECISIONS §8).
import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses an IP or CIDR; null when malformed (a malformed entry never matches). */
export function parseRange(entry: string): Range | null {
  try {
    if (entry.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(entry);
      return [normalize(addr), addr.kind() === 'ipv6' && normalize(addr).kind() === 'ipv4' ? bits - 96 : bits];
    }
    if (!ipaddr.isValid(entry)) return null;
    const addr = normalize(ipaddr.parse(entry));
    return [addr, addr.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return null;
  }
}

function normalize(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

export function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  return ipaddr.isValid(text) ? normalize(ipaddr.parse(text)) : null;
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
 * The client address: the socket peer, or, when the peer is a trusted proxy, the right-most
 * X-Forwarded-For hop that is not itself a trusted proxy.
 */
export function clientIp(peer: string, forwardedFor: string, trusted: readonly (Range | null)[]): string {
  const peerAddr = parseIp(peer)?.toString() ?? peer;
  if (trusted.length === 0 || !inRanges(peerAddr, trusted) || forwardedFor === '') return peerAddr;
  const hops = forwardedFor.split(',').map((h) => h.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!inRanges(hop, trusted)) return parseIp(hop)?.toString() ?? hop;
  }
  return hops[0] ? parseIp(hops[0])?.toString() ?? hops[0] : peerAddr;
}
