// The admin UI's browser tests drive a system Chromium (playwright-core downloads none). `npm
// test` runs this right before them, after the Worker and Node tests. When the browser is
// missing it installs Debian's package if it can (root with apt-get, as on CI and the project's
// dev machines); when it cannot (not root, no apt-get, the lock held, no network, macOS) it
// fails with one line saying what to do, never with apt's output or a stack trace.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const configured = process.env.CHROMIUM_PATH;
const browser = configured ?? '/usr/bin/chromium';
const HOW = 'install Chromium (Debian/Ubuntu: apt-get install chromium) or set CHROMIUM_PATH to a Chromium or Chrome binary';

function fail(reason) {
  console.error(`Browser tests need ${browser}, which ${reason}: ${HOW}.`);
  process.exit(1);
}

if (!existsSync(browser)) {
  // A path someone chose is theirs to fix; only the default is installed here.
  if (configured !== undefined) fail('does not exist (CHROMIUM_PATH)');
  const canInstall = process.platform === 'linux' && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');
  if (!canInstall) fail('is missing and cannot be installed here (needs root and apt-get)');
  console.log(`${browser} is missing: installing Debian's chromium for the browser tests`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update'], { stdio: 'pipe', env });
    execFileSync('apt-get', ['install', '-y', 'chromium'], { stdio: 'pipe', env });
  } catch (error) {
    const output = `${error.stderr ?? ''}`.trim().split('\n').filter(Boolean);
    fail(`is missing, and apt-get failed (${output.at(-1) ?? error.message})`);
  }
  if (!existsSync(browser)) fail('is still missing after apt-get install chromium');
}
