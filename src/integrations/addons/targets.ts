/**
 * Where an integration may send: `http(s)` only, and never to this machine or a private
 * network unless INTEGRATIONS_ALLOW_PRIVATE_TARGETS is `true` (for local development). The
 * host is judged as written in the URL, after the URL parser normalised it: `0x7f.1`,
 * `2130706433`, `0177.0.0.1` and `127.1` are all `127.0.0.1`, `[::ffff:127.0.0.1]` is
 * `[::ffff:7f00:1]`. Names are not resolved (no DNS lookup): see docs/integrations.md for why.
 */

function ipv4(host: string): number[] | null {
  const parts = host.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^[0-9]{1,3}$/.test(part))) return null;
  const bytes = parts.map(Number);
  return bytes.every((byte) => byte <= 255) ? bytes : null;
}

function privateIpv4([a, b]: number[]): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b! >= 64 && b! <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b! >= 16 && b! <= 31) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    a! >= 224
  );
}

function privateIpv6(host: string): boolean {
  const address = host.slice(1, -1).toLowerCase();
  if (address === '::' || address === '::1') return true;
  const mapped = /^::ffff:([0-9.]+)$/.exec(address);
  if (mapped) {
    const v4 = ipv4(mapped[1]!);
    return v4 === null || privateIpv4(v4);
  }
  // ::ffff:7f00:1 is how the URL parser writes a mapped IPv4 address (and ::ffff:0:… a translated one).
  if (address.startsWith('::ffff:')) return true;
  // IPv4-compatible (::7f00:1, deprecated) and NAT64 (64:ff9b::…) addresses embed an IPv4 address.
  if (/^::[0-9a-f]{1,4}(:[0-9a-f]{1,4})?$/.test(address) || address.startsWith('64:ff9b:')) return true;
  // Unique local (fc00::/7), link-local (fe80::/10), site-local (fec0::/10, deprecated), multicast (ff00::/8).
  return /^f[cd]/.test(address) || /^fe[89a-f]/.test(address) || /^ff/.test(address);
}

/** Why `url` may not be called, or null when it may. */
export function refusedTarget(url: string, allowPrivate: boolean): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'The URL is not valid.';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `Only http and https URLs are called, not ${parsed.protocol}`;
  if (allowPrivate) return null;
  // `localhost.` is `localhost`: a trailing dot only marks the name as fully qualified.
  const host = parsed.hostname.toLowerCase().replace(/\.+$/, '');
  const v4 = ipv4(host);
  const local =
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host.endsWith('.local') ||
    host.endsWith('.internal') ||
    (v4 !== null && privateIpv4(v4)) ||
    (host.startsWith('[') && privateIpv6(host));
  return local ? `Refused to call ${host}: loopback and private addresses are not allowed (INTEGRATIONS_ALLOW_PRIVATE_TARGETS).` : null;
}
