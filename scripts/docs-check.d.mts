/** Types of scripts/docs-check.mjs, for its tests. */
export function documents(dir?: string): string[];
export function pathsIn(text: string): { path: string; line: number }[];
export function missingPaths(dir?: string): string[];
export function sourceFindings(dir?: string): { file: string; message: string }[];
