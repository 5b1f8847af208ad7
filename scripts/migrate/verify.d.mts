export function normalClientFeatures(answer: unknown): { name: string; enabled: boolean }[];
