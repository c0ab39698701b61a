/**
 * A progress indicator on stderr for slow work (a scan of many folders). Nothing is shown for
 * work that ends within 300 ms; after that, a line on stderr — animated on a terminal, printed
 * once otherwise — that is cleared (on a terminal) when the work ends.
 *
 * No filesystem access; timers only.
 */
import type { CliIO } from './io.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** Runs `work`, showing `label` on stderr if it takes longer than `delayMs`. */
export async function withProgress<T>(io: CliIO, label: string, work: () => Promise<T>, delayMs = 300): Promise<T> {
  let frame = 0;
  let shown = false;
  let ticker: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    shown = true;
    if (!io.isTTY) {
      io.err(`${label}…\n`);
      return;
    }
    const draw = () => io.err(`\r${FRAMES[frame++ % FRAMES.length]} ${label}…`);
    draw();
    ticker = setInterval(draw, 80);
  }, delayMs);
  try {
    return await work();
  } finally {
    clearTimeout(timer);
    if (ticker) clearInterval(ticker);
    if (shown && io.isTTY) io.err('\r\x1b[2K');
  }
}
