/**
 * @module
 * File paths as messages carry them: the kernel's limits (PATH_MAX 4096 bytes, NAME_MAX 255 bytes per
 * component on Linux) and no NUL byte, checked at the edge so an over-long path is `invalid_message`
 * naming the field, never an `internal` ENAMETOOLONG from deep inside a file tool.
 */
import * as z from 'zod';

/** Longest path accepted, in UTF-8 bytes (Linux PATH_MAX, terminating NUL excluded). */
export const MAX_PATH_BYTES = 4095;
/** Longest single component accepted, in UTF-8 bytes (Linux NAME_MAX). */
export const MAX_NAME_BYTES = 255;

const encoder = new TextEncoder();
const utf8Length = (s: string): number => encoder.encode(s).length;

/** Why `path` breaks a length or byte rule, or undefined when it is fine. */
export function pathProblem(path: string): string | undefined {
  if (path.includes('\0')) return 'contains a NUL byte; send a plain path';
  // A lone surrogate has no UTF-8: the file system would get U+FFFD in its place, and the log the path as sent.
  const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.exec(path);
  if (lone) {
    const code = lone[0].charCodeAt(0).toString(16).toUpperCase();
    return (
      `contains a lone surrogate (U+${code} at index ${lone.index}), which no file name can hold; ` +
      'send valid Unicode'
    );
  }
  const bytes = utf8Length(path);
  if (bytes > MAX_PATH_BYTES)
    return `is ${bytes} bytes long, over the ${MAX_PATH_BYTES}-byte limit; use a shorter path`;
  for (const part of path.split('/')) {
    const n = utf8Length(part);
    if (n > MAX_NAME_BYTES)
      return (
        `has a component of ${n} bytes (${JSON.stringify(part.slice(0, 24))}…), ` +
        `over the ${MAX_NAME_BYTES}-byte limit; use shorter file and directory names`
      );
  }
  return undefined;
}

/** A file path in a command: not empty, within the kernel's limits, no NUL. */
export const FilePath = z
  .string()
  .min(1, 'must not be empty')
  .superRefine((path, ctx) => {
    const problem = pathProblem(path);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
