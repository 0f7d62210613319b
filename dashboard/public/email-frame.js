// Shows the html the dashboard posts (authoring-parts.tsx EmailFrame, once this frame has
// loaded) in the inner frame, whose sandbox allows no script.
const inner = document.querySelector('iframe');
window.addEventListener('message', (e) => {
  if (e.source !== window.parent || typeof e.data?.html !== 'string') return;
  inner.srcdoc = e.data.html;
});
