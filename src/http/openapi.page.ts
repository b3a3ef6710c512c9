import { STATUS_CODES } from 'node:http';
import { html, type SafeHtml } from '../web/html.js';
import { layout, type Viewer } from '../web/layout.js';
import { describeType, MAX_DEPTH, resolver, type JsonSchema, type OpenApiDocument, type OpenApiOperation } from './openapi-document.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options', 'head'] as const;
const UNTAGGED = 'Other';

interface Operation {
  method: string;
  path: string;
  op: OpenApiOperation;
}

/**
 * One anchor per operation, stable across renders: `#get-api-v1-users-me`. A path parameter reads
 * `by-…` (`/webhooks/{id}/{token}` → `…-webhooks-by-id-by-token`), so that it never meets a literal
 * segment of the same name (`/webhooks/{id}/token` → `…-webhooks-by-id-token`).
 */
export function operationAnchor(method: string, path: string): string {
  return `${method}-${path.replace(/\{([^}]*)\}/g, 'by-$1')}`.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

/** A body that answers of 400 and more share, documented once (ErrorBodies). */
interface ErrorBody {
  title: string;
  anchor: string;
  schema: JsonSchema;
}

/**
 * The error bodies of every operation, each once: keyed by the schema's description (`An API
 * error (docs/errors.md)`), else by its field names, the fullest schema standing for its key (one
 * route's API error lists `errors`, another's not; one describes its fields, another not). Each
 * operation's error rows then link here instead of repeating the same table, which made up most of
 * the page (89 error responses for 30 operations).
 */
class ErrorBodies {
  private readonly byKey = new Map<string, ErrorBody>();
  constructor(private readonly resolve: (s: JsonSchema | undefined) => JsonSchema | undefined) {}

  private key(schema: JsonSchema): string {
    return schema.description ?? Object.keys(schema.properties ?? {}).sort().join(', ');
  }

  add(schema: JsonSchema): void {
    const key = this.key(schema);
    const known = this.byKey.get(key);
    // The fullest stands for its key: most fields, then most fields described.
    const size = (s: JsonSchema) => {
      const fields = Object.values(s.properties ?? {}).map((f) => this.resolve(f));
      return fields.length * 100 + fields.filter((f) => f?.description !== undefined).length;
    };
    if (known === undefined) this.byKey.set(key, { title: key, anchor: `error-${operationAnchor('body', key)}`, schema });
    else if (size(schema) > size(known.schema)) known.schema = schema;
  }

  /** An answer of 400 or more with an object body. */
  private static isError(status: string, schema: JsonSchema | undefined): schema is JsonSchema {
    return Number(status) >= 400 && schema?.properties !== undefined;
  }

  /** The error body a response of `status` carries, when it is one documented here. */
  of(status: string, schema: JsonSchema | undefined): ErrorBody | undefined {
    return ErrorBodies.isError(status, schema) ? this.byKey.get(this.key(schema)) : undefined;
  }

  static collect(groups: [string, Operation[]][], resolve: (s: JsonSchema | undefined) => JsonSchema | undefined): ErrorBodies {
    const bodies = new ErrorBodies(resolve);
    for (const [, ops] of groups) {
      for (const { op } of ops) {
        for (const [status, r] of Object.entries(op.responses ?? {})) {
          const schema = resolve(Object.values(r.content ?? {})[0]?.schema);
          if (ErrorBodies.isError(status, schema)) bodies.add(schema);
        }
      }
    }
    return bodies;
  }

  section(): SafeHtml | string {
    if (this.byKey.size === 0) return '';
    return html`<section class="card" aria-labelledby="error-bodies"><h2 id="error-bodies">Error bodies</h2>
      <p class="muted">An answer of 400 or more carries one of these. Each operation lists its error statuses and links here.</p>
      ${[...this.byKey.values()].map((b) => html`<h3 id="${b.anchor}">${b.title}</h3>${fieldsTable(b.schema, this.resolve)}`)}
    </section>`;
  }
}

/**
 * Pointers into this repository that route schemas carry for its developers (`SPEC §2.5:`,
 * `DESIGN §1:`, `Issue #4`, `(docs/errors.md)`, `(docs/webhooks.md "GitHub secret")`): the
 * reference's readers have neither the repository nor its docs, so the page leaves them out.
 * Public standards (RFC 6749 §5.2, OpenID Connect Core §5.3) stay.
 */
const INTERNAL_REFERENCES: ReadonlyArray<[RegExp, string]> = [
  [/\s*\((?:SPEC|DESIGN) §[^)]*\)/g, ''],
  [/\s*\(docs\/[\w-]+\.md(?: "[^"]*")?\)/g, ''],
  [/;\s*docs\/[\w-]+\.md(?: "[^"]*")?(?=\))/g, ''],
  // `avatarUrl`: "SPEC §2.9 name of avatar_url", the specification's name for the same field.
  [/^SPEC §[\d.]*\d name of /, 'Another name of '],
  [/(^|[.;]\s*)(?:SPEC|DESIGN) §[\d.–-]*\d[:,]?\s*/g, '$1'],
  [/(^|[.;]\s*)Issue #\d+:?\s*/gi, '$1'],
];

/** `text` without repository-internal references, its first letter kept a capital. */
export function publicText(text: string): string {
  let shown = text;
  for (const [pattern, replacement] of INTERNAL_REFERENCES) shown = shown.replace(pattern, replacement);
  shown = shown.trim();
  // A sentence that began with a reference begins with what followed it.
  return /^(?:SPEC|DESIGN) §|^Issue #/i.test(text) ? shown.charAt(0).toUpperCase() + shown.slice(1) : shown;
}

/** A copy of the document with every summary and description as publicText shows it. */
function withPublicTexts<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withPublicTexts) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key, (key === 'description' || key === 'summary') && typeof v === 'string' ? publicText(v) : withPublicTexts(v)]),
  ) as T;
}

