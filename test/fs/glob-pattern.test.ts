/**
 * The compiled query (src/fs/glob-pattern.ts): brace expansion and its cap, alternatives that
 * climb or are absolute refused, negation refused, literal lookups only where every alternative
 * names a literal, and the automaton: what it reaches is exactly what `matches` accepts, and never
 * less than picomatch (the matcher it replaced) accepts (a property over generated patterns and
 * paths). The matcher itself is tested against picomatch in glob-match.property.test.ts.
 */
import fc from 'fast-check';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { WorkspaceError } from '../../src/fs/errors.js';
import { GlobPlan, MAX_GLOB_ALTERNATIVES, MAX_GLOB_MATCH_COST, expandBraces } from '../../src/fs/glob-pattern.js';
import { timeBox } from '../helpers/time-box.js';

const picomatch = createRequire(import.meta.url)('picomatch') as (g: string, o: { dot: boolean }) => (p: string) => boolean;

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(WorkspaceError);
    return (e as WorkspaceError).code;
  }
  throw new Error('expected a WorkspaceError');
}

/** Whether the automaton lets the walk reach `path` and consider it a candidate file. */
function reaches(plan: GlobPlan, path: string): boolean {
  const segs = path.split('/');
  let states = plan.initial;
  for (const d of segs.slice(0, -1)) {
    states = plan.stepDir(states, d);
    if (states.length === 0) return false;
  }
  return plan.fileMayMatch(states, segs[segs.length - 1]!);
}

describe('glob-pattern: braces', () => {
  it('expands lists (nested, escaped, in brackets) and leaves ranges and single items', () => {
    expect(expandBraces('{a,b}/{c,d}', 64)).toEqual(['a/c', 'a/d', 'b/c', 'b/d']);
    expect(expandBraces('x{a,{b,c}}y', 64)).toEqual(['xay', 'xby', 'xcy']);
    expect(expandBraces('{1..3}/{x}', 64)).toEqual(['1/{x}', '2/{x}', '3/{x}']); // ranges expand; `{x}` is literal
    expect(expandBraces('{01..03}', 64)).toEqual(['01', '02', '03']);
    expect(expandBraces('{c..a}', 64)).toEqual(['c', 'b', 'a']);
    expect(expandBraces('./a/{b,./c}', 64)).toEqual(['a/b', 'a/./c']);
    expect(expandBraces('\\{a,b}', 64)).toEqual(['\\{a,b}']);
    expect(expandBraces('[{]a,b}', 64)).toEqual(['[{]a,b}']);
    expect(expandBraces('{a/b,c}/*', 64)).toEqual(['a/b/*', 'c/*']);
    expect(expandBraces('{a,b}'.repeat(8), MAX_GLOB_ALTERNATIVES)).toHaveLength(256);
    expect(expandBraces('{a,b}'.repeat(9), MAX_GLOB_ALTERNATIVES)).toBeNull();
  });

  it('an alternative that climbs or is absolute is refused; a leading `!` is refused', () => {
    for (const q of ['.{.,}/x', '{/etc,z}/x', 'a/{.,}./b', '{x,/}*']) expect(codeOf(() => GlobPlan.compile(q)), q).toBe('PATH_ESCAPES_ROOT');
    expect(codeOf(() => GlobPlan.compile('!*.ts'))).toBe('INVALID_PARAMS');
  });

  it('extglobs are refused; any number of wildcard runs is accepted (the matcher is bounded, not a regex)', () => {
    for (const q of ['!(a).ts', '+(a|aa)b', '@(x)', '*(a)', '?(a)', 'x/+(a)/y']) expect(codeOf(() => GlobPlan.compile(q)), q).toBe('INVALID_PARAMS');
    for (let k = 4; k <= 40; k += 6) {
      for (const q of ['*a'.repeat(k) + 'b', '**/*a*a/'.repeat(Math.min(k, 20)) + 'b', '?a'.repeat(k), `{${'*a,'.repeat(k)}b}`, 'a\\\\*'.repeat(k)]) {
        expect(() => GlobPlan.compile(q), q).not.toThrow();
      }
    }
    for (const q of ['**/*.ts', 'src/**/*.{ts,tsx}', '**/*-*.md', 'a\\*\\*\\*\\*b*']) expect(() => GlobPlan.compile(q), q).not.toThrow();
  });

  it('the worst accepted queries cost milliseconds per name, never seconds', () => {
    const long = 'a'.repeat(254) + 'c';
    const deep = Array.from({ length: 16 }, () => 'a'.repeat(60)).join('/') + '/c';
    // The old cap was 3 wildcard runs: a backtracking regex took ~1 s at 4 runs and ~60 s at 5.
    for (const q of ['*a*a*a', '?*?*?*b', '**/*a*a', '**/a*/**', '[a]*[a]*[a]*b', '*a'.repeat(40) + 'b', '**/' + '*a*a/**/'.repeat(10) + 'b', `*${'[a]'.repeat(MAX_GLOB_MATCH_COST / 2 - 2)}*b`]) {
      const plan = GlobPlan.compile(q);
      const t0 = performance.now();
      for (const name of [long, deep]) plan.matches(name);
      expect(performance.now() - t0, q).toBeLessThan(100);
    }
  });

  it('too many alternatives, or too costly a query, is refused with INPUT_TOO_LARGE (never matched another way)', () => {
    expect(codeOf(() => GlobPlan.compile(`src/${'{a,b}'.repeat(9)}/x`))).toBe('INPUT_TOO_LARGE');
    expect(codeOf(() => GlobPlan.compile(`src/{1..1000}/x`))).toBe('INPUT_TOO_LARGE');
    expect(codeOf(() => GlobPlan.compile(`*${'?'.repeat(MAX_GLOB_MATCH_COST)}*`))).toBe('INPUT_TOO_LARGE');
    expect(codeOf(() => GlobPlan.compile('a/'.repeat(200) + 'b'))).toBe('INPUT_TOO_LARGE');
    const plan = GlobPlan.compile(`src/${'{a,b}'.repeat(7)}/x`); // 128 alternatives
    expect(reaches(plan, 'src/abababa/x')).toBe(true);
    expect(plan.stepDir(plan.initial, 'lib')).toEqual([]);
  });
});

