/**
 * The OpenAPI document as the reference page reads it: its types, `$ref` resolution and a plain
 * description of a schema's type. Pure; rendered by openapi.page.ts, tested by
 * test/http/openapi.test.ts.
 */

/** The parts of an OpenAPI 3.1 document the reference page shows; plain data, as generated. */
export interface OpenApiDocument {
  info: { title: string; version: string; description?: string };
  servers?: { url: string }[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, OpenApiOperation | unknown>>;
  components?: { schemas?: Record<string, JsonSchema>; securitySchemes?: Record<string, { type: string; scheme?: string; name?: string; in?: string; description?: string }> };
}

export interface OpenApiOperation {
  summary?: string;
  description?: string;
  tags?: string[];
  operationId?: string;
  deprecated?: boolean;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema }[];
  requestBody?: { required?: boolean; description?: string; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: JsonSchema }> }>;
}

/** JSON Schema as TypeBox produces it; only the keywords the page describes. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  nullable?: boolean;
}

/** Nested objects are listed as `parent.child` rows down to this depth, then summarised. */
export const MAX_DEPTH = 3;

/** "string", "array of string", "integer or null", "one of: code, token". */
export function describeType(schema: JsonSchema | undefined, resolve: (s: JsonSchema | undefined) => JsonSchema | undefined = (s) => s, depth = 0): string {
  if (!schema) return 'any';
  if (depth > MAX_DEPTH) return '…';
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return `one of: ${schema.enum.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    const named = alternatives.map((s) => describeType(resolve(s), resolve, depth + 1));
    return [...new Set(named)].join(' or ');
  }
  if (schema.allOf) return schema.allOf.map((s) => describeType(resolve(s), resolve, depth + 1)).join(' and ');
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const described = types.map((t) => {
    if (t === 'array') return `array of ${describeType(resolve(schema.items), resolve, depth + 1)}`;
    if (t === 'string' && schema.format) return `string (${schema.format})`;
    return t;
  });
  if (schema.nullable) described.push('null');
  if (described.length === 0) return schema.properties ? 'object' : 'any';
  return described.join(' or ');
}

/** Follows local `#/components/schemas/…` references; anything else is shown as it is. */
export function resolver(doc: OpenApiDocument): (s: JsonSchema | undefined) => JsonSchema | undefined {
  return (schema) => {
    let current = schema;
    for (let hops = 0; current?.$ref && hops < 10; hops += 1) {
      const match = /^#\/components\/schemas\/(.+)$/.exec(current.$ref);
      const target = match ? doc.components?.schemas?.[decodeURIComponent(match[1] as string)] : undefined;
      if (!target) return current;
      current = target;
    }
    return current;
  };
}
