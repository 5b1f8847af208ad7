export const README_ADMIN_TOKEN: string;
export interface ReadmeBlock {
  lang: 'sh' | 'js';
  line: number;
  code: string;
}
export function extractBlocks(markdown: string): ReadmeBlock[];
export function readmeBlocks(readme?: string): ReadmeBlock[];
export function checkReadme(options: { port: number; readme?: string }): Promise<{
  blocks: number;
  results: { line: number; lang: string; ok: boolean; output: string }[];
}>;
