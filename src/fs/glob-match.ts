/**
 * Glob matching in time bounded by construction: no regular expression, no backtracking beyond
 * the last star. A query is parsed once (glob-parse.ts) and compiled here into
 *
 * - segment matchers, one per distinct wildcard segment of all brace alternatives (interned:
 *   `{a,b}/*.ts` tests `*.ts` once per name, not once per alternative);
 * - a segment automaton: the alternatives as a trie of segments (common prefixes shared), a node
 *   standing for "these segments are matched"; a plain-name segment is an edge looked up by name,
 *   a `**` node takes any number of segments. The path is read one segment at a time and the set of
 *   live nodes is carried forward (a Thompson-style simulation: no node is visited twice for one
 *   segment, so nothing is ever re-explored).
 *
 * Segment match (glob-segment.ts): at most (n + 1) · cost(segment) steps for a name of n UTF-16
 * units, where cost(segment) is about the tokens between its first and last star (a class counting
 * its ranges); what comes before the first star or after the last counts once.
 *
 * Path match: for each path segment of n units, each live node costs O(1) plus one map lookup
 * (O(n), the name's hash) plus one memoized test per wildcard child, and each distinct matcher runs
 * at most once. So one path of L units in k segments costs at most (L + k) · MAX_GLOB_MATCH_COST
 * character steps plus k · MAX_GLOB_STATES node steps: a few million simple steps for L = 4096
 * (measured worst, a few milliseconds: test/fs/glob-match.property.test.ts, bench/search.bench.ts).
 * Compiling is bounded by the query's size and MAX_GLOB_BUILD_NODES.
 *
 * Dotfiles (`dot: false`): a segment starting with `.` matches only a segment pattern whose first
 * token is a literal `.` (so `*`, `?` and `[...]` never match a leading dot), and `**` never
 * consumes a segment that starts with `.`.
 */
import { WorkspaceError } from './errors.js';
import { parseGlob, type GlobSegment } from './glob-parse.js';
import { compileSegment, testSegment, type SegmentMatcher } from './glob-segment.js';

/**
 * Matching cost of a query's distinct wildcard segments (glob-segment.ts: about 3 each, plus the
 * tokens between a segment's first and last star, a class counting its ranges): the steps per unit
 * of a path's length. More is refused (`INPUT_TOO_LARGE`). At about 5 ns a step, 256 × 4096 units
 * ≈ 5 ms; `src/**\/{foo,bar,baz,qux}*{.test,.spec}.{ts,tsx,js}` costs 72, `**\/*a*b*…*z*.txt` 29.
 */
export const MAX_GLOB_MATCH_COST = 256;
/**
 * Automaton nodes a query may build (segments of all brace alternatives, common prefixes shared),
 * before equal futures are merged; more is refused. Bounds the compile's own time and memory.
 */
export const MAX_GLOB_BUILD_NODES = 4096;
/**
 * Automaton nodes after equal futures are merged; more is refused. Every node may be live on every
 * segment of a path (`**\/a/**\/a/...`), at about 20 ns each on a shared 2-vCPU machine: 128 nodes
 * × 2048 segments (a 4 KiB path of one-character names) is about 5 ms, the most a match can cost on
 * the automaton's side. Real queries are far below: braces share their prefixes and suffixes, and
 * a query of 128 segments is 256 bytes of `a/a/...`.
 */
export const MAX_GLOB_STATES = 128;

function tooLarge(what: string, max: number, value: number): WorkspaceError {
  return new WorkspaceError('INPUT_TOO_LARGE', `Expected \`query\` to have a ${what} of at most ${max}, got ${value}; narrow it or split it into several queries`, {
    max,
    value,
  });
}

/** Node 0: the start, before any segment. */
const ROOT = 0;

/**
 * A compiled query: the segment automaton and its matchers. The brace alternatives share their
 * common prefixes: a node stands for "these segments are matched" (a trie of segments), so
 * `src/{a,b}/**\/*.ts` has one `src` node, and a literal segment is an edge looked up by name rather
 * than tested. States are node numbers; `initial` is the set before any segment. Stepping uses
 * scratch buffers owned by the instance (synchronous, so one instance is never stepped twice at once).
 */
