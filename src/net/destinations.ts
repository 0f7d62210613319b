// Outbound destinations a tenant sets (DECISIONS §15): an FCM `token_uri` today, an SMTP host
// next. Herald connects to them from inside the operator's network, so they must not reach
// loopback, private, link-local (cloud metadata at 169.254.169.254), unspecified, multicast or
// other non-global addresses, in any spelling (IPv4-mapped IPv6 included), unless the operator
// lists them in HERALD_ALLOWED_PRIVATE_HOSTS. The rule is checked on the address a socket is
// about to connect to: `lookup` (passed to https.request, tls.connect, net.connect) filters what
// DNS answered at connect time, so a name that resolves to a public address when checked and to
// a private one when used (DNS rebinding) is still refused. Node does not call `lookup` for an
// IP-literal host, so `refusal(host)` checks those before a connection is made. Destinations the
// operator sets (HERALD_FCM_ENDPOINT, HERALD_APNS_ENDPOINT) are trusted and not checked.
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { inRanges, parseRange } from '../auth/ip-allowlist.js';

/** HERALD_ALLOWED_PRIVATE_HOSTS, parsed: host names (as a tenant writes them) and IP ranges. */
export interface AllowList {
  hosts: ReadonlySet<string>;
  ranges: ReadonlyArray<NonNullable<ReturnType<typeof parseRange>>>;
}

const NOTHING_ALLOWED: AllowList = { hosts: new Set(), ranges: [] };

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A host as written (`Example.COM.`, `[::1]`) in the one form compared: lower case, no brackets, no final dot. */
function canonicalHost(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/**
 * Entries of HERALD_ALLOWED_PRIVATE_HOSTS: an IP (`127.0.0.1`, `::1`), a CIDR (`10.0.0.0/8`,
 * `fd00::/8`) or a host name (`smtp.internal`: that name may resolve to private addresses).
 * Throws naming the first entry that is none of these.
 */
export function parseAllowList(entries: readonly string[]): AllowList {
  const hosts = new Set<string>();
  const ranges: AllowList['ranges'][number][] = [];
  for (const entry of entries) {
    const range = parseRange(entry);
    if (range) ranges.push(range);
    else if (!/[/:]/.test(entry) && !/^[\d.]+$/.test(entry) && HOST_NAME.test(canonicalHost(entry))) hosts.add(canonicalHost(entry));
    else throw new Error(`'${entry}' is not a host name, an IP address or a CIDR block`);
  }
  return { hosts, ranges };
}

/**
 * Whether an IP address is globally routable unicast: the only addresses a tenant-set destination
 * may reach by default. Everything else is refused, which covers loopback, RFC 1918, CGNAT
 * (100.64/10), link-local (169.254/16, fe80::/10), unique local (fc00::/7), unspecified,
 * multicast, broadcast, documentation and reserved ranges, and IPv6 forms that carry an IPv4
 * address another hop would translate (IPv4-mapped ones are judged as the IPv4 address they
 * map; NAT64, 6to4 and Teredo are refused). False for a string that is not an IP address.
 */
export function isGlobalAddress(address: string): boolean {
  if (!net.isIP(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

/** A destination refused by the rule: the reason a socket error or a check carries. */
export class DestinationRefused extends Error {
  readonly code = 'EDESTINATIONREFUSED';
  constructor(readonly host: string) {
    super(`${host}: a private, loopback or link-local address (HERALD_ALLOWED_PRIVATE_HOSTS)`);
  }
}

/** The rule with the operator's allow-list; one per process or thread, shared by every destination. */
export class OutboundPolicy {
  constructor(private readonly allow: AllowList = NOTHING_ALLOWED) {}

  /** Whether `host` (as the tenant wrote it) may be connected to at `address`. */
  allows(host: string, address: string): boolean {
    return isGlobalAddress(address) || this.allow.hosts.has(canonicalHost(host)) || inRanges(address, this.allow.ranges);
  }

  /**
   * The refusal of an IP-literal host that may not be reached (Node connects to those without
   * calling `lookup`); undefined for a permitted literal or a host name (checked by `lookup`).
   */
  refusal(host: string): DestinationRefused | undefined {
    const literal = canonicalHost(host);
    return net.isIP(literal) && !this.allows(literal, literal) ? new DestinationRefused(literal) : undefined;
  }

  /**
   * A `lookup` for sockets to tenant-set hosts: the addresses DNS answers, without those the rule
   * refuses; a DestinationRefused error when none is left.
   */
  readonly lookup: net.LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const allowed = addresses.filter((a) => this.allows(hostname, a.address));
      if (allowed.length === 0) return callback(new DestinationRefused(hostname), '');
      if (options.all) return callback(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}
