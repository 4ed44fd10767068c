/**
 * The exact wire size of a long string: the bytes `JSON.stringify` writes for its content (escaped,
 * UTF-8, without the quotes), without building the escaped string; and the UTF-8 length of a long
 * string (a JSON text) as `Buffer.byteLength` counts it.
 *
 * A WebAssembly SIMD kernel (src/engine/wasm/escape-count.c, committed as base64 in
 * ./wasm/escape-count-wasm.ts) counts them from the string's UTF-16 code units, copied into its
 * memory in windows that never split a surrogate pair; lone surrogates are counted as the six bytes
 * `JSON.stringify` writes for them. Where WebAssembly SIMD is missing, the JavaScript references
 * (`escapedLength`: a native check, then the native serializer; `utf8Length`) answer. The module is compiled
 * synchronously on first use, not at import.
 */
import { ESCAPE_COUNT_WASM_BASE64 } from './wasm/escape-count-wasm.js';
import { escapedLength, utf8Length } from './wire.js';

/** The little of the WebAssembly API used here (the project's TS libs do not declare it). */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: object };
};

interface KernelExports {
  memory: { readonly buffer: ArrayBuffer };
  heap_base(): number;
  measure(ptr: number, units: number): number;
  utf8_length(ptr: number, units: number): number;
}

type Count = (ptr: number, units: number) => number;

interface Kernel {
  measure: Count;
  utf8: Count;
  /** Where units are copied: after a zero unit, 16-byte aligned. */
  data: number;
  /** The memory from `data` on (the memory never grows). */
  buf: Buffer;
  /** Units per window (one more unit, written 0, follows the last). */
  units: number;
}

/** Below this length the regex of the reference costs less than a call into the kernel. */
export const ESCAPE_COUNT_MIN_UNITS = 48;

/** undefined: not tried yet; null: this runtime has no WebAssembly SIMD. */
let kernel: Kernel | null | undefined;

function load(): Kernel | null {
  try {
    const bytes = Buffer.from(ESCAPE_COUNT_WASM_BASE64, 'base64');
    const exports = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports as unknown as KernelExports;
    // The unit before the first one copied stays 0 (the kernel reads it as a neighbour).
    const data = ((exports.heap_base() + 15) & ~15) + 16;
    const memory = exports.memory.buffer;
    const units = ((memory.byteLength - data) >> 1) - 1;
    return { measure: exports.measure, utf8: exports.utf8_length, data, buf: Buffer.from(memory, data, memory.byteLength - data), units };
  } catch {
    return null;
  }
}

/** Whether this runtime runs the WebAssembly SIMD kernel (compiles it on first call). */
export function escapeCountWasmAvailable(): boolean {
  if (kernel === undefined) kernel = load();
  return kernel !== null;
}

/**
 * Bytes `JSON.stringify(s)` writes between its quotes, as UTF-8. Perf: the kernel for long
 * strings (≈ 0.1 ns a unit of ASCII), the reference for short ones.
 */
export function escapedSize(s: string): number {
  if (s.length < ESCAPE_COUNT_MIN_UNITS) return escapedLength(s);
  if (kernel === undefined) kernel = load();
  return kernel === null ? escapedLength(s) : measureWith(kernel, kernel.measure, s);
}

/** Below this length the native UTF-8 count (after a regex for ASCII) costs less than a call into the kernel. */
export const UTF8_COUNT_MIN_UNITS = 256;

/**
 * UTF-8 bytes of a string, as `Buffer.byteLength(s, 'utf8')` counts them (a lone surrogate as the
 * 3 bytes of U+FFFD). Perf: the kernel for long strings (a JSON text of 60K UTF-16 units, some
 * not ASCII: ≈ 8 µs, natively ≈ 21 µs).
 */
export function utf8Size(s: string): number {
  if (s.length < UTF8_COUNT_MIN_UNITS) return utf8Length(s);
  if (kernel === undefined) kernel = load();
  return kernel === null ? utf8Length(s) : measureWith(kernel, kernel.utf8, s);
}

/** The JavaScript reference of {@link escapedSize} (what runs without WebAssembly SIMD). */
export function escapedSizeJs(s: string): number {
  return escapedLength(s);
}

/**
 * {@link escapedSize} on the kernel whatever the length; throws if the runtime cannot run it.
 * `windowUnits` (tests) makes the windows smaller than the kernel's memory allows.
 */
export function escapedSizeWasm(s: string, windowUnits?: number): number {
  if (!escapeCountWasmAvailable()) throw new Error('WebAssembly SIMD is not available');
  return measureWith(kernel!, kernel!.measure, s, Math.max(2, Math.min(windowUnits ?? Infinity, kernel!.units)));
}

/** {@link utf8Size} on the kernel whatever the length (tests); throws without WebAssembly SIMD. */
export function utf8SizeWasm(s: string, windowUnits?: number): number {
  if (!escapeCountWasmAvailable()) throw new Error('WebAssembly SIMD is not available');
  return measureWith(kernel!, kernel!.utf8, s, Math.max(2, Math.min(windowUnits ?? Infinity, kernel!.units)));
}

function measureWith(k: Kernel, count: Count, s: string, window = k.units): number {
  const n = s.length;
  if (n <= window) return run(k, count, s, n);
  let total = 0;
  for (let i = 0; i < n; ) {
    let end = Math.min(n, i + window);
    // A window never ends on a high surrogate (its pair would be in the next window).
    if (end < n && (s.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
    total += run(k, count, s.slice(i, end), end - i);
    i = end;
  }
  return total;
}

/** One window: the units copied in raw (lone surrogates kept), a zero unit after them. */
function run(k: Kernel, count: Count, s: string, n: number): number {
  const buf = k.buf;
  buf.write(s, 0, 'utf16le');
  buf[2 * n] = 0;
  buf[2 * n + 1] = 0;
  return count(k.data, n) >>> 0;
}
