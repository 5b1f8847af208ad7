// The admin UI's browser tests drive a system Chromium (playwright-core downloads none). When it
// is missing, `npm test` installs Debian's package if it can (root with apt-get, as on CI and
// the project's dev machines); elsewhere it says what to install and how to point at it.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const browser = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(browser)) {
  const canInstall = process.platform === 'linux' && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');
  if (!canInstall) {
    console.error(
      `${browser} is missing: install Chromium (Debian/Ubuntu: apt-get install chromium) or set CHROMIUM_PATH to a Chromium or Chrome binary.`,
    );
    process.exit(1);
  }
  console.log(`${browser} is missing: installing Debian's chromium for the browser tests`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', 'chromium'], { stdio: 'inherit', env });
}
