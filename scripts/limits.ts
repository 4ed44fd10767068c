/**
 * Generates `specs/limits.json` from the limits table (src/engine/limits.ts), where every limit is
 * declared once. `npm run limits` writes it; test/engine/spec-defaults.test.ts fails when it is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  BUDGET_KINDS,
  DEFAULT_LIMITS,
  LIMITS,
  MAX_ENVELOPE_FIELD_BYTES,
  MAX_KEY_UNITS,
  MAX_POINTER_BYTES,
  MIN_CUT_BYTES,
  NOTICE_KEY,
  NUMERIC_LIMITS,
  REPORT_KEY,
} from '../src/engine/index.js';

export function renderLimitsSpec(): string {
  const doc = {
    $comment:
      'Defaults of the result budget. A limit with a scale is that share of maxResultBytes unless set explicitly (the default is its value at the default maxResultBytes). Generated from the limits table in src/engine/limits.ts by `npm run limits` and checked by test/engine/spec-defaults.test.ts; the table in agent-mcp-result-budget.md is checked against this file.',
    limits: NUMERIC_LIMITS.map((name) => {
      const d = LIMITS[name];
      return {
        name,
        flag: d.flag,
        env: d.env,
        default: d.default,
        unit: d.unit,
        ...(d.scale === undefined ? {} : { scale: d.scale }),
        ...(d.defaultText === undefined ? {} : { defaultText: d.defaultText }),
        ...(d.hostEnv === undefined ? {} : { hostEnv: d.hostEnv }),
        min: d.min,
        max: d.max,
      };
    }),
    switches: [
      { name: 'notice', flag: '--no-notice', env: 'MCP_BUDGET_NOTICE=0', default: DEFAULT_LIMITS.notice },
      { name: 'protocolVersion', flag: '--protocol-version', env: 'MCP_BUDGET_PROTOCOL_VERSION', default: DEFAULT_LIMITS.protocolVersion ?? null },
    ],
    constants: {
      reportKey: REPORT_KEY,
      noticeKey: NOTICE_KEY,
      maxPointerBytes: MAX_POINTER_BYTES,
      minCutBytes: MIN_CUT_BYTES,
      maxEnvelopeFieldBytes: MAX_ENVELOPE_FIELD_BYTES,
      maxKeyUnits: MAX_KEY_UNITS,
    },
    budgetKinds: [...BUDGET_KINDS],
  };
  return JSON.stringify(doc, null, 2) + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(fileURLToPath(new URL('../specs/limits.json', import.meta.url)), renderLimitsSpec());
}
