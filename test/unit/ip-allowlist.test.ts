// Key allowlists and the client IP (README, Permissions).
import t from 'tap';
import { clientIp, malformedEntries, parseHop } from '../../src/auth/ip-allowlist.js';
import { inRanges, parseRange } from '../../src/domain/ip-ranges.js';

/** [kind, address text, prefix bits] of a parsed range, or null. */
const show = (entry: string) => {
  const r = parseRange(entry);
  return r && [r[0].kind(), r[0].toString(), r[1]];
};
const ranges = (...entries: string[]) => entries.map(parseRange);

t.test('parseRange: single addresses', async (t) => {
  t.same(show('1.2.3.4'), ['ipv4', '1.2.3.4', 32]);
  t.same(show('0.0.0.0'), ['ipv4', '0.0.0.0', 32]);
  t.same(show('255.255.255.255'), ['ipv4', '255.255.255.255', 32]);
  t.same(show('2001:db8::1'), ['ipv6', '2001:db8::1', 128]);
  t.same(show('::1'), ['ipv6', '::1', 128]);
  t.same(show('2001:DB8:0:0:0:0:0:1'), ['ipv6', '2001:db8::1', 128]);
});

t.test('parseRange: CIDR blocks', async (t) => {
  t.same(show('10.0.0.0/8'), ['ipv4', '10.0.0.0', 8]);
  t.same(show('192.168.1.0/24'), ['ipv4', '192.168.1.0', 24]);
  t.same(show('0.0.0.0/0'), ['ipv4', '0.0.0.0', 0]);
  t.same(show('1.2.3.4/32'), ['ipv4', '1.2.3.4', 32]);
  t.same(show('2001:db8::/32'), ['ipv6', '2001:db8::', 32]);
  t.same(show('::/0'), ['ipv6', '::', 0]);
  t.same(show('2001:db8::1/128'), ['ipv6', '2001:db8::1', 128]);
});

t.test('parseRange: IPv4-mapped IPv6 becomes IPv4', async (t) => {
  t.same(show('::ffff:1.2.3.4'), ['ipv4', '1.2.3.4', 32]);
  t.same(show('::ffff:10.0.0.0/104'), ['ipv4', '10.0.0.0', 8]);
  t.same(show('::ffff:0:0/96'), ['ipv4', '0.0.0.0', 0]);
});

t.test('parseRange: malformed entries are null', async (t) => {
  const bad = [
    '', ' ', 'localhost', 'not an ip', '1.2.3.4.5', '256.1.1.1', '1.2.3.-1', '1.2.3.4/33', '1.2.3.4/-1', '1.2.3.4/',
    '/8', '10.0.0.0/8/8', '10.0.0.0/x', '2001:db8::/129', '2001:db8:::1', 'gggg::1', ' 1.2.3.4', '1.2.3.4 ', '1.2.3.4,5.6.7.8',
  ];
  for (const e of bad) t.equal(parseRange(e), null, JSON.stringify(e));
  t.same(malformedEntries(['1.2.3.4', 'nope', '10.0.0.0/8', '1.2.3.4/40']), ['nope', '1.2.3.4/40']);
  t.same(malformedEntries([]), []);
});

t.test('parseRange: IPv4 is the dotted quad only (no inet_aton shorthands, no octal or hex)', async (t) => {
  // An allowlist entry "010.0.0.1" must not silently mean 8.0.0.1, nor "127.1" mean 127.0.0.1.
  for (const e of ['1.2.3', '127.1', '010.0.0.1', '0x7f.0.0.1', '0x7f.1', '4294967295', '1.2.3/24']) {
    t.equal(parseRange(e), null, JSON.stringify(e));
  }
});

t.test('inRanges: matching', async (t) => {
  const list = ranges('10.0.0.0/8', '192.168.1.7', '2001:db8::/32');
  t.equal(inRanges('10.0.0.1', list), true);
  t.equal(inRanges('10.255.255.255', list), true);
  t.equal(inRanges('11.0.0.1', list), false);
  t.equal(inRanges('9.255.255.255', list), false);
  t.equal(inRanges('192.168.1.7', list), true);
  t.equal(inRanges('192.168.1.8', list), false);
  t.equal(inRanges('2001:db8::1', list), true);
  t.equal(inRanges('2001:db8:ffff::1', list), true);
  t.equal(inRanges('2001:db9::1', list), false);
  t.equal(inRanges('1.2.3.4', []), false, 'an empty list matches nothing');
});

