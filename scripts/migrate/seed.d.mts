export function personalToken(url: string, username: string, password: string, prefix?: string): Promise<string>;
export function seed(options: {
  url: string;
  token: string;
  importToken?: string;
  prefix?: string;
  flags?: number;
  log?: (line: string) => void;
  withUsers?: boolean;
  archive?: boolean;
}): Promise<{ tokens: { secret: string; tokenName: string; type: string; environment: string }[]; environments: string[] }>;
