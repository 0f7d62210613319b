// Build step: fails the build when the dashboard's initial JavaScript (the scripts and module
// preloads index.html loads) is over 250 kB gzipped, or when index.html has inline script or
// style, which the dashboard's Content-Security-Policy (default-src 'self') would block.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const BUDGET = 250 * 1024;
const dir = 'dist/dashboard';
const html = readFileSync(`${dir}/index.html`, 'utf8');

const inline = [...html.matchAll(/<script\b(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=/gi)].map((m) => m[0]);
if (inline.length > 0) {
  console.error(`dashboard: index.html has inline script or style, which the CSP blocks: ${inline.join(', ')}`);
  process.exit(1);
}

const initial = [...html.matchAll(/<script[^>]*\bsrc="\/dashboard\/([^"]+)"|<link[^>]*rel="modulepreload"[^>]*href="\/dashboard\/([^"]+)"/g)].map((m) => m[1] ?? m[2]);
if (initial.length === 0) {
  console.error('dashboard: index.html loads no script');
  process.exit(1);
}
const size = initial.reduce((sum, f) => sum + gzipSync(readFileSync(`${dir}/${f}`)).length, 0);
const kb = (n) => `${(n / 1024).toFixed(1)} kB`;
if (size > BUDGET) {
  console.error(`dashboard: the initial JavaScript is ${kb(size)} gzipped, over the budget of ${kb(BUDGET)} (${initial.join(', ')})`);
  process.exit(1);
}
console.log(`dashboard: initial JavaScript ${kb(size)} gzipped (budget ${kb(BUDGET)})`);