t.test('inRanges: IPv4 and IPv6 do not match each other, mapped addresses do', async (t) => {
  t.equal(inRanges('1.2.3.4', ranges('::/0')), false, 'an IPv6 range never matches a plain IPv4 client');
  t.equal(inRanges('2001:db8::1', ranges('0.0.0.0/0')), false, 'an IPv4 range never matches an IPv6 client');
  t.equal(inRanges('::ffff:10.1.2.3', ranges('10.0.0.0/8')), true, 'a mapped client matches an IPv4 range');
  t.equal(inRanges('10.1.2.3', ranges('::ffff:10.0.0.0/104')), true, 'an IPv4 client matches a mapped range');
  t.equal(inRanges('::ffff:11.1.2.3', ranges('10.0.0.0/8')), false);
});

t.test('inRanges: a malformed entry never matches, the others still do', async (t) => {
  t.equal(inRanges('1.2.3.4', [null]), false);
  t.equal(inRanges('1.2.3.4', ranges('garbage', '1.2.3.4/99')), false);
  t.equal(inRanges('1.2.3.4', ranges('garbage', '1.2.3.0/24')), true);
});

t.test('inRanges: a malformed client address matches nothing', async (t) => {
  for (const ip of ['', 'unknown', '1.2.3.4.5', '10.0.0.1, 10.0.0.2']) t.equal(inRanges(ip, ranges('0.0.0.0/0', '::/0')), false, JSON.stringify(ip));
});

t.test('clientIp: without trusted proxies, the socket peer', async (t) => {
  t.equal(clientIp('203.0.113.9', '', []), '203.0.113.9');
  t.equal(clientIp('203.0.113.9', '198.51.100.1', []), '203.0.113.9', 'X-Forwarded-For ignored');
  t.equal(clientIp('::ffff:203.0.113.9', '', []), '203.0.113.9', 'a mapped peer is shown as IPv4');
  t.equal(clientIp('2001:db8::5', '', []), '2001:db8::5');
});

t.test('clientIp: trusted peer, the right-most X-Forwarded-For hop that is not trusted', async (t) => {
  const trusted = ranges('10.0.0.0/8', '127.0.0.1');
  t.equal(clientIp('10.0.0.2', '198.51.100.1', trusted), '198.51.100.1');
  t.equal(clientIp('10.0.0.2', '198.51.100.1, 203.0.113.7', trusted), '203.0.113.7', 'right-most untrusted hop, not left-most');
  t.equal(clientIp('10.0.0.2', '198.51.100.1, 203.0.113.7, 10.1.1.1', trusted), '203.0.113.7', 'trusted hops skipped');
  t.equal(clientIp('10.0.0.2', '6.6.6.6,203.0.113.7 ,10.1.1.1,  10.2.2.2', trusted), '203.0.113.7', 'spaces tolerated');
  t.equal(clientIp('127.0.0.1', '198.51.100.1', trusted), '198.51.100.1');
  t.equal(clientIp('::ffff:10.0.0.2', '198.51.100.1', trusted), '198.51.100.1', 'a mapped peer is matched against IPv4 proxies');
  t.equal(clientIp('10.0.0.2', '::ffff:198.51.100.1', trusted), '198.51.100.1', 'a mapped hop is shown as IPv4');
  t.equal(clientIp('10.0.0.2', '', trusted), '10.0.0.2', 'no header: the peer');
});

t.test('clientIp: every hop trusted, the left-most', async (t) => {
  const trusted = ranges('10.0.0.0/8');
  t.equal(clientIp('10.0.0.2', '10.9.9.9, 10.1.1.1', trusted), '10.9.9.9');
  t.equal(clientIp('10.0.0.2', '10.9.9.9', trusted), '10.9.9.9');
});

