/**
 * The action registry behind `exec`: one action per built-in tool of `serve`, derived from the
 * tools as they were registered (`ToolContext.declared`), so there is no second list to drift. An
 * action reuses its tool's input shape (same caps), output schema and handler (same run function,
 * same limit and query rules); only the name changes, to `domain.verb`.
 */
import { z } from 'zod';
import { nearestNames, strictInput, type DeclaredTool, type Shape } from '../tools/index.js';

/** What an action does to the workspace, the repository or the team store. */
export type ActionClass = 'read_only' | 'mutation';

/** One `exec` action. */
export interface ExecAction {
  /** `domain.verb`, e.g. `workspace.list_dir`, `task.create`. */
  name: string;
  /** The tool whose schemas and handler it shares. */
  tool: string;
  class: ActionClass;
  /** Repeating it with the same input changes nothing more (every read; mutations that say so). */
  idempotent: boolean;
  inputShape: Shape;
  input: z.ZodObject<Shape>;
  outputShape: Shape;
  output: z.ZodObject<Shape>;
  /** The tool as declared: its action (the permission table's) and its handler, run for a call the pipeline admitted. */
  declared: DeclaredTool;
}

/**
 * `domain.verb` from a tool name: the first word is the domain (`git_create_branch` →
 * `git.create_branch`), unless the last word is the plural of a domain some other tool starts
 * with (a `list_tasks` would be `task.list`, since `task_get` exists; the task tools are named
 * `task_*` now, and the rule stays for any tool named that way).
 */
export function actionNameOf(tool: string, firstWords: ReadonlySet<string>): string {
  const words = tool.split('_');
  const last = words[words.length - 1]!;
  const noun = last.endsWith('s') ? last.slice(0, -1) : undefined;
  if (words.length > 1 && noun !== undefined && words[0] !== noun && firstWords.has(noun) && !firstWords.has(words[0]!)) {
    return `${noun}.${words.slice(0, -1).join('_')}`;
  }
  if (words.length < 2) throw new Error(`exec: tool \`${tool}\` has no domain_verb name`);
  return `${words[0]}.${words.slice(1).join('_')}`;
}

/** The registry: every declared tool as an action, in registration order. */
export class ActionRegistry {
  private readonly byName = new Map<string, ExecAction>();

  constructor(tools: readonly DeclaredTool[]) {
    const counts = new Map<string, number>();
    for (const t of tools) {
      const w = t.name.split('_')[0]!;
      counts.set(w, (counts.get(w) ?? 0) + 1);
    }
    // A domain is a first word that more than one tool shares (`task_*`), or any the plural rule needs.
    const firstWords = new Set([...counts].filter(([, n]) => n > 1).map(([w]) => w));
    const actionOf = new Map(tools.map((t) => [t.name, actionNameOf(t.name, firstWords)]));
    // A refusal's advice names tools (`use workspace_search_files to search`); through exec it names their actions.
    const escaped = [...actionOf.keys()].sort((x, y) => y.length - x.length).map((n) => n.replace(/[^\w]/g, '\\$&'));
    const toolName = new RegExp(`\\b(?:${escaped.join('|')})\\b`, 'g');
    const asActions = (refused: Readonly<Record<string, string>> | undefined) =>
      refused === undefined ? undefined : Object.fromEntries(Object.entries(refused).map(([k, text]) => [k, text.replace(toolName, (n) => actionOf.get(n) ?? n)]));
    // Every declared tool has an output schema (the declaration's type requires one), so every action's result is typed.
    for (const t of tools) {
      const name = actionOf.get(t.name)!;
      if (this.byName.has(name)) throw new Error(`exec: two tools map to the action \`${name}\``);
      const readOnly = t.annotations.readOnlyHint;
      this.byName.set(name, {
        name,
        tool: t.name,
        class: readOnly ? 'read_only' : 'mutation',
        idempotent: readOnly || t.annotations.idempotentHint === true,
        inputShape: t.inputShape,
        input: strictInput(name, t.inputShape, asActions(t.refused)),
        outputShape: t.outputSchema,
        output: z.object(t.outputSchema),
        declared: t,
      });
    }
  }

  get(name: string): ExecAction | undefined {
    return this.byName.get(name);
  }

  /** Every action, in the order the tools were registered. */
  list(): ExecAction[] {
    return [...this.byName.values()];
  }

  /** The registered names closest to `name` by edit distance (ties by name), at most `count`. */
  nearest(name: string, count: number): string[] {
    return nearestNames(name, this.byName.keys(), count);
  }
}
