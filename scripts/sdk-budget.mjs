// Build step: fails the build when a browser SDK bundle (sdk/web, built to dist/dashboard/sdk)
// is over 6 kB gzipped: it loads on every page of the sites that use it.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const BUDGET = 6 * 1024;
const dir = 'dist/dashboard/sdk';
let over = false;
for (const f of ['herald.js', 'herald.mjs']) {
  const size = gzipSync(readFileSync(`${dir}/${f}`), { level: 9 }).length;
  const kb = (n) => `${(n / 1024).toFixed(1)} kB`;
  if (size > BUDGET) {
    console.error(`sdk: ${f} is ${kb(size)} gzipped, over the budget of ${kb(BUDGET)}`);
    over = true;
  } else console.log(`sdk: ${f} ${kb(size)} gzipped (budget ${kb(BUDGET)})`);
}
if (over) process.exit(1);