t.test('clientIp: an untrusted peer, X-Forwarded-For is ignored', async (t) => {
  const trusted = ranges('10.0.0.0/8');
  t.equal(clientIp('203.0.113.9', '198.51.100.1', trusted), '203.0.113.9');
  t.equal(clientIp('203.0.113.9', '10.0.0.1', trusted), '203.0.113.9', 'a spoofed trusted hop changes nothing');
});

t.test('clientIp: trusted-proxy list of only malformed entries trusts nobody', async (t) => {
  t.equal(clientIp('10.0.0.2', '198.51.100.1', ranges('garbage')), '10.0.0.2');
});

t.test('parseHop: the address a forwarded hop names, in one canonical form', async (t) => {
  const same: [string, string][] = [
    ['203.0.113.5', '203.0.113.5'],
    ['203.0.113.5:1234', '203.0.113.5'],
    ['[203.0.113.5]', '203.0.113.5'],
    ['[203.0.113.5]:1234', '203.0.113.5'],
    ['::ffff:203.0.113.5', '203.0.113.5'],
    ['[::ffff:203.0.113.5]:80', '203.0.113.5'],
    ['::ffff:cb00:7105', '203.0.113.5'],
    ['2001:db8::1', '2001:db8::1'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['[2001:db8::1]:443', '2001:db8::1'],
  ];
  for (const [hop, addr] of same) t.equal(parseHop(hop), addr, JSON.stringify(hop));
});

t.test('parseHop: a hop that names no address unambiguously is null', async (t) => {
  const none = [
    'garbage', 'unknown', '', '203.000.113.005', '203.0.113.005:80', '010.0.0.1', '127.1', '0x7f.0.0.1', '4294967295', '203.0.113.5:', '203.0.113.5:123456',
    '203.0.113.5:x', '[203.0.113.5', '203.0.113.5]', '[garbage]', '[203.0.113.5]:', '2001:db8::1:443x', 'fe80::1%eth0', '[fe80::1%25eth0]:80', '1.2.3.4/32', '_hidden',
  ];
  for (const hop of none) t.equal(parseHop(hop), null, JSON.stringify(hop));
});

t.test('clientIp: every spelling of one forwarded address is that address (one bucket key)', async (t) => {
  const trusted = ranges('10.0.0.0/8');
  for (const hop of ['203.0.113.5', '203.0.113.5:1234', '[203.0.113.5]', '[203.0.113.5]:9', '::ffff:203.0.113.5', ' 203.0.113.5 ']) {
    t.equal(clientIp('10.0.0.2', `198.51.100.1, ${hop}`, trusted), '203.0.113.5', JSON.stringify(hop));
  }
  t.equal(clientIp('10.0.0.2', '203.0.113.5, 10.1.1.1:4431', trusted), '203.0.113.5', 'a trusted hop with a port is still trusted');
  t.equal(clientIp('10.0.0.2', '[2001:DB8::1]:443', trusted), '2001:db8::1');
});

t.test('clientIp: a hop naming no address stands for no client: the trusted peer is the client', async (t) => {
  const trusted = ranges('10.0.0.0/8');
  for (const hop of ['garbage', '203.000.113.005', 'fe80::1%eth0', 'unknown']) {
    t.equal(clientIp('10.0.0.2', hop, trusted), '10.0.0.2', JSON.stringify(hop));
    t.equal(clientIp('10.0.0.2', `203.0.113.5, ${hop}`, trusted), '10.0.0.2', `${JSON.stringify(hop)} right-most: what is left of it is not believed`);
    t.equal(clientIp('10.0.0.2', `${hop}, 10.1.1.1`, trusted), '10.0.0.2', `${JSON.stringify(hop)} behind a trusted hop`);
  }
  t.equal(clientIp('10.0.0.2', 'garbage, 203.0.113.5', trusted), '203.0.113.5', 'garbage left of the client hop is never read');
  t.equal(clientIp('10.0.0.2', ' , ,', trusted), '10.0.0.2', 'no hops at all');
});
