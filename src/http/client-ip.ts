/**
 * Where an SDK call came from, as Unleash records it for client instances and gives the
 * frontend API's `remoteAddress`: Cloudflare's `cf-connecting-ip`, else the first
 * `x-forwarded-for` hop (local runs), at most 64 characters.
 */
export function clientIp(request: Request): string | null {
  const direct = request.headers.get('cf-connecting-ip');
  if (direct) return direct.trim().slice(0, 64);
  const forwarded = request.headers.get('x-forwarded-for');
  if (forwarded) return forwarded.split(',')[0]!.trim().slice(0, 64) || null;
  return null;
}
