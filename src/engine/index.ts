/**
 * The engine's one face: everything the layers above (transport, server, fs, git, team, commands,
 * cli, stream), the scripts and the benches may use. Nothing outside `src/engine` imports a file
 * behind this one, so the engine's files can be split or renamed without touching other layers.
 *
 * Pure: no `node:fs`, no child processes, no SDK import (importing this loads neither the SDK nor
 * a schema validator).
 */
export { boundJson, boundResult, type BoundedJson } from './bound.js';
export { Budgeter } from './budgeter.js';
export type { RootKind } from './roles.js';
export { ByteBudget } from './byte-source.js';
export { BudgetError, isBudgetError, type BudgetErrorCode, type ErrorCode, type ErrorCodes, type LayerError } from './errors.js';
export type { BudgetEvents, JsonEvents } from './events.js';
export { fitsWithinBudget } from './fits.js';
export {
  CONTINUATION_LIMIT_NAMES,
  CONTINUATION_LIMITS,
  CONTINUATION_TOOL,
  DEFAULT_CONTINUATION,
  DEFAULT_FAST_PATH_BYTES,
  DEFAULT_MAX_MESSAGE_BYTES,
  MAX_MESSAGE_BYTES_RANGE,
  DEFAULT_LIMITS,
  DEFAULT_MAX_REQUEST_BYTES,
  KIND_LIMIT,
  LIMIT_RANGES,
  LIMITS,
  MAX_ENVELOPE_FIELD_BYTES,
  MAX_KEY_UNITS,
  MAX_POINTER_BYTES,
  MIN_CUT_BYTES,
  NOTICE_KEY,
  NUMERIC_LIMITS,
  REPORT_KEY,
  SCALED_LIMITS,
  type BudgetLimits,
  type BudgetOptions,
  type ContinuationDeclaration,
  type ContinuationLimit,
  type ContinuationSettings,
  type LimitDeclaration,
  type NumericLimit,
} from './limits.js';
export { contradictions, minResultBytes, resolveContinuation, resolveLimits, scaledLimits, type ResolvedLimits } from './options.js';
export type { ChunkSink } from './output.js';
export { BUDGET_KINDS, CONTINUATION_LISTED, continuationReserveBytes, escapePointerSegment, HANDLE_CHARS, noticeText, type BudgetKind, type BlockingBound, type BudgetReport, type ContinuationOffer, type ReadStart, type ResultReport, type WithheldReport } from './report.js';
export { newSkipState, scanSkipJs, SKIP_MORE, type SkipScan, type SkipState } from './skip-scan.js';
export { scanSkipBest, scanSkipSized, scanSkipWasm, wasmSimdAvailable } from './skip-scan-wasm.js';
export { HAND_MORE, HAND_REFUSED, MemberScanner, type MemberPolicy, type MemberScanOptions, type ScanError, type TopShape, type ValueTake } from './member-scan.js';
export { SCALAR_START, scalarComplete, stepScalar } from './json-scalar.js';
export { Byte, endsScalar, isDigit, isWs, skipWs } from './json-bytes.js';
export { MIRROR_SUMMARY } from './text-mirror.js';
export { estimateTokens } from './token-estimate.js';
export { countText, type ActiveMeasure } from './text-measure.js';
export { Tokenizer } from './tokenizer.js';
export { cutString, mirrorLength, type Cut } from './wire.js';
