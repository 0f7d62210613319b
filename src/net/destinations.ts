// Outbound destinations a tenant sets (docs/isolation.md): an FCM `token_uri`, an SMTP host. Herald
// connects to them from inside the operator's network, so they must not reach loopback, private,
// link-local (cloud metadata at 169.254.169.254), unspecified, multicast or other non-global
// addresses, in any spelling (IPv4-mapped IPv6 included), nor (SMTP) a port other than the
// protocol's, unless the operator lists them in HERALD_ALLOWED_PRIVATE_HOSTS. The rule is checked
// on the address a socket is about to connect to: `lookupFor(port)` (passed to https.request,
// tls.connect, net.connect) filters what DNS answered at connect time, so a name that resolves to
// a public address when checked and to a private one when used (DNS rebinding) is still refused.
// Node does not call `lookup` for an IP-literal host, so `refusal(host, port)` checks those before
// a connection is made; `problem(host, port)` judges a destination when it is set. Destinations
// the operator sets (HERALD_FCM_ENDPOINT, HERALD_APNS_ENDPOINT) are trusted and not checked.
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { inRanges } from '../domain/ip-ranges.js';
import { canonicalHost, type AllowList } from '../domain/private-hosts.js';

export type { AllowList } from '../domain/private-hosts.js';

const NOTHING_ALLOWED: AllowList = { entries: [] };

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

/** A destination refused by the rule: the reason a socket error carries (for the operator's logs). */
export class DestinationRefused extends Error {
  readonly code = 'EDESTINATIONREFUSED';
  constructor(readonly host: string) {
    super(`${host}: a private, loopback or link-local address, or a port not allowed (HERALD_ALLOWED_PRIVATE_HOSTS)`);
  }
}

/** How long a name may take to resolve when a destination is judged before use. */
const RESOLVE_TIMEOUT_MS = 5_000;

/** What the rule says of one address of a destination: reachable, or refused for its port or for the address. */
type Verdict = 'allowed' | 'port' | 'address';

/** The rule with the operator's allow-list; one per process or thread, shared by every destination of a kind. */
export class OutboundPolicy {
  /**
   * `openPorts`: the only ports a global address may be reached on without an entry (SMTP: 25,
   * 465, 587, 2525; a service on another port of a public host is not a relay); every port when
   * undefined.
   */
  constructor(
    private readonly allow: AllowList = NOTHING_ALLOWED,
    private readonly openPorts?: ReadonlySet<number>,
  ) {}

  private verdict(host: string, address: string, port: number): Verdict {
    const name = canonicalHost(host);
    const listed = this.allow.entries.some((e) => (e.port === undefined || e.port === port) && ('host' in e ? e.host === name : inRanges(address, [e.range])));
    if (listed) return 'allowed';
    if (!isGlobalAddress(address)) return 'address';
    return !this.openPorts || this.openPorts.has(port) ? 'allowed' : 'port';
  }

  /** Whether a socket to `host` (as the tenant wrote it) may connect to `address` on `port`. */
  allows(host: string, address: string, port: number): boolean {
    return this.verdict(host, address, port) === 'allowed';
  }

  /**
   * The refusal of an IP-literal host that may not be reached on `port` (Node connects to those
   * without calling `lookup`); undefined for a permitted literal or a host name (checked by `lookup`).
   */
  refusal(host: string, port: number): DestinationRefused | undefined {
    const literal = canonicalHost(host);
    return net.isIP(literal) && !this.allows(literal, literal, port) ? new DestinationRefused(literal) : undefined;
  }

  /**
   * A `lookup` for sockets to tenant-set hosts on `port`: the addresses DNS answers, without those
   * the rule refuses; a DestinationRefused error when none is left.
   */
  lookupFor(port: number): net.LookupFunction {
    return (hostname, options, callback) => {
      dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return callback(err, '');
        const allowed = addresses.filter((a) => this.allows(hostname, a.address, port));
        if (allowed.length === 0) return callback(new DestinationRefused(hostname), '');
        if (options.all) return callback(null, allowed);
        callback(null, allowed[0]!.address, allowed[0]!.family);
      });
    };
  }

  /**
   * What is wrong with `host`:`port` as a destination when it is set, judged as a connection would
   * be now: undefined when some address of it may be reached; `port` when it is a public host on a
   * port not open to one; else `address`. A name that does not resolve (or not in time) is
   * `address` too, like one that resolves to private addresses only, so that the answer does not
   * tell which names resolve inside the operator's network.
   */
  async problem(host: string, port: number): Promise<'port' | 'address' | undefined> {
    const name = canonicalHost(host);
    let addresses: string[];
    if (net.isIP(name)) addresses = [name];
    else if (this.allow.entries.some((e) => 'host' in e && e.host === name && (e.port === undefined || e.port === port))) return undefined;
    else {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), RESOLVE_TIMEOUT_MS)));
      try {
        addresses = (await Promise.race([dns.promises.lookup(name, { all: true }), timeout])).map((a) => a.address);
      } catch {
        return 'address';
      } finally {
        clearTimeout(timer);
      }
    }
    const verdicts = addresses.map((a) => this.verdict(name, a, port));
    if (verdicts.includes('allowed')) return undefined;
    return verdicts.includes('port') ? 'port' : 'address';
  }
}