export class CompiledGlob {
  /** States before the first segment (closed under `**` matching no segment). */
  readonly initial: number[];
  /** Per node: whether it is a `**` node (it takes any number of non-dot segments, itself included). */
  private readonly globstar: Uint8Array;
  /** Per node: an alternative ends here. */
  private readonly accepting: Uint8Array;
  /** Per node: its `**` child, or -1. */
  private readonly globChild: Int32Array;
  /** Per node: children reached by a plain name, by that name. */
  private readonly literalChildren: (Map<string, number> | undefined)[];
  /** Per node: children reached by a wildcard segment, as [matcher, child] pairs. */
  private readonly patternChildren: number[][];
  private readonly matchers: SegmentMatcher[] = [];
  /** Per node: the generation that last added it to a set (dedup without clearing). */
  private readonly added: Uint32Array;
  private addGen = 0;
  /** Per matcher: the generation of its memoized answer, and the answer. */
  private readonly memoGen: Uint32Array;
  private readonly memo: Uint8Array;
  private memoRound = 0;
  private readonly scratch: [number[], number[]] = [[], []];

  constructor(alternatives: GlobSegment[][]) {
    const globstar = [0];
    const accepting = [0];
    const globChild = [-1];
    const literalChildren: (Map<string, number> | undefined)[] = [undefined];
    const patternChildren: number[][] = [[]];
    const ids = new Map<string, number>();
    const newNode = (isGlobstar: boolean): number => {
      if (globstar.length >= MAX_GLOB_BUILD_NODES) throw tooLarge('segment count (all brace alternatives, common prefixes shared)', MAX_GLOB_BUILD_NODES, globstar.length + 1);
      globstar.push(isGlobstar ? 1 : 0);
      accepting.push(0);
      globChild.push(-1);
      literalChildren.push(undefined);
      patternChildren.push([]);
      return globstar.length - 1;
    };
    let cost = 0;
    for (const alt of alternatives) {
      let node = ROOT;
      for (const s of alt) {
        if (s.kind === 'globstar') {
          if (globChild[node] === -1) globChild[node] = newNode(true);
          node = globChild[node]!;
          continue;
        }
        const matcher = compileSegment(s.tokens);
        if (matcher.literal !== null) {
          const children = (literalChildren[node] ??= new Map());
          let child = children.get(matcher.literal);
          if (child === undefined) children.set(matcher.literal, (child = newNode(false)));
          node = child;
          continue;
        }
        const key = s.tokens.map((t) => (t.kind === 'char' ? t.cp : t.kind === 'class' ? `${t.negated ? '^' : ''}[${t.ranges.join()}]` : t.kind)).join(' ');
        let id = ids.get(key);
        if (id === undefined) {
          ids.set(key, (id = this.matchers.length));
          this.matchers.push(matcher);
          cost += matcher.cost;
          if (cost > MAX_GLOB_MATCH_COST) throw tooLarge('matching cost (wildcard segments of all brace alternatives)', MAX_GLOB_MATCH_COST, cost);
        }
        const pairs = patternChildren[node]!;
        let child = -1;
        for (let k = 0; k < pairs.length; k += 2) if (pairs[k] === id) child = pairs[k + 1]!;
        if (child === -1) pairs.push(id, (child = newNode(false)));
        node = child;
      }
      accepting[node] = 1;
    }
    // Share equal futures: two nodes with the same flags and the same edges to the same (already
    // shared) nodes accept the same paths. Children are created after their parents, so a reverse
    // pass sees every child first. `**/{a,?}/**/{a,?}/x` keeps one node per level, not one per
    // alternative, which keeps the live set small.
    const n = globstar.length;
    const canon = new Int32Array(n);
    const bySignature = new Map<string, number>();
    for (let v = n - 1; v >= 0; v--) {
      const lits = [...(literalChildren[v] ?? [])].map(([name, c]) => `${canon[c]}:${name}`).sort();
      const pats = patternChildren[v]!.flatMap((x, k, a) => (k % 2 === 0 ? [`${x}>${canon[a[k + 1]!]}`] : [])).sort();
      const g = globChild[v]! < 0 ? -1 : canon[globChild[v]!];
      const sig = `${globstar[v]}${accepting[v]} ${g} ${pats.join(',')} ${JSON.stringify(lits)}`;
      const same = bySignature.get(sig);
      canon[v] = same ?? v;
      if (same === undefined) bySignature.set(sig, v);
    }
    // Renumber the kept nodes 0..m-1 (the root, kept first by construction, stays 0).
    const kept = [...new Set(Array.from(canon))].sort((a, b) => a - b);
    if (kept.length > MAX_GLOB_STATES) throw tooLarge('segment count (all brace alternatives, common prefixes and suffixes shared)', MAX_GLOB_STATES, kept.length);
    const index = new Int32Array(n).fill(-1);
    kept.forEach((v, k) => (index[v] = k));
    const to = (v: number): number => index[canon[v]!]!;
    this.globstar = Uint8Array.from(kept, (v) => globstar[v]!);
    this.accepting = Uint8Array.from(kept, (v) => accepting[v]!);
    this.globChild = Int32Array.from(kept, (v) => (globChild[v]! < 0 ? -1 : to(globChild[v]!)));
    this.literalChildren = kept.map((v) => {
      const m = literalChildren[v];
      return m === undefined ? undefined : new Map([...m].map(([name, c]) => [name, to(c)]));
    });
    this.patternChildren = kept.map((v) => {
      const pairs = patternChildren[v]!;
      const out: number[] = [];
      for (let k = 0; k < pairs.length; k += 2) if (!out.some((x, j) => j % 2 === 0 && x === pairs[k] && out[j + 1] === to(pairs[k + 1]!))) out.push(pairs[k]!, to(pairs[k + 1]!));
      return out;
    });
    this.added = new Uint32Array(kept.length);
    this.memoGen = new Uint32Array(this.matchers.length);
    this.memo = new Uint8Array(this.matchers.length);
    this.bump();
    this.initial = [];
    this.add(this.initial, ROOT);
  }