/** The API reference at /api/docs: operations grouped by tag, each with its parameters, body and responses. */
export function renderApiReference(document: OpenApiDocument, options: { serviceName: string; documentUrl: string; viewer?: Viewer; csrfToken?: string }): string {
  const doc = withPublicTexts(document);
  const resolve = resolver(doc);
  const groups = groupByTag(doc);
  const errorBodies = ErrorBodies.collect(groups, resolve);
  const tagInfo = new Map((doc.tags ?? []).map((t) => [t.name, t.description]));
  const base = doc.servers?.[0]?.url;

  const body = html`<h1>${doc.info.title} reference</h1>
    ${doc.info.description ? html`<p>${doc.info.description}</p>` : ''}
    <p class="muted small">OpenAPI 3.1 · version ${doc.info.version}${base ? html` · base URL <code>${base}</code>` : ''} ·
      machine-readable: <a href="${options.documentUrl}">${options.documentUrl}</a></p>
    ${securitySection(doc)}
    ${errorBodies.section()}
    ${
      groups.length === 0
        ? html`<div class="card"><p>No API operations are registered yet.</p></div>`
        : html`<nav class="card" aria-label="Operations"><h2>Contents</h2>
            ${groups.map(
              ([tag, ops]) => html`<p><strong>${tag}</strong></p>
                <ul class="plain">${ops.map(
                  (o) => html`<li><a href="#${operationAnchor(o.method, o.path)}"><span class="badge">${o.method.toUpperCase()}</span><code>${o.path}</code></a>
                    ${o.op.summary ? html` <span class="muted small">${o.op.summary}</span>` : ''}</li>`,
                )}</ul>`,
            )}</nav>
          ${groups.map(
            ([tag, ops]) => html`<section aria-labelledby="tag-${operationAnchor('tag', tag)}">
              <h2 id="tag-${operationAnchor('tag', tag)}">${tag}</h2>
              ${tagInfo.get(tag) ? html`<p class="muted">${tagInfo.get(tag)}</p>` : ''}
              ${ops.map((o) => operationCard(o, resolve, errorBodies))}
            </section>`,
          )}`
    }`;

  return layout({ title: 'API reference', serviceName: options.serviceName, viewer: options.viewer, csrfToken: options.csrfToken ?? '', body });
}

