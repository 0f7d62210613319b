// HERALD_ALLOWED_PRIVATE_HOSTS: the destinations the operator lets tenants reach although the
// outbound rule (docs/isolation.md; net/destinations.ts applies it) would refuse them.
import { parseRange, type Range } from './ip-ranges.js';

/** One entry: a host name (as a tenant writes it) or an IP range, on every port or on one. */
type AllowEntry = ({ host: string } | { range: Range }) & { port?: number };

/** HERALD_ALLOWED_PRIVATE_HOSTS, parsed. */
export interface AllowList {
  entries: readonly AllowEntry[];
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** A host as written (`Example.COM.`, `[::1]`) in the one form compared: lower case, no brackets, no final dot. */
export function canonicalHost(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/** An entry, or undefined when it is none of the forms parseAllowList names. */
function allowEntry(entry: string): AllowEntry | undefined {
  // A port follows a host, an IPv4 address or block, or a bracketed IPv6 one: a bare IPv6 address has none.
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? /^([^:]+):(\d+)$/.exec(entry);
  const target = m ? m[1]! : entry;
  const port = m?.[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && !(/^[1-9]\d*$/.test(m![2]!) && port <= 65535)) return undefined;
  const range = parseRange(target);
  if (range) return { range, port };
  const host = canonicalHost(target);
  if (entry.startsWith('[') || /[/:]/.test(target) || /^[\d.]+$/.test(target) || !HOST_NAME.test(host)) return undefined;
  return { host, port };
}

/**
 * Entries of HERALD_ALLOWED_PRIVATE_HOSTS: an IP (`127.0.0.1`, `::1`), a CIDR (`10.0.0.0/8`,
 * `fd00::/8`) or a host name (`smtp.internal`: that name may resolve to private addresses), each
 * allowing every port, or followed by one (`smtp.internal:2525`, `10.0.0.0/8:25`, `[fd00::1]:587`)
 * to allow that port only. Throws naming the first entry that is none of these.
 */
export function parseAllowList(entries: readonly string[]): AllowList {
  return {
    entries: entries.map((entry) => {
      const parsed = allowEntry(entry);
      if (!parsed) throw new Error(`'${entry}' is not a host name, an IP address or a CIDR block, with or without a :port`);
      return parsed;
    }),
  };
}
