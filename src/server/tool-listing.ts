/**
 * `serve`'s `tools/list` as a model's context pays for it: the SDK's listing with what carries no
 * meaning left out (each schema's `$schema`, the default `execution`, the safe-integer bound zod
 * gives every integer, a record's `propertyNames: {type: string}` and `additionalProperties: {}`,
 * which every JSON object meets) and nullable types written as `anyOf`, which schema dialects that take one
 * type per schema accept. Every schema stays the JSON Schema the SDK checks calls and results
 * against; only the text a client receives changes.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ListToolsRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

type Json = Record<string, unknown>;
type Handler = (request: unknown, extra: unknown) => Promise<unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = new Set(['items', 'additionalItems', 'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else', 'contains', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema']);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYWORDS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items']);
/** Keywords whose value maps names (never keywords) to schemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/**
 * One schema, lean: a new object (the SDK's own is left as it is). Only schemas are walked, by the
 * keywords that hold them: a value (`const`, `enum`, `default`, `examples`) and a name (a member of
 * `properties`, an entry of `$defs`) are copied as they are, whatever they look like.
 */
export function leanSchema(schema: unknown): unknown {
  if (!isObject(schema)) return schema; // `true`, `false`, or not a schema: as it is
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$schema') continue;
    if (k === 'propertyNames' && isObject(v) && Object.keys(v).length === 1 && v.type === 'string') continue;
    if (k === 'additionalProperties' && isObject(v) && Object.keys(v).length === 0) continue;
    if ((k === 'maximum' && v === Number.MAX_SAFE_INTEGER) || (k === 'minimum' && v === Number.MIN_SAFE_INTEGER)) continue;
    // several types as `anyOf`, for dialects of one type per schema; a schema with its own `anyOf` keeps the list
    if (k === 'type' && Array.isArray(v) && v.length > 1 && !Object.hasOwn(schema, 'anyOf')) {
      out.anyOf = v.map((type) => ({ type }));
      continue;
    }
    if (SCHEMA_LIST_KEYWORDS.has(k) && Array.isArray(v)) out[k] = v.map(leanSchema);
    else if (SCHEMA_KEYWORDS.has(k)) out[k] = leanSchema(v);
    else if (SCHEMA_MAP_KEYWORDS.has(k) && isObject(v)) out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, leanSchema(s)]));
    else out[k] = v;
  }
  return out;
}

/** One tool as listed, lean. */
export function leanTool(tool: unknown): unknown {
  if (!isObject(tool)) return tool;
  const out: Json = { ...tool };
  // `forbidden` is what a client assumes when `execution` is absent
  if (isObject(out.execution) && out.execution.taskSupport === 'forbidden' && Object.keys(out.execution).length === 1) delete out.execution;
  if (out.inputSchema !== undefined) out.inputSchema = leanSchema(out.inputSchema);
  if (out.outputSchema !== undefined) out.outputSchema = leanSchema(out.outputSchema);
  return out;
}

/**
 * Replace the server's `tools/list` handler (set by the SDK on the first registered tool) by one
 * that lists the same tools, lean. The SDK keeps its handlers in a private map; there is no public
 * way to wrap one.
 */
export function leanToolListing(server: McpServer): void {
  const handlers = (server.server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  const original = handlers instanceof Map ? (handlers.get('tools/list') as Handler | undefined) : undefined;
  if (typeof original !== 'function') throw new Error('leanToolListing: register the tools first');
  server.server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    const result = (await original(request, extra)) as Json;
    return { ...result, tools: Array.isArray(result.tools) ? result.tools.map(leanTool) : [] } as never;
  });
}

/** Old tool names, still answered (not listed): a client or a prompt written for them keeps working. */
export const TOOL_ALIASES: Readonly<Record<string, string>> = Object.freeze({ list_tasks: 'task_list', search_tasks: 'task_search' });

/**
 * Answer `tools/call` for an old name as the tool's current one. The name is rewritten as the
 * message comes in, under every layer above (the result budget finds the tool's output schema by
 * the name it sees, so it must see the current one). The transport's `onmessage` may be an
 * accessor (the SDK's HTTP transport forwards it): the wrapped handler goes through it.
 */
export function withToolAliases<T extends Transport>(transport: T, aliases: Readonly<Record<string, string>> = TOOL_ALIASES): T {
  const renamed = (message: JSONRPCMessage): JSONRPCMessage => {
    const m = message as { method?: unknown; params?: { name?: unknown } };
    const name = m.params?.name;
    if (m.method !== 'tools/call' || typeof name !== 'string' || !Object.hasOwn(aliases, name)) return message;
    return { ...message, params: { ...m.params, name: aliases[name] } } as JSONRPCMessage;
  };
  let owner: object | null = transport;
  let inherited: PropertyDescriptor | undefined;
  while (owner !== null && inherited === undefined) {
    inherited = Object.getOwnPropertyDescriptor(owner, 'onmessage');
    owner = Object.getPrototypeOf(owner) as object | null;
  }
  const accessor = inherited?.set !== undefined ? inherited : undefined;
  let stored: Transport['onmessage'] = accessor === undefined ? (inherited?.value as Transport['onmessage']) : undefined;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => (accessor !== undefined ? (accessor.get?.call(transport) as Transport['onmessage']) : stored),
    set: (handler: Transport['onmessage']) => {
      const wrapped: Transport['onmessage'] = handler === undefined ? undefined : (message, extra) => handler(renamed(message), extra);
      if (accessor !== undefined) accessor.set!.call(transport, wrapped);
      else stored = wrapped;
    },
  });
  if (stored !== undefined) transport.onmessage = stored;
  return transport;
}
