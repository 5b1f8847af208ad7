/**
 * `GET /docs/openapi.json` (where Unleash serves its document) and `GET /docs/openapi`, a small
 * self-contained page listing the operations: no scripts, no CDN, works offline. Both are
 * public, as in Unleash. The document is built once per isolate.
 */
import { JSON_HEADERS } from '../http/errors';
import type { Route } from '../http/route';
import { buildOpenApiDocument, type JsonObject } from './document';

let cached: { routeCount: number; document: JsonObject; json: string } | undefined;

function documentFor(routes: readonly Route[]) {
  if (cached?.routeCount !== routes.length) {
    const document = buildOpenApiDocument(routes);
    cached = { routeCount: routes.length, document, json: JSON.stringify(document) };
  }
  return cached;
}

export function openApiJson(routes: readonly Route[]): Response {
  return new Response(documentFor(routes).json, { headers: JSON_HEADERS });
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  parameters?: { name: string; in: string; required?: boolean }[];
  responses?: Record<string, { description?: string }>;
  'x-permission'?: string | string[];
  security?: unknown[];
}

function renderOperation(method: string, path: string, op: Operation): string {
  const permission = op['x-permission'];
  const who =
    op.security?.length === 0 ? 'public' : Array.isArray(permission) ? `one of ${permission.join(', ')}` : (permission ?? 'an API key');
  const parameters = (op.parameters ?? [])
    .map((p) => `<code>${escapeHtml(p.name)}</code> (${p.in}${p.required ? ', required' : ''})`)
    .join(', ');
  const responses = Object.entries(op.responses ?? {})
    .sort(([a], [b]) => a.replace('XX', '00').localeCompare(b.replace('XX', '00')))
    .map(([status, answer]) => `<li><b>${escapeHtml(status)}</b> ${escapeHtml(answer.description ?? '')}</li>`)
    .join('');
  const body = op.requestBody
    ? `<details><summary>Request body schema</summary><pre>${escapeHtml(JSON.stringify(op.requestBody.content['application/json']?.schema, null, 2))}</pre></details>`
    : '';
  return `<section class="op"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p>${escapeHtml(op.summary ?? '')}${op.description ? ` — ${escapeHtml(op.description)}` : ''}</p>
<p class="meta">Who: ${escapeHtml(who)}${parameters ? ` · Parameters: ${parameters}` : ''}</p>
<ul>${responses}</ul>${body}</section>`;
}

export function openApiPage(routes: readonly Route[]): Response {
  const { document } = documentFor(routes);
  const paths = document.paths as Record<string, Record<string, Operation>>;
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      const tag = op.tags?.[0] ?? '';
      byTag.set(tag, [...(byTag.get(tag) ?? []), renderOperation(method, path, op)]);
    }
  }
  const sections = [...byTag.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([tag, ops]) => `<h2 id="${escapeHtml(tag)}">${escapeHtml(tag)}</h2>${ops.join('\n')}`)
    .join('\n');
  const toc = [...byTag.keys()]
    .sort()
    .map((tag) => `<a href="#${escapeHtml(tag)}">${escapeHtml(tag)}</a>`)
    .join(' · ');
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Unleash on Cloudflare Workers — API</title>
<style>body{font:15px/1.45 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
h2{border-bottom:1px solid #ddd;margin-top:2.5rem}.op{border:1px solid #e3e3e3;border-radius:6px;padding:.2rem 1rem;margin:.8rem 0}
.op h3{font-size:1rem;margin:.6rem 0}.m{display:inline-block;min-width:4.5em;text-align:center;border-radius:4px;color:#fff;padding:0 .3em;font-size:.85em}
.get{background:#2b7bb9}.post{background:#3a9a4a}.put{background:#c78a1a}.patch{background:#8a5cc7}.delete{background:#c0392b}.options{background:#777}
.meta{color:#555;font-size:.9em}pre{background:#f6f6f6;padding:.6rem;overflow:auto;font-size:.8em}ul{margin:.3rem 0 .6rem}</style></head>
<body><h1>Unleash on Cloudflare Workers — API</h1>
<p>OpenAPI ${escapeHtml(String(document.openapi))} document: <a href="/docs/openapi.json">/docs/openapi.json</a>. Send an API key in the <code>Authorization</code> header.</p>
<nav>${toc}</nav>
${sections}
</body></html>`;
  return new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } });
}
