// The browser SDK's script tag (docs/sdk-web.md) for this Herald: the bundle Herald serves with
// the dashboard, and init with this host and a public key. A public key just created is filled
// in whole (it is shown once); otherwise the prefix of the first public key stands for it.
import type { Schemas } from '../api';

export function SdkSnippet({ keys, justCreated }: { keys: Schemas['ApiKey'][]; justCreated: string | null }) {
  const host = location.origin;
  const first = keys.find((k) => k.key_type === 'public');
  const writeKey = justCreated?.startsWith('pk_live_') ? justCreated : first ? `${first.key_prefix}.…` : 'pk_live_…';
  const snippet = [
    `<script src="${host}/dashboard/sdk/herald.js"></script>`,
    '<script>',
    `  herald.init({ writeKey: '${writeKey}', host: '${host}' });`,
    '  herald.page();',
    '</script>',
  ].join('\n');
  return (
    <section aria-labelledby="sdk-snippet">
      <h2 id="sdk-snippet">Track from a website</h2>
      <p>
        Paste this into your pages to send page views, <code>herald.track(event, properties)</code> and{' '}
        <code>herald.identify(userId, traits)</code> from the browser. It needs a <strong>public</strong> key (events:write,
        people:identify, devices:register): never put a secret key in a page.
      </p>
      {!first && !justCreated?.startsWith('pk_live_') && <p className="notice">No public key yet: create one below (Kind: Public).</p>}
      <pre role="region" aria-label="The browser SDK snippet" tabIndex={0}>{snippet}</pre>
    </section>
  );
}
