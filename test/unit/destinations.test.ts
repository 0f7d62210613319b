// Outbound destinations a tenant sets (docs/isolation.md, src/net/destinations.ts): which addresses
// are refused (IPv4, IPv6, IPv4-mapped and other embedded forms), the operator's allow-list (IPs,
// CIDR blocks, host names, each with or without a port), the ports a public host may be reached
// on, IP literals judged before connecting, the connect-time lookup that judges what a host name
// resolves to, and the judgement of a destination when it is set.
import t from 'tap';
import { promisify } from 'node:util';
import type { LookupAddress } from 'node:dns';
import { DestinationRefused, isGlobalAddress, OutboundPolicy } from '../../src/net/destinations.js';
import { parseAllowList } from '../../src/domain/private-hosts.js';

t.test('only global unicast is reachable by default', async (t) => {
  const refused = [
    // IPv4: loopback, RFC 1918, CGNAT, link-local (cloud metadata), unspecified, multicast, broadcast, reserved
    '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '100.127.255.255',
    '169.254.169.254', '169.254.0.1', '0.0.0.0', '0.1.2.3', '224.0.0.1', '239.255.255.250', '255.255.255.255', '240.0.0.1', '192.0.2.1',
    // IPv6: loopback, unspecified, unique local, link-local, multicast, documentation
    '::1', '::', 'fc00::1', 'fd12:3456:789a::1', 'fe80::1', 'febf::1', 'ff02::1', '2001:db8::1',
    // IPv4-mapped and embedded forms of private addresses
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:192.168.0.1',
    '64:ff9b::a00:1', '2002:7f00:1::1',
  ];
  for (const a of refused) t.notOk(isGlobalAddress(a), `${a} refused`);
  const allowed = ['8.8.8.8', '142.250.74.42', '100.63.255.255', '100.128.0.0', '172.32.0.1', '169.253.255.255', '2607:f8b0:4004:c07::5f', '2a00:1450:4001:82b::200a', '::ffff:8.8.8.8'];
  for (const a of allowed) t.ok(isGlobalAddress(a), `${a} reachable`);
  for (const notIp of ['localhost', '', '127.1', 'example.com']) t.notOk(isGlobalAddress(notIp), `${JSON.stringify(notIp)} is no address`);
});

t.test('the allow-list: IPs, CIDR blocks (IPv4-mapped ones too) and host names; anything else refused', async (t) => {
  const p = new OutboundPolicy(parseAllowList(['127.0.0.1', '10.1.0.0/16', 'fd00::/8', '::ffff:192.168.7.0/120', 'Smtp.Internal.']));
  t.ok(p.allows('x.example', '127.0.0.1', 25), 'an IP');
  t.ok(p.allows('x.example', '::ffff:127.0.0.1', 25), 'its IPv4-mapped form');
  t.notOk(p.allows('x.example', '127.0.0.2', 25), 'not its neighbour');
  t.ok(p.allows('x.example', '10.1.200.3', 25), 'inside a CIDR block');
  t.notOk(p.allows('x.example', '10.2.0.1', 25), 'outside it');
  t.ok(p.allows('x.example', 'fd12::1', 25), 'an IPv6 block');
  t.ok(p.allows('x.example', '192.168.7.9', 25), 'a mapped block is its IPv4 block');
  t.ok(p.allows('smtp.internal', '10.9.9.9', 25), 'a host name may resolve to any address');
  t.ok(p.allows('SMTP.internal.', '169.254.1.1', 25), 'compared case-insensitively, without the final dot');
  t.notOk(p.allows('other.internal', '10.9.9.9', 25), 'another name may not');
  t.ok(p.allows('anything.example', '8.8.8.8', 25), 'public addresses need no entry');

  for (const bad of ['10.0.0.0/33', '127.1', '010.0.0.1', 'http://host', 'a_b.example', '-x.example', '1.2.3.4/x', 'host:0', 'host:65536', 'host:', 'host:2x', '[host]:25', '[::1]:', '127.1:25', '[::1]:025']) {
    t.throws(() => parseAllowList([bad]), new RegExp(`'${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}' is not`), `${bad} is refused`);
  }
  t.same(parseAllowList([]), { entries: [] });
});

