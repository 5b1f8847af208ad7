// Serves what a real Unleash answered a migration (recorded by scripts/migrate/record.mjs),
// so the migration tests run in CI without the oracle. A request is matched by method, path
// (with query), body and Authorization; the same request asked again gets the next recorded
// answer, and the last one after that. Anything never recorded is a 404 that names itself,
// so a test fails loudly instead of meeting an invented answer.
import { readFileSync } from 'node:fs';
import http from 'node:http';

const key = (method, path, authorization, body) =>
  `${method} ${path} ${authorization ?? ''} ${body === null || body === undefined ? '' : JSON.stringify(body)}`;

export async function startReplay(file) {
  const recording = JSON.parse(readFileSync(file, 'utf8'));
  const answers = new Map();
  for (const exchange of recording.exchanges) {
    const k = key(exchange.method, exchange.path, exchange.authorization, exchange.body);
    const list = answers.get(k) ?? [];
    list.push(exchange);
    answers.set(k, list);
  }
  const served = new Map();
  const unmatched = [];
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      const k = key(request.method, request.url, request.headers.authorization, body);
      const list = answers.get(k);
      if (!list) {
        unmatched.push(`${request.method} ${request.url}`);
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ name: 'NotRecorded', message: `not recorded: ${request.method} ${request.url}` }));
        return;
      }
      const index = served.get(k) ?? 0;
      served.set(k, index + 1);
      const exchange = list[Math.min(index, list.length - 1)];
      response.writeHead(exchange.status, {
        ...(exchange.contentType ? { 'content-type': exchange.contentType } : {}),
        ...(exchange.location ? { location: exchange.location } : {}),
      });
      response.end(exchange.text);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    base: `http://127.0.0.1:${port}`,
    recording,
    unmatched,
    /** Serve every request from its first recorded answer again (a fresh run of the same migration). */
    rewind: () => served.clear(),
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}
