// Reads TAP (tap --reporter=tap) on stdin, echoes it, and ends with `N passed, N failed`
// counting subtests of each test file; a file that failed without a failing subtest
// (it crashed, or timed out) counts as one failure, as does tap's own line for a file past its
// time (`timeout!`, naming it `expired`). Just before that line it lists each failure with its
// file, so the end of a long log says what failed.
import { createInterface } from 'node:readline';

let passed = 0;
let failed = 0;
let subFailures = 0;
let file = '';
const failures = [];
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  process.stdout.write(line + '\n');
  const named = /^# Subtest: (.*)$/.exec(line);
  if (named) {
    file = named[1];
    continue;
  }
  const sub = /^ {4}(not )?ok \d+(.*)$/.exec(line);
  if (sub) {
    if (sub[1]) {
      failed++;
      subFailures++;
      failures.push(`${file}:${sub[2]}`);
    } else passed++;
    continue;
  }
  const whole = /^(not )?ok \d+(.*)$/.exec(line);
  if (whole) {
    if (whole[1] && subFailures === 0) {
      failed++;
      // tap's own failure (`not ok N - timeout!`) follows the last file's line and is not that file's.
      failures.push(whole[2].startsWith(` - ${file}`) ? `${file}:${whole[2]} (the file failed as a whole)` : `tap:${whole[2]}`);
    }
    subFailures = 0;
    continue;
  }
  const expired = /^ {2}expired: (.*)$/.exec(line);
  if (expired && failures.at(-1)?.startsWith('tap:')) failures[failures.length - 1] += ` (expired: ${expired[1]})`;
}
for (const f of failures) process.stdout.write(`failed: ${f}\n`);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
