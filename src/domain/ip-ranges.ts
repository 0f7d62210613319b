// IP addresses and CIDR ranges as key allowlists, trusted proxies (README, Permissions) and the
// operator's private-host exceptions (docs/isolation.md) write them.
import ipaddr from 'ipaddr.js';

export type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

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

/** A strict IP (an IPv4-mapped IPv6 one as its IPv4 address); null for anything else. */
export function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
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
