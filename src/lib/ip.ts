/**
 * IPv4/IPv6 addresses and CIDR ranges: for the `remoteAddress` strategy and the IN_CIDR
 * operator, and the /64 an IPv6 client counts as in rate limits. Addresses become BigInts so
 * that one prefix test serves both families.
 */
export interface IpRange {
  family: 4 | 6;
  /** The address bits, 32 or 128 of them. */
  bits: bigint;
  prefix: number;
}

const IPV4_PART = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

function parseIpv4Bits(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let bits = 0n;
  for (const part of parts) {
    if (!IPV4_PART.test(part)) return undefined;
    bits = (bits << 8n) | BigInt(Number(part));
  }
  return bits;
}

function parseHextets(text: string): number[] | undefined {
  if (text === '') return [];
  const groups = text.split(':');
  const out: number[] = [];
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i]!;
    if (i === groups.length - 1 && group.includes('.')) {
      const v4 = parseIpv4Bits(group);
      if (v4 === undefined) return undefined;
      out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      continue;
    }
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
    out.push(parseInt(group, 16));
  }
  return out;
}

function parseIpv6Bits(input: string): bigint | undefined {
  if (input.length > 64) return undefined;
  const text = input.includes('%') ? input.slice(0, input.indexOf('%')) : input;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = parseHextets(halves[0]!);
  const tail = halves.length === 2 ? parseHextets(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const hextets = [...head, ...new Array<number>(missing).fill(0), ...tail];
  return hextets.reduce((bits, hextet) => (bits << 16n) | BigInt(hextet), 0n);
}

/** An address or `address/prefix`; undefined when it is neither IPv4 nor IPv6. */
export function parseIpRange(input: string): IpRange | undefined {
  const text = input.trim();
  const slash = text.indexOf('/');
  const address = slash >= 0 ? text.slice(0, slash) : text;
  const prefixText = slash >= 0 ? text.slice(slash + 1) : undefined;
  const v4 = parseIpv4Bits(address);
  const family: 4 | 6 | undefined = v4 !== undefined ? 4 : address.includes(':') ? 6 : undefined;
  if (family === undefined) return undefined;
  const bits = family === 4 ? v4 : parseIpv6Bits(address);
  if (bits === undefined) return undefined;
  const width = family === 4 ? 32 : 128;
  let prefix = width;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText)) return undefined;
    prefix = Number(prefixText);
    if (prefix > width) return undefined;
  }
  return { family, bits, prefix };
}

/**
 * The /64 an IPv6 address lies in, as `a:b:c:d::/64` (lower-case hex, no leading zeros);
 * undefined when `text` is not an IPv6 address.
 */
export function ipv6Slash64(text: string): string | undefined {
  const bits = text.includes(':') ? parseIpv6Bits(text) : undefined;
  if (bits === undefined) return undefined;
  return `${hextetAt(bits, 112n)}:${hextetAt(bits, 96n)}:${hextetAt(bits, 80n)}:${hextetAt(bits, 64n)}::/64`;
}

function hextetAt(bits: bigint, shift: bigint): string {
  return ((bits >> shift) & 0xffffn).toString(16);
}

/** Whether `address` (a single address) lies within `range`. */
export function rangeContains(range: IpRange, address: IpRange): boolean {
  if (range.family !== address.family) return false;
  const width = BigInt(range.family === 4 ? 32 : 128);
  const shift = width - BigInt(range.prefix);
  return range.bits >> shift === address.bits >> shift;
}