describe('glob-pattern: pruning', () => {
  it('`src/**/*.ts` never leaves `src`, and literal names are looked up', () => {
    const plan = GlobPlan.compile('src/**/*.ts');
    expect(plan.literalNames(plan.initial)).toEqual([Buffer.from('src')]);
    expect(plan.stepDir(plan.initial, 'lib')).toEqual([]);
    const inSrc = plan.stepDir(plan.initial, 'src');
    expect(plan.literalNames(inSrc)).toBeNull();
    expect(plan.stepDir(inSrc, '.git')).toEqual([]); // dot: false
    expect(plan.fileMayMatch(plan.initial, 'x.ts')).toBe(false);
    const both = GlobPlan.compile('{b,a}/x/{d,c}.txt');
    expect(both.literalNames(both.initial)).toEqual([Buffer.from('a'), Buffer.from('b')]);
    expect(GlobPlan.compile('{a,*}/x').literalNames(GlobPlan.compile('{a,*}/x').initial)).toBeNull();
  });

  it('property: the automaton reaches exactly what `matches` accepts, and whatever picomatch accepts', () => {
    const seg = fc.constantFrom('a', 'b', '.a', '*', '**', '?', 'a*', '*b', '{a,b}', '{a,.a}', '[ab]', '{a/b,c}', '{1..3}', '1', 'a\\*', '{,a}', '.', '*/**');
    const name = fc.constantFrom('a', 'b', '.a', 'ab', 'ba', '1', '2', 'c', 'a*', '');
    let accepted = 0;
    let matched = 0;
    fc.assert(
      fc.property(fc.array(seg, { minLength: 1, maxLength: 4 }), fc.array(name.filter((n) => n !== ''), { minLength: 1, maxLength: 4 }), (segs, names) => {
        const q = segs.join('/');
        const path = names.join('/');
        let plan: GlobPlan;
        try {
          plan = GlobPlan.compile(q);
        } catch (e) {
          // `{,a}/x` expands to `/x`: refused, nothing walked
          expect((e as WorkspaceError).code, q).toBe('PATH_ESCAPES_ROOT');
          return true;
        }
        accepted++;
        const ours = plan.matches(path);
        if (ours) matched++;
        expect(reaches(plan, path), `${q} ${path}`).toBe(ours);
        // picomatch accepting a path means we do too (we are never stricter on these forms), except
        // an alternative with an empty segment (`{,a}` between slashes): it matches nothing here, as
        // no entry has an empty name (picomatch, inline, reads `*\/**\/{,a}` as matching `a`).
        const empty = expandBraces(q, MAX_GLOB_ALTERNATIVES)!.some((a) => a.endsWith('/') || a.includes('//'));
        if (!empty && picomatch(q, { dot: false })(path)) expect(ours, `${q} ${path}`).toBe(true);
        return true;
      }),
      timeBox(20_000, 2500),
    );
    expect(accepted).toBeGreaterThan(100);
    expect(matched).toBeGreaterThan(100);
  });
});
