// Herald's own tracking, the pure rules (docs/tracking.md): which links are wrapped and how the
// html is rewritten (through htmlparser2), SMS text, the tokens (genuine, altered, another
// kind's, another key's), the links a message never wraps, and which opens and clicks are a machine's.
import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { isMachine, MACHINE_WINDOW_MS, pixelTag, trackingOf, wrapHtml, wrapText } from '../../src/domain/tracking.js';
import { clickToken, messageTracker, openToken, readClickToken, readOpenToken } from '../../src/channels/tracking-links.js';

const numbered = () => {
  const seen: string[] = [];
  return { seen, wrap: (url: string) => (seen.push(url), `https://h.test/t/c/${seen.length - 1}`) };
};

t.test('wrapHtml: each web link of <a>/<area> replaced in place, the rest of the source untouched', async (t) => {
  const { seen, wrap } = numbered();
  const html = `<html><body><p class=x>Hi &amp; welcome</p><a href="https://a.example/?q=1&amp;r=2" style="color:red">A</a> <A HREF='https://b.example'>B</A> <a href=https://c.example>C</a>`
    + `<a href="mailto:x@y.z">M</a><a href="#top">T</a><a href="/relative">R</a><a data-herald-track="OFF" href="https://kept.example">K</a><map><area href="https://d.example"></map></body></html>`;
  const out = wrapHtml(html, wrap, '<img src="p">');
  t.same(seen, ['https://a.example/?q=1&r=2', 'https://b.example', 'https://c.example', 'https://d.example'], 'targets decoded, in order');
  t.equal(
    out,
    `<html><body><p class=x>Hi &amp; welcome</p><a href="https://h.test/t/c/0" style="color:red">A</a> <A href="https://h.test/t/c/1">B</A> <a href="https://h.test/t/c/2">C</a>`
      + `<a href="mailto:x@y.z">M</a><a href="#top">T</a><a href="/relative">R</a><a data-herald-track="OFF" href="https://kept.example">K</a><map><area href="https://h.test/t/c/3"></map><img src="p"></body></html>`,
  );
  t.equal(wrapHtml('<p>no body</p><a href="https://x.example">x</a>', undefined, '<img>'), '<p>no body</p><a href="https://x.example">x</a><img>', 'no wrapper: links kept; no </body>: the pixel at the end');
  t.equal(wrapHtml('<a href="https://x.example">x</a>', undefined, undefined), '<a href="https://x.example">x</a>', 'nothing to do: the same text');
  const quoted = numbered();
  const q = wrapHtml('<a href="https://x.example">x</a>', () => 'https://h.test/?a="b"&c', undefined);
  t.equal(q, '<a href="https://h.test/?a=&quot;b&quot;&amp;c">x</a>', 'the new value is escaped for its attribute');
  t.same(quoted.seen, []);
  t.match(pixelTag('https://h.test/t/o/abc'), /^<img src="https:\/\/h\.test\/t\/o\/abc" width="1" height="1" alt=""/);
});

t.test('wrapText: URLs in text, the sentence punctuation after them kept outside', async (t) => {
  const { seen, wrap } = numbered();
  t.equal(wrapText('Sale! See https://shop.example/x?y=1. Or (https://b.example), stop: reply STOP', wrap), 'Sale! See https://h.test/t/c/0. Or (https://h.test/t/c/1), stop: reply STOP');
  t.same(seen, ['https://shop.example/x?y=1', 'https://b.example']);
  t.equal(wrapText('no links here', wrap), 'no links here');
});

t.test('tokens: genuine ones open to what they name; altered, swapped or another key\'s do not', async (t) => {
  const key = randomBytes(32);
  const m = { workspaceId: randomUUID(), messageId: randomUUID() };
  const c = clickToken(key, m, 7);
  t.same(readClickToken(key, c), { ...m, index: 7 });
  const o = openToken(key, m);
  t.same(readOpenToken(key, o), m);
  t.equal(readClickToken(randomBytes(32), c), undefined, "another key's");
  t.equal(readOpenToken(key, c), undefined, 'a click token is no open token');
  t.equal(readClickToken(key, o), undefined, 'an open token is no click token');
  for (let i = 0; i < c.length; i++) {
    const altered = c.slice(0, i) + (c[i] === 'A' ? 'B' : 'A') + c.slice(i + 1);
    if (readClickToken(key, altered) !== undefined) t.fail(`altered at ${i} still opens`);
  }
  // The workspace swapped for another's (as a foreign workspace's token would be): the MAC no longer holds.
  const other = clickToken(key, { ...m, workspaceId: randomUUID() }, 7);
  t.equal(readClickToken(key, other.slice(0, 22) + c.slice(22)), undefined, 'workspace bytes of another token');
  t.equal(readClickToken(key, `${c}A`), undefined, 'longer');
  t.equal(readClickToken(key, c.slice(0, -1)), undefined, 'shorter');
  t.equal(readClickToken(key, 'x'.repeat(c.length)), undefined, 'made up');
});

t.test('messageTracker: numbers the links it wraps; never Herald\'s own unsubscribe, preference or tracking links', async (t) => {
  const s = { publicUrl: 'https://h.test', unsubscribeKey: randomBytes(32) };
  const m = { workspaceId: randomUUID(), messageId: randomUUID() };
  const tr = messageTracker(s, m);
  t.equal(tr.wrap('https://h.test/u/abc'), undefined);
  t.equal(tr.wrap('https://h.test/p/abc'), undefined);
  const wrapped = tr.wrap('https://shop.example/')!;
  t.match(wrapped, /^https:\/\/h\.test\/t\/c\/[A-Za-z0-9_-]{67}$/);
  t.same(readClickToken(s.unsubscribeKey, wrapped.slice('https://h.test/t/c/'.length)), { ...m, index: 0 });
  t.equal(tr.wrap(wrapped), undefined, 'a tracked link is not wrapped twice');
  t.same(tr.links, ['https://shop.example/']);
  t.ok(tr.wrap('https://shop.example/a\r\nSet-Cookie: x=1 é'), 'a link with a line break in it');
  t.same(tr.links[1], 'https://shop.example/aSet-Cookie:%20x=1%20%C3%A9', 'stored as the URL parser writes it: no line break, ASCII');
  t.equal(tr.wrap('https://[bad'), undefined, 'one no parser reads is left as it is');
  t.same(readOpenToken(s.unsubscribeKey, tr.pixel().slice('https://h.test/t/o/'.length)), m);
});

t.test('isMachine: within the window of the send, or a prefetcher\'s or scanner\'s agent', async (t) => {
  const browser = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
  const sent = 1_000_000;
  t.equal(isMachine(sent + MACHINE_WINDOW_MS - 1, sent, browser), true, 'a click 2 s after the send at most');
  t.equal(isMachine(sent + MACHINE_WINDOW_MS, sent, browser), false, 'a person later');
  t.equal(isMachine(sent + 60_000, sent, 'Mozilla/5.0'), true, "Apple Mail Privacy Protection's bare agent");
  t.equal(isMachine(sent + 60_000, sent, 'Mozilla/5.0 (compatible; Barracuda)'), true);
  t.equal(isMachine(sent + 60_000, sent, undefined), true, 'no agent');
  t.equal(isMachine(sent + 60_000, null, browser), false, 'no send time: the agent decides');
  t.equal(isMachine(sent + 60_000, sent, 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)'), false, "Gmail's proxy fetches when the person opens");
});

t.test('trackingOf: both on unless turned off', async (t) => {
  t.same(trackingOf(null), { opens: true, clicks: true });
  t.same(trackingOf({ clicks: false }), { opens: true, clicks: false });
});
