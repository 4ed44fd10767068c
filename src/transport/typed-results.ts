/**
 * Typed results: a tool that declares an `outputSchema` must never get a partial typed success.
 * The SDK client validates `structuredContent` against the schema (even with `isError`) and
 * rejects a result without it unless `isError` is set. A bounded structure that still validates
 * is sent; otherwise a read-only tool answers with an `isError` result that says how to ask for
 * less, and any other tool with a compact receipt of what was done (never advice to call again).
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { REPORT_KEY } from '../engine/limits.js';
import type { BudgetReport } from '../engine/report.js';

/** What is learned about one tool from a `tools/list` response. */
export interface ToolInfo {
  validate: ((value: unknown) => boolean) | undefined;
  readOnly: boolean;
  /** Input arguments that page or narrow the call (from the input schema). */
  narrowing: string[];
}

/** Argument names that page or narrow a call, in the order they are suggested. */
const NARROWING_ARGS = [
  'limit', 'cursor', 'offset', 'page', 'page_size', 'pageSize', 'per_page', 'max_results', 'maxResults',
  'head', 'tail', 'max_bytes', 'maxBytes', 'length', 'depth', 'max_depth', 'maxDepth',
  'query', 'q', 'pattern', 'path', 'filter', 'since', 'until',
];

/** Receipt fields: scalars of the structure that identify what a mutation did. */
const MAX_RECEIPT_FIELDS = 12;
const MAX_RECEIPT_STRING = 200;

export class ToolCatalog {
  private readonly tools = new Map<string, ToolInfo>();
  private readonly validator = new AjvJsonSchemaValidator();

  get size(): number {
    return this.tools.size;
  }

  get(name: string): ToolInfo | undefined {
    return this.tools.get(name);
  }

  /** Learn from one `tools/list` result (a page; later pages add to it). */
  learn(result: unknown): void {
    const tools = (result as { tools?: unknown } | null)?.tools;
    if (!Array.isArray(tools)) return;
    for (const t of tools) {
      const name = (t as { name?: unknown })?.name;
      if (typeof name !== 'string') continue;
      const tool = t as { outputSchema?: unknown; inputSchema?: unknown; annotations?: { readOnlyHint?: unknown } };
      let validate: ToolInfo['validate'];
      if (tool.outputSchema !== null && typeof tool.outputSchema === 'object') {
        try {
          const v = this.validator.getValidator(tool.outputSchema as never);
          validate = (value) => v(value).valid;
        } catch {
          // A schema ajv cannot compile: the client cannot validate it either; treat as untyped.
          validate = undefined;
        }
      }
      const props = (tool.inputSchema as { properties?: unknown } | undefined)?.properties;
      const names = props !== null && typeof props === 'object' ? Object.keys(props) : [];
      this.tools.set(name, {
        validate,
        readOnly: tool.annotations?.readOnlyHint === true,
        narrowing: NARROWING_ARGS.filter((a) => names.includes(a)),
      });
    }
  }
}

/**
 * Decide what a typed tool's bounded result becomes. `bounded` is the budget's output; returns it
 * when it is still a valid typed result, or the error result that replaces it.
 */
export function enforceOutputSchema(
  toolName: string,
  tool: ToolInfo,
  original: Record<string, unknown>,
  bounded: Record<string, unknown>,
  report: BudgetReport,
  maxResultBytes: number,
): Record<string, unknown> {
  if (tool.validate === undefined || bounded.isError === true) return bounded;
  if ('structuredContent' in bounded && tool.validate(bounded.structuredContent)) return bounded;
  if (tool.readOnly) {
    const how = tool.narrowing.length > 0 ? tool.narrowing.map((a) => `\`${a}\``).join(', ') : 'its paging or filter arguments';
    return {
      content: [
        {
          type: 'text',
          text:
            `The result of \`${toolName}\` was too large for the result budget, and a shortened result would not ` +
            `match the tool's output schema, so it was withheld. Call \`${toolName}\` again asking for less, ` +
            `using ${how}.`,
        },
      ],
      isError: true,
      _meta: {
        [REPORT_KEY]: { ...report, error: 'result_budget_exceeded', continuation: { narrow_with: tool.narrowing } },
      },
    };
  }
  const receipt = receiptOf(original.structuredContent);
  const result = {
    content: [
      {
        type: 'text',
        text:
          `\`${toolName}\` ran and its changes were applied, but its result was too large for the result budget ` +
          `and a shortened result would not match the tool's output schema, so it was withheld. ` +
          `Do not call it again to see the result; the receipt in _meta identifies what was done.`,
      },
    ],
    isError: true,
    _meta: {
      [REPORT_KEY]: { ...report, error: 'result_budget_exceeded', applied: true, receipt },
    },
  };
  // The receipt is what may not fit the smallest budgets: drop its last fields until it does.
  const keys = Object.keys(receipt);
  while (keys.length > 0 && Buffer.byteLength(JSON.stringify(result)) > maxResultBytes) delete receipt[keys.pop()!];
  return result;
}

/** The small scalar top-level fields of a structure (ids, counts, paths, flags). */
export function receiptOf(structure: unknown): Record<string, string | number | boolean | null> {
  const receipt: Record<string, string | number | boolean | null> = {};
  if (structure === null || typeof structure !== 'object' || Array.isArray(structure)) return receipt;
  let n = 0;
  for (const [k, v] of Object.entries(structure)) {
    if (n >= MAX_RECEIPT_FIELDS || k.length > 64) break;
    const ok =
      v === null ||
      typeof v === 'number' ||
      typeof v === 'boolean' ||
      (typeof v === 'string' && v.length <= MAX_RECEIPT_STRING);
    if (ok) {
      receipt[k] = v as string | number | boolean | null;
      n++;
    }
  }
  return receipt;
}
