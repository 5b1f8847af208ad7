export const BENCH_ADMIN_TOKEN: string;
export function checkoutOf(commit: string): string;
export function startPair(options: {
  root?: string;
  ports: [number, number];
  inspectorPorts: [number, number];
  token?: string;
  vars?: Record<string, string>;
  log?: boolean;
  probe?: boolean;
}): Promise<{ a: string; b: string; token: string; stop(): Promise<void> }>;
export function d1Calls(base: string): Promise<number>;
export interface StreamEvent {
  at: number;
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
}
export function openStream(
  base: string,
  key: string,
  onEvent: (event: StreamEvent) => void,
): Promise<{ connected: StreamEvent; close(): void }>;
