/** The search as it was before the confined walk, kept as the benchmarks' baseline: fast-glob streamed, stopped after limit + 1 matches. */
import fg from 'fast-glob';

/** Matches of `query` under `cwd` (fast-glob, links not followed, files only, dot: false), at most `limit + 1`. */
export async function fastGlobSearch(cwd: string, query: string, limit: number): Promise<string[]> {
  const out: string[] = [];
  const stream = fg.stream(query, { cwd, followSymbolicLinks: false, onlyFiles: true, suppressErrors: true, dot: false });
  for await (const entry of stream) {
    out.push(String(entry));
    if (out.length > limit) break;
  }
  return out;
}
