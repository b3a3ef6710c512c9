/** Types of scripts/docs-check.mjs, for its tests. */
export function documents(dir?: string): string[];
export function pathsIn(text: string): { path: string; line: number }[];
export function missingPaths(dir?: string): string[];
export function sourceFindings(dir?: string): { file: string; message: string }[];
export interface ExampleOperation {
  method: string;
  path: string;
  /** An answer's status code, or 'request' for a request body. */
  status: string;
}
export interface JsonExample {
  line: number;
  tag?: string;
  commented?: boolean;
  text: string;
}
export function jsonExamples(text: string): JsonExample[];
export function parseTag(tag: string | undefined): ExampleOperation | undefined;
export interface TaggedExample {
  file: string;
  line: number;
  operation: ExampleOperation;
  value: unknown;
}
export function docExamples(dir?: string): { examples: TaggedExample[]; findings: string[] };
export function strictSchema(schema: unknown): unknown;
export function checkExamples(openapi: unknown, examples: readonly TaggedExample[]): string[];
