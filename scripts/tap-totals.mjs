// Reads TAP (tap --reporter=tap) on stdin, echoes it, and ends with `N passed, N failed`
// counting subtests of each test file; a file that failed without a failing subtest
// (it crashed, or timed out) counts as one failure.
import { createInterface } from 'node:readline';

let passed = 0;
let failed = 0;
let subFailures = 0;
const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  process.stdout.write(line + '\n');
  const sub = /^ {4}(not )?ok \d+/.exec(line);
  if (sub) {
    if (sub[1]) {
      failed++;
      subFailures++;
    } else passed++;
    continue;
  }
  const file = /^(not )?ok \d+/.exec(line);
  if (file) {
    if (file[1] && subFailures === 0) failed++;
    subFailures = 0;
  }
}
process.stdout.write(`${passed} passed, ${failed} failed\n`);
