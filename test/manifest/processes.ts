/** Test helper: whether a process a test started (a script, what it spawned) still runs. */
import { readFileSync } from 'node:fs';

/** Whether a process runs (a zombie waiting to be reaped does not). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
