export const BENCH_ADMIN_TOKEN: string;
export function startWorker(options: {
  port: number;
  token?: string;
  log?: boolean;
  vars?: Record<string, string>;
  testScheduled?: boolean;
}): Promise<{
  base: string;
  token: string;
  persistTo: string;
  pid: number;
  stop(): Promise<void>;
}>;
