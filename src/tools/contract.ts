/**
 * The typed tool contract: the arguments a tool's body receives and the page it must return, both
 * inferred from the zod shapes the tool publishes (`inputSchema` and `outputSchema`). A body whose
 * page drifts from its output schema (a member missing, of another type, optional where the schema
 * says nullable, or a member the schema does not list) does not compile.
 *
 * The helpers that declare tools (`src/server/tool-kinds.ts`) type `run` with {@link ToolRun}, and
 * hold the one cast, from the SDK's parsed arguments to {@link ToolArgs}; a tool registered by hand
 * (`exec`) builds its page with {@link structuredPage}.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { structured, type Call, type Shape } from './pipeline.js';

/**
 * What a tool's body receives: the input shape's parsed type. Both routes hand over parsed
 * arguments (the SDK parses `tools/call` input with the tool's strict input schema, `exec` with the
 * same schema), so it is the output side of the shape, with its defaults applied.
 */
export type ToolArgs<S extends Shape> = z.output<z.ZodObject<S>>;

/**
 * What a tool's body returns when the tool publishes `O` as its `outputSchema`. The SDK sends the
 * value as returned: the server parses it as zod input only to validate it, and clients validate it
 * against the JSON Schema the SDK publishes from the output side of `O`. The page has to pass both;
 * the output side is the stricter (a `.default()` member is required there) and is the type
 * clients hold. The shapes here are plain data (no transforms, no coercion), where the two agree.
 */
export type ToolPage<O extends Shape> = z.output<z.ZodObject<O>>;

/** The object members of `P` (any of its object variants), its array element, and one member's type. */
type KeysOf<P> = P extends object ? keyof P : never;
type ElementOf<P> = P extends readonly (infer E)[] ? E : never;
type MemberOf<P, K> = P extends object ? (K extends keyof P ? P[K] : never) : never;
type Joined<Path extends string, K extends string> = Path extends '' ? K : `${Path}.${K}`;

/**
 * The members of `R`, at any depth, that `P` does not list, as paths (`examined`,
 * `commits[].tree`). TypeScript lets a value with extra members stand for a type without them, but
 * the published JSON Schema says `additionalProperties: false`, so a client refuses such a page:
 * this finds what assignability lets through.
 */
export type UnlistedMembers<R, P, Path extends string = ''> = R extends readonly (infer E)[]
  ? UnlistedMembers<E, ElementOf<P>, `${Path}[]`>
  : R extends object
    ? { [K in keyof R & string]-?: K extends KeysOf<P> ? UnlistedMembers<R[K], MemberOf<P, K>, Joined<Path, K>> : Joined<Path, K> }[keyof R & string]
    : never;

/**
 * `unknown` when `R` lists only members `P` has; else a member `R` lacks, named so that the
 * compiler's message says what to remove or add to the schema.
 */
export type OnlyListed<R, P> = [UnlistedMembers<R, P>] extends [never] ? unknown : { 'members the outputSchema does not list': UnlistedMembers<R, P> };

/**
 * A tool's body: `args` typed by its input shape (plus what its kind adds, such as `limit` and
 * `cursor`), its page `R` a {@link ToolPage} of `O` with no member `O` does not list. `R` is
 * inferred from the body, so a backend's own page type is checked as it is, not as asserted.
 */
export type ToolRun<A, O extends Shape, R> = (args: A, call: Call) => Promise<R & OnlyListed<R, ToolPage<O>>>;

/**
 * `page` as the result of a tool that publishes `outputSchema`, checked as {@link ToolRun} checks a
 * page (its schema's type, no member it does not list). For a tool registered without the helpers;
 * the schema is passed only for its type.
 */
export function structuredPage<O extends Shape, R extends ToolPage<O>>(outputSchema: O, page: R & OnlyListed<R, ToolPage<O>>): CallToolResult {
  return structured(page);
}
