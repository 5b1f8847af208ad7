// Fetches Unleash's own admin UI (Apache-2.0) from the npm package unleash-server at a pinned
// version, checks the tarball against a pinned sha512, and unpacks only `frontend/build` into
// `ui-build/` (git-ignored), which wrangler serves as Static Assets. index.html's placeholders
// are filled here, once, the way unleash-server's `loadIndexHTML` + `rewriteHTML` fill them at
// its start (baseUriPath '', no CDN, no frontend token, ui flags unset).
//
// Run by `postinstall`, by wrangler's `[build] command` and before the tests; a second run with
// the same version in place does nothing. Only the one tarball is downloaded (`npm pack`, so the
// user's registry, proxy and cache settings apply); none of the server's dependencies.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export const UI_PACKAGE = 'unleash-server@6.10.1';
export const UI_INTEGRITY = 'sha512-WSH2tmHWHJcYMgvoF1hPu2Ou6VIdJvxjJMLXGfzx+BjTAYKYTxlK8FHdeQiumDeqFR3VG4Dx8ADny1soFsmPGg==';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const UI_DIR = path.join(root, 'ui-build');
const STAMP = path.join(UI_DIR, '.fetched');
const PREFIX = 'package/frontend/build/';

/** What unleash-server 6.10.1 writes into index.html (dist/lib/util/rewriteHTML.js). */
export function fillIndexHtml(html, { baseUriPath = '', cdnPrefix = '', uiFlags, unleashToken = '' } = {}) {
  // loadIndexHTML: encodeURI(JSON.stringify(config.ui.flags || '{}')) — with no flags set
  // that is the JSON string "{}", i.e. %22%7B%7D%22, exactly what the real server sends.
  const flags = encodeURI(JSON.stringify(uiFlags || '{}'));
  return html
    .replace(/::baseUriPath::/gi, baseUriPath)
    .replace(/::cdnPrefix::/gi, cdnPrefix)
    .replace(/::faviconPrefix::/gi, cdnPrefix)
    .replace(/::uiFlags::/gi, flags)
    .replace(/::unleashToken::/gi, unleashToken)
    .replace(/\/static/gi, `${cdnPrefix || baseUriPath}/static`);
}

function alreadyFetched() {
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === `${UI_PACKAGE} ${UI_INTEGRITY}`;
}

function download(dir) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const out = execFileSync(npm, ['pack', UI_PACKAGE, '--pack-destination', dir, '--json', '--ignore-scripts'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    shell: process.platform === 'win32',
  });
  const [packed] = JSON.parse(out);
  return readFileSync(path.join(dir, packed.filename));
}

/** The entries of a (ustar / pax) tar archive: just enough of the format for npm tarballs. */
function* tarEntries(tar) {
  let offset = 0;
  let paxPath;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) return;
    const field = (start, length) =>
      header
        .subarray(start, start + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1) || '0';
    const prefix = field(345, 155);
    const name = prefix ? `${prefix}/${field(0, 100)}` : field(0, 100);
    const body = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === 'x') {
      // pax extended header: "<len> path=<value>\n" records; a path here overrides the next entry's
      const match = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString('utf8'));
      paxPath = match?.[1];
      continue;
    }
    if (type === 'g') continue;
    yield { name: paxPath ?? name, type, body };
    paxPath = undefined;
  }
}

export function fetchUi({ quiet = false } = {}) {
  if (alreadyFetched()) return false;
  const work = mkdtempSync(path.join(tmpdir(), 'unleash-ui-'));
  try {
    const tarball = download(work);
    const integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
    if (integrity !== UI_INTEGRITY) {
      throw new Error(`${UI_PACKAGE}: tarball integrity ${integrity} does not match the pinned ${UI_INTEGRITY}`);
    }
    // Unpacked beside the target and renamed into place, so an interrupted run leaves no half folder.
    const staging = path.join(root, `.ui-build-${process.pid}`);
    rmSync(staging, { recursive: true, force: true });
    let files = 0;
    for (const entry of tarEntries(gunzipSync(tarball))) {
      if (!entry.name.startsWith(PREFIX) || (entry.type !== '0' && entry.type !== '7')) continue;
      const relative = entry.name.slice(PREFIX.length);
      const target = path.resolve(staging, relative);
      if (!target.startsWith(staging + path.sep)) throw new Error(`unsafe path in tarball: ${entry.name}`);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, relative === 'index.html' ? fillIndexHtml(entry.body.toString('utf8')) : entry.body);
      files += 1;
    }
    if (!existsSync(path.join(staging, 'index.html'))) throw new Error(`${UI_PACKAGE}: no frontend/build/index.html`);
    // Keep the stamp out of what the browser can fetch.
    writeFileSync(path.join(staging, '.assetsignore'), '.fetched\n.assetsignore\n');
    writeFileSync(path.join(staging, '.fetched'), `${UI_PACKAGE} ${UI_INTEGRITY}\n`);
    rmSync(UI_DIR, { recursive: true, force: true });
    renameSync(staging, UI_DIR);
    if (!quiet) console.log(`fetch-ui: ${UI_PACKAGE} frontend/build (${files} files) -> ui-build/`);
    return true;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fetchUi();
}
