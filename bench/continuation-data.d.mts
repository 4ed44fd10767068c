// Types of continuation-data.mjs (the upstream runs it under node without a build).
export const PIECE_BYTES: number;
export function textPiece(k: number, bytes: number): string;
export function textOf(k: number, bytes: number): string;
export function item(i: number): { i: number; s: string };
export function itemJson(i: number): string;
