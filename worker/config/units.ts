/**
 * Units as operators write them: durations (30s, 24h), sizes (8MiB, 5GB) and
 * the upload's parallel parts. Each reader gives undefined for text it cannot
 * read, so the caller can say which variable or field was wrong.
 */
import type { ParallelParts } from '../../activities/s3/ranged-reader.js';

const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const SIZE_UNITS = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 } as const;

/** Parses 500ms, 30s, 5m, 24h, 7d. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) return undefined;
  return Math.round(Number(m[1]) * DURATION_UNITS_MS[m[2] as keyof typeof DURATION_UNITS_MS]);
}

/** Parses 1048576, 64KiB, 8MiB, 5GiB, 5GB. */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB)?$/.exec(text.trim());
  if (!m) return undefined;
  const bytes = Number(m[1]) * SIZE_UNITS[(m[2] ?? 'B') as keyof typeof SIZE_UNITS];
  return Number.isSafeInteger(Math.round(bytes)) ? Math.round(bytes) : undefined;
}

/** `auto`, or a whole number of ranged reads from 1 to 32; undefined for anything else. */
export function parseParallelParts(text: string): ParallelParts | undefined {
  const trimmed = text.trim();
  if (trimmed === 'auto') return 'auto';
  const n = Number(trimmed);
  return /^\d+$/.test(trimmed) && n >= 1 && n <= 32 ? n : undefined;
}

/** A duration as an operator would write it: whole hours as `24h`, else seconds (`60s`), else `ms`. */
export function durationText(ms: number): string {
  if (ms % DURATION_UNITS_MS.h === 0) return `${ms / DURATION_UNITS_MS.h}h`;
  if (ms % DURATION_UNITS_MS.s === 0) return `${ms / DURATION_UNITS_MS.s}s`;
  return `${ms}ms`;
}
