export interface SourceExchange {
  method: string;
  path: string;
  authorization: string;
  body: unknown;
  status: number;
  contentType: string | null;
  location: string | null;
  text: string;
}
/** Runs `npm run migrate` with these arguments; resolves to its exit code. */
export function main(
  argv: string[],
  log?: (line: string) => void,
  hooks?: { onSourceExchange?: (exchange: SourceExchange) => void },
): Promise<number>;