  /** Parse and compile a query (throws the parser's and the caps' `WorkspaceError`s). */
  static compile(query: unknown, maxBytes?: number): CompiledGlob {
    return new CompiledGlob(parseGlob(query, maxBytes).alternatives);
  }

  private bump(): void {
    if (++this.addGen === 0xffffffff) {
      this.added.fill(0);
      this.addGen = 1;
    }
  }

  /** Add `node` and, down its chain of `**` children, the nodes reached by `**` matching no segment. */
  private add(out: number[], node: number): void {
    for (let t = node; t >= 0 && this.added[t] !== this.addGen; t = this.globChild[t]!) {
      this.added[t] = this.addGen;
      out.push(t);
    }
  }

  private test(id: number, name: string): boolean {
    if (this.memoGen[id] !== this.memoRound) {
      this.memoGen[id] = this.memoRound;
      this.memo[id] = testSegment(this.matchers[id]!, name) ? 1 : 0;
    }
    return this.memo[id] === 1;
  }

  /**
   * The states after reading one segment `name` (closed under `**` matching nothing). Cost: per
   * live state, one map lookup and one memoized test per wildcard child; each distinct matcher
   * runs at most once (see the header for its bound).
   */
  step(states: readonly number[], name: string): number[] {
    return this.stepInto(states, name, []);
  }

  /** `step`, writing into `out` (emptied first). */
  private stepInto(states: readonly number[], name: string, out: number[]): number[] {
    out.length = 0;
    if (++this.memoRound === 0xffffffff) {
      this.memoGen.fill(0);
      this.memoRound = 1;
    }
    this.bump();
    const dot = name.charCodeAt(0) === 0x2e;
    for (const s of states) {
      if (this.globstar[s] === 1 && !dot) this.add(out, s); // `**` never takes a dot segment
      const lit = this.literalChildren[s]?.get(name);
      if (lit !== undefined) this.add(out, lit);
      const pairs = this.patternChildren[s]!;
      for (let k = 0; k < pairs.length; k += 2) if (this.test(pairs[k]!, name)) this.add(out, pairs[k + 1]!);
    }
    return out;
  }

  /** Whether some state ends an alternative. */
  accepts(states: readonly number[]): boolean {
    return states.some((s) => this.accepting[s] === 1);
  }

  /** Whether a state can still take a segment (something below can match). */
  hasNext(s: number): boolean {
    return this.globstar[s] === 1 || this.globChild[s]! >= 0 || this.literalChildren[s] !== undefined || this.patternChildren[s]!.length > 0;
  }

  /** The plain names a state can take next, when it takes nothing else (no wildcard, no `**`); else null. */
  literalNext(s: number): string[] | null {
    if (this.globstar[s] === 1 || this.globChild[s]! >= 0 || this.patternChildren[s]!.length > 0) return null;
    return [...(this.literalChildren[s]?.keys() ?? [])];
  }

  /** Whether a `/`-separated path (relative, no trailing `/`) matches the query. */
  matches(path: string): boolean {
    if (path === '') return false;
    // Perf: two scratch sets, swapped per segment (a 2048-segment path allocates no set).
    let states: readonly number[] = this.initial;
    let [next, spare] = [this.scratch[0], this.scratch[1]];
    let from = 0;
    for (;;) {
      const slash = path.indexOf('/', from);
      states = this.stepInto(states, slash < 0 ? path.slice(from) : path.slice(from, slash), next);
      if (states.length === 0) return false;
      if (slash < 0) return this.accepts(states);
      [next, spare] = [spare, next];
      from = slash + 1;
    }
  }
}
