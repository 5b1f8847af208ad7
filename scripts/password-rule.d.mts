export function passwordProblems(password: string): string[];
