// Types of continuation-data.mjs (the upstream runs it under node without a build).
export const PIECE_BYTES: number;
export const BLOCK_ITEMS: number;
export function textPiece(k: number, bytes: number): string | Buffer;
export function textOf(k: number, bytes: number): string;
export function item(i: number): { i: string; s: string };
export function itemsJson(from: number, n: number): Buffer;
