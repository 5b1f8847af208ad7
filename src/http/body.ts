import { ApiError, unsupportedContentType, validationError } from './errors';

/** Unleash's default request-body limit; import raises it for itself. */
export const DEFAULT_MAX_BODY_BYTES = 100_000;

const JSON_MEDIA_TYPES = ['application/json'] as const;

function isJsonContentType(contentType: string | null, mediaTypes: readonly string[]): boolean {
  if (!contentType) return false;
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return mediaTypes.includes(mediaType);
}

/** 415 unless the request says its body is JSON (for handlers that read the body themselves). */
export function requireJsonContentType(request: Request, mediaTypes: readonly string[] = JSON_MEDIA_TYPES): void {
  const contentType = request.headers.get('content-type');
  if (!isJsonContentType(contentType, mediaTypes)) throw unsupportedContentType(contentType);
}

export function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, 'PayloadTooLargeError', `The request body is larger than the ${maxBytes} bytes this endpoint accepts.`);
}

/**
 * The body's bytes, read chunk by chunk and abandoned (the stream cancelled, 413) as soon as
 * they pass `maxBytes`: a body without Content-Length (chunked) or with a false one is never
 * held in full.
 */
async function readAtMost(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel('request body over the limit').catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * Reads a JSON request body: 415 unless the content type is JSON, 413 over `maxBytes`,
 * 400 when the text is not JSON. Call it after authentication, so that a caller without
 * access learns nothing about the body rules.
 */
export async function readJsonBody(
  request: Request,
  maxBytes = DEFAULT_MAX_BODY_BYTES,
  /** The JSON media types accepted (SCIM's `application/scim+json` besides plain JSON). */
  mediaTypes: readonly string[] = JSON_MEDIA_TYPES,
): Promise<unknown> {
  requireJsonContentType(request, mediaTypes);

  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const bytes = await readAtMost(request, maxBytes);

  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw validationError([{ message: 'The request body is not valid JSON: it is not valid UTF-8 text.' }]);
  }
  if (text.trim() === '') {
    throw validationError([{ message: 'The request body is not valid JSON: it is empty.' }]);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'parse error';
    throw validationError([{ message: `The request body is not valid JSON: ${reason}` }]);
  }
}