t.test('ports: SMTP reaches a public host on 25, 465, 587 and 2525 only; an entry with a port allows that port only', async (t) => {
  const p = new OutboundPolicy(parseAllowList(['127.0.0.1', 'relay.internal:2526', '10.0.0.0/8:25', '[fd00::1]:587', 'mx.partner.example:10025', '::1']), new Set([25, 465, 587, 2525]));
  for (const port of [25, 465, 587, 2525]) t.ok(p.allows('smtp.example.com', '8.8.8.8', port), `a public host on ${port}`);
  for (const port of [22, 80, 2526, 4222, 6379]) t.notOk(p.allows('smtp.example.com', '8.8.8.8', port), `not on ${port}`);
  t.ok(p.allows('mx.partner.example', '8.8.8.8', 10025), 'a listed public host on its port');
  t.notOk(p.allows('mx.partner.example', '8.8.8.8', 10026), 'not on another');
  t.ok(p.allows('x', '127.0.0.1', 6379), 'an entry without a port: every port');
  t.ok(p.allows('x', '::1', 4222), 'a bare IPv6 entry has no port');
  t.ok(p.allows('relay.internal', '192.168.1.9', 2526), 'a name with its port');
  t.notOk(p.allows('relay.internal', '192.168.1.9', 25), 'not another port, not even a standard one');
  t.ok(p.allows('x', '10.3.4.5', 25), 'a block with its port');
  t.notOk(p.allows('x', '10.3.4.5', 587), 'not another');
  t.ok(p.allows('x', 'fd00::1', 587), '[v6]:port');
  t.notOk(p.allows('x', 'fd00::1', 25));
  t.ok(new OutboundPolicy().allows('x', '8.8.8.8', 4222), 'without open ports (an FCM token_uri): every port of a public host');
  t.type(p.refusal('8.8.8.8', 2526), DestinationRefused, 'a public literal on another port is refused before connecting');
  t.equal(p.refusal('127.0.0.1', 9999), undefined);
});

t.test('IP literals are judged before connecting (Node calls no lookup for them)', async (t) => {
  const p = new OutboundPolicy();
  for (const host of ['127.0.0.1', '[::1]', '::ffff:127.0.0.1', '[::ffff:a9fe:a9fe]', '169.254.169.254', '10.0.0.8']) {
    t.type(p.refusal(host, 443), DestinationRefused, `${host} refused`);
  }
  t.equal(p.refusal('8.8.8.8', 443), undefined);
  t.equal(p.refusal('localhost', 443), undefined, 'a host name is judged when resolved');
  t.equal(new OutboundPolicy(parseAllowList(['127.0.0.1'])).refusal('127.0.0.1', 443), undefined, 'an allowed literal');
  t.type(new OutboundPolicy(parseAllowList(['127.0.0.1:25'])).refusal('127.0.0.1', 443), DestinationRefused, 'allowed on another port only');
});

t.test('the connect-time lookup judges the resolved addresses: localhost is refused', async (t) => {
  const lookup = (p: OutboundPolicy, all: boolean, port = 25) =>
    new Promise<string | LookupAddress[]>((resolve, reject) => p.lookupFor(port)('localhost', { all }, (err, address) => (err ? reject(err) : resolve(address))));
  await t.rejects(lookup(new OutboundPolicy(), false), { code: 'EDESTINATIONREFUSED' });
  await t.rejects(lookup(new OutboundPolicy(), true), { code: 'EDESTINATIONREFUSED' }, 'with all: true too');
  t.equal(await lookup(new OutboundPolicy(parseAllowList(['127.0.0.1'])), false), '127.0.0.1', 'allowed by address: only that address is kept');
  const byName = (await lookup(new OutboundPolicy(parseAllowList(['localhost'])), true)) as LookupAddress[];
  t.ok(byName.some((a) => a.address === '127.0.0.1'), 'allowed by name: every address');
  await t.rejects(lookup(new OutboundPolicy(parseAllowList(['localhost:2525'])), false, 25), { code: 'EDESTINATIONREFUSED' }, 'listed for another port');
  await t.rejects(promisify(new OutboundPolicy().lookupFor(25))('no-such-host.invalid', {}), { code: 'ENOTFOUND' }, 'a DNS failure is passed on');
});

t.test('a destination judged when set: resolved now, a private answer and no answer alike', async (t) => {
  const smtp = (allow: string[]) => new OutboundPolicy(parseAllowList(allow), new Set([25, 465, 587, 2525]));
  const p = smtp([]);
  t.equal(await p.problem('localhost', 587), 'address', 'a name resolving to loopback');
  t.equal(await p.problem('no-such-host.invalid', 587), 'address', 'a name that does not resolve: the same');
  t.equal(await p.problem('10.0.0.1', 587), 'address', 'a private literal');
  t.equal(await p.problem('8.8.8.8', 587), undefined, 'a public literal on an SMTP port');
  t.equal(await p.problem('8.8.8.8', 2526), 'port', 'on another port');
  t.equal(await smtp(['127.0.0.1']).problem('localhost', 6379), undefined, 'a name resolving to a listed address, any port');
  t.equal(await smtp(['127.0.0.1:2526']).problem('localhost', 587), 'address', 'listed for another port');
  t.equal(await smtp(['nowhere.invalid']).problem('nowhere.invalid', 4000), undefined, 'a listed name is not resolved');
  t.equal(await smtp(['nowhere.invalid:25']).problem('nowhere.invalid', 587), 'address', 'unless listed for another port');
});
