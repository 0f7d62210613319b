// One Herald per data dir: two on one embedded database would each believe they own it (and
// the second would stop the first one's PostgreSQL as an orphan). The lock is a file holding
// the owner's pid, created exclusively; a lock whose process is gone (kill -9) is taken over.
import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config.js';

function isLiveHerald(pid: number): boolean {
  if (!(pid > 0) || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // A reused pid (after a reboot) belongs to some other program: not a Herald.
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('node');
  } catch {
    return true;
  }
}

export interface DataDirLock {
  release(): void;
}

export function lockDataDir(dataDir: string): DataDirLock {
  const file = join(dataDir, 'herald.pid');
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o644);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
      const owner = Number(readFileSync(file, 'utf8').trim());
      if (isLiveHerald(owner)) {
        throw new ConfigError(`The data dir ${dataDir} is in use by another Herald (pid ${owner}). Stop that one, or give this one its own HERALD_DATA_DIR (and HERALD_PORT).`);
      }
      unlinkSync(file); // left by a Herald that died without stopping
    }
  }
  return {
    release() {
      try {
        if (Number(readFileSync(file, 'utf8').trim()) === process.pid) unlinkSync(file);
      } catch {
        // already gone
      }
    },
  };
}
