export interface Replay {
  base: string;
  recording: { source: string; url: string; exchanges: { path: string; authorization: string; status: number; text: string }[] };
  unmatched: string[];
  rewind(): void;
  stop(): Promise<void>;
}
export function startReplay(file: string): Promise<Replay>;