function groupByTag(doc: OpenApiDocument): [string, Operation[]][] {
  const groups = new Map<string, Operation[]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method] as OpenApiOperation | undefined;
      if (!op) continue;
      for (const tag of op.tags?.length ? op.tags : [UNTAGGED]) {
        const list = groups.get(tag) ?? [];
        list.push({ method, path, op });
        groups.set(tag, list);
      }
    }
  }
  // Declared tags first, in their declared order; then the rest alphabetically; "Other" last.
  const declared = (doc.tags ?? []).map((t) => t.name);
  const rank = (tag: string) => (tag === UNTAGGED ? Number.MAX_SAFE_INTEGER : declared.includes(tag) ? declared.indexOf(tag) : declared.length);
  return [...groups].sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
}

function securitySection(doc: OpenApiDocument): SafeHtml | string {
  const schemes = Object.entries(doc.components?.securitySchemes ?? {});
  if (schemes.length === 0) return '';
  return html`<div class="card"><h2>Authentication</h2><table>
    <thead><tr><th>Scheme</th><th>How to send it</th></tr></thead>
    <tbody>${schemes.map(
      ([name, s]) => html`<tr><td><code>${name}</code></td><td>${
        s.type === 'http' ? html`<code>Authorization: ${capitalise(s.scheme ?? '')} &lt;token&gt;</code>` : s.type === 'apiKey' ? html`<code>${s.name ?? ''}</code> ${s.in ?? ''}` : s.type
      }${s.description ? html` <span class="muted small">— ${s.description}</span>` : ''}</td></tr>`,
    )}</tbody></table></div>`;
}

function operationCard(o: Operation, resolve: (s: JsonSchema | undefined) => JsonSchema | undefined, errorBodies: ErrorBodies): SafeHtml {
  const { op } = o;
  const security = (op.security ?? []).flatMap((requirement) =>
    Object.entries(requirement).map(([name, scopes]) => (scopes.length ? `${name} (${scopes.join(' ')})` : name)),
  );
  const parameters = op.parameters ?? [];
  const content = Object.entries(op.requestBody?.content ?? {});
  return html`<article class="card" id="${operationAnchor(o.method, o.path)}">
    <h3><span class="badge">${o.method.toUpperCase()}</span><code>${o.path}</code>${op.deprecated ? html` <span class="pill">deprecated</span>` : ''}</h3>
    ${op.summary ? html`<p><strong>${op.summary}</strong></p>` : ''}
    ${op.description ? html`<p>${op.description}</p>` : ''}
    ${security.length ? html`<p class="small">Authentication: ${security.map((s) => html`<span class="pill">${s}</span>`)}</p>` : ''}
    ${
      parameters.length
        ? html`<h4>Parameters</h4><table>
            <thead><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr></thead>
            <tbody>${parameters.map(
              (p) => html`<tr><td><code>${p.name}</code>${p.required ? html` <span class="muted small">required</span>` : ''}</td>
                <td>${p.in}</td><td>${describeType(resolve(p.schema), resolve)}</td><td>${p.description ?? resolve(p.schema)?.description ?? ''}${constraints(resolve(p.schema))}</td></tr>`,
            )}</tbody></table>`
        : ''
    }
    ${
      content.length
        ? html`<h4>Request body${op.requestBody?.required ? '' : html` <span class="muted small">(optional)</span>`}</h4>
            <p class="small muted">${content.map(([type], i) => html`${i ? ', ' : ''}<code>${type}</code>`)}</p>
            ${fieldsTable(resolve(content[0]?.[1].schema), resolve)}`
        : ''
    }
    <h4>Responses</h4>
    <table class="responses"><thead><tr><th>Status</th><th>Description</th></tr></thead>
    <tbody>${Object.entries(op.responses ?? {}).map(([status, r]) => {
      const schema = resolve(Object.values(r.content ?? {})[0]?.schema);
      const shared = errorBodies.of(status, schema);
      if (shared !== undefined) {
        // @fastify/swagger gives a response the schema's description (or "Default Response") unless
        // the route names one; the status's own name reads better beside the body's title.
        const named = r.description && r.description !== 'Default Response' && r.description !== schema?.description ? r.description : (STATUS_CODES[Number(status)] ?? '');
        return html`<tr><td><code>${status}</code></td><td>${named} · <a href="#${shared.anchor}">${shared.title}</a></td></tr>`;
      }
      // @fastify/swagger says "Default Response" unless the route names one; the schema's own description reads better.
      const description = r.description && r.description !== 'Default Response' ? r.description : (schema?.description ?? STATUS_CODES[Number(status)] ?? r.description ?? '');
      const type = schema ? describeType(schema, resolve) : '';
      const fields = fieldsTable(schema, resolve);
      return html`<tr><td><code>${status}</code></td><td>${description}${type && !(type === 'object' && fields) ? html`<div class="small">${type}</div>` : ''}${fields}</td></tr>`;
    })}</tbody></table>
  </article>`;
}

