/**
 * A swapper process for race tests: exchanges two paths atomically (Linux `renameat2` with
 * `RENAME_EXCHANGE`) in a tight loop for a given time, so a directory and a symlink trade places
 * thousands of times while the code under test runs. The exchanger is a small C program compiled
 * at test time (`cc`), or Python's ctypes when no compiler is there; `available()` says whether
 * either works, so a test can skip rather than pass without racing.
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const C_SOURCE = `
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
int main(int argc, char **argv) {
  if (argc < 4) return 2;
  long ms = atol(argv[3]);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long n = 0;
  printf("ready\\n");
  fflush(stdout);
  for (;;) {
    if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) != 0) { perror("renameat2"); return 1; }
    n++;
    if ((n & 255) == 0) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms) break;
    }
  }
  /* leave the two paths as they started */
  if (n % 2 == 1) syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE);
  printf("swaps %ld\\n", n);
  return 0;
}
`;

const PY_SOURCE = `
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, ms = sys.argv[1].encode(), sys.argv[2].encode(), int(sys.argv[3])
end = time.monotonic() + ms / 1000
n = 0
print('ready', flush=True)
while time.monotonic() < end:
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        sys.exit(1)
    n += 1
if n % 2 == 1:
    libc.renameat2(-100, a, -100, b, 2)
print('swaps', n, flush=True)
`;

export interface Swapper {
  /** Resolves with the number of exchanges done once the time is up. */
  done: Promise<number>;
  /** True while the swapper is still exchanging. */
  running(): boolean;
}

/** The command that runs the exchanger, built in `workDir` (undefined when neither way works). */
export function exchanger(workDir: string): string[] | undefined {
  if (process.platform !== 'linux') return undefined;
  const src = join(workDir, 'swap.c');
  const bin = join(workDir, 'swap');
  writeFileSync(src, C_SOURCE);
  if (spawnSync('cc', ['-O2', '-o', bin, src], { stdio: 'ignore' }).status === 0) return [bin];
  const py = join(workDir, 'swap.py');
  writeFileSync(py, PY_SOURCE);
  if (spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], { stdio: 'ignore' }).status === 0) return ['python3', py];
  return undefined;
}

/** Start exchanging `a` and `b` for `ms` milliseconds; resolves once the swapper is ready. */
export async function startSwapper(cmd: string[], a: string, b: string, ms: number): Promise<Swapper> {
  const child = spawn(cmd[0]!, [...cmd.slice(1), a, b, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let alive = true;
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const done = new Promise<number>((resolve, reject) => {
    // 'close', not 'exit': the last line may still be in the pipe when the process has exited.
    child.once('close', (code) => {
      alive = false;
      const m = /swaps (\d+)/.exec(out);
      if (code === 0 && m !== null) resolve(Number(m[1]));
      else reject(new Error(`swapper failed (exit ${code}): ${out}`));
    });
  });
  while (!out.includes('ready') && alive) await new Promise((r) => setTimeout(r, 5));
  return { done, running: () => alive };
}