interface FieldRow {
  name: string;
  schema: JsonSchema;
  required: boolean;
}

/**
 * The object a value holds when it holds one: the schema itself, or its object alternative
 * (`object or null`), so a nullable object's fields are listed like any other's.
 */
function objectOf(schema: JsonSchema | undefined, resolve: (s: JsonSchema | undefined) => JsonSchema | undefined): JsonSchema | undefined {
  if (schema?.properties) return schema;
  return (schema?.anyOf ?? schema?.oneOf)?.map((s) => resolve(s)).find((s) => s?.properties !== undefined);
}

/**
 * An object's properties as rows, nested objects (and arrays of objects, nullable ones too)
 * flattened to `a.b` / `a[].b`; an array of objects (a list answer) lists its items' as `[].a`.
 * Issue #36 §5: every answer with fields shows them.
 */
function fieldRows(schema: JsonSchema | undefined, resolve: (s: JsonSchema | undefined) => JsonSchema | undefined, prefix = '', depth = 0): FieldRow[] {
  if (depth >= MAX_DEPTH) return [];
  const object = objectOf(schema, resolve);
  if (!object?.properties) {
    const items = objectOf(resolve(schema?.items), resolve);
    return items && prefix === '' && depth === 0 ? fieldRows(items, resolve, '[].', depth) : [];
  }
  const required = new Set(object.required ?? []);
  const rows: FieldRow[] = [];
  for (const [name, raw] of Object.entries(object.properties)) {
    const property = resolve(raw) ?? {};
    const full = `${prefix}${name}`;
    rows.push({ name: full, schema: property, required: required.has(name) });
    const nested = objectOf(property, resolve);
    if (nested) rows.push(...fieldRows(nested, resolve, `${full}.`, depth + 1));
    const items = objectOf(resolve(property.items), resolve);
    if (items) rows.push(...fieldRows(items, resolve, `${full}[].`, depth + 1));
  }
  return rows;
}

function fieldsTable(schema: JsonSchema | undefined, resolve: (s: JsonSchema | undefined) => JsonSchema | undefined): SafeHtml | string {
  const rows = fieldRows(schema, resolve);
  if (rows.length === 0) return '';
  return html`<table class="small"><thead><tr><th>Field</th><th>Type</th><th>Description</th></tr></thead>
    <tbody>${rows.map(
      (r) => html`<tr><td><code>${r.name}</code>${r.required ? html` <span class="muted">required</span>` : ''}</td>
        <td>${describeType(r.schema, resolve)}</td><td>${r.schema.description ?? ''}${constraints(r.schema)}</td></tr>`,
    )}</tbody></table>`;
}

function constraints(schema: JsonSchema | undefined): SafeHtml | string {
  if (!schema) return '';
  const parts: string[] = [];
  if (schema.minLength !== undefined && schema.maxLength !== undefined) parts.push(`${schema.minLength}–${schema.maxLength} characters`);
  else if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  else if (schema.minLength !== undefined && schema.minLength > 0) parts.push(`at least ${schema.minLength} characters`);
  if (schema.minimum !== undefined) parts.push(`minimum ${schema.minimum}`);
  if (schema.maximum !== undefined) parts.push(`maximum ${schema.maximum}`);
  if (schema.minItems !== undefined) parts.push(`at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined) parts.push(`at most ${schema.maxItems} items`);
  if (schema.pattern !== undefined) parts.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  if (parts.length === 0) return '';
  return html` <span class="muted small">(${parts.join('; ')})</span>`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
